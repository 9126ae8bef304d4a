"""Real runs on SmolLM2: position curves, calibrated profiles, every strategy on ranked lists.

Items come from the validator's probe generator (:func:`bookend.validate.probe.generate_items`):

* in-domain calibration: the ``calibration`` split, evaluation families; its per-slot accuracy is
  the measured position curve, the calibrated profile and what the oracle knows;
* transfer calibration: the ``calibration`` split, the *other* template families;
* evaluation: the ``evaluation`` split (ids never shared with calibration), evaluation families.

Each K uses its own generator seed, so the items at K = 10 and K = 9 are independent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm import tqdm

from bookend import InfluenceProfile
from bookend.validate.calibrate import SlotResult
from bookend.validate.probe import ProbeItem, generate_items
from bookend.validate.weights import TrainedModel
from placement_quality.lm import PromptScorer, calibrated_profile, slot_curve
from placement_quality.retrieval import Ranking, Scorer, rank
from placement_quality.strategies import (
    Strategy,
    bookend_strategy,
    fixed_strategies,
    oracle_strategy,
)

THEORY = "bookend-theory"
CALIBRATED = "bookend-calibrated"
RANK_ONLY = "rankonly"
#: The default theory spec for SmolLM2-135M (30 layers) among bookend's presets.
THEORY_PRESET = "smollm2-135m"
EVAL_FAMILIES = ("birthplace", "access_code")
TRANSFER_FAMILIES = ("product", "pet_colour")
#: The largest K the evaluation families support together with 20-document rank laws.
RANK_LAW_DOCS = 20
RANK_LAW_FAMILIES = ("birthplace",)


@dataclass(frozen=True)
class RealSettings:
    """Sizes of the real runs (see ``bench/quality.py`` for the defaults and ``--quick``)."""

    k_values: tuple[int, ...]
    calibration_items: int
    transfer_items: int
    eval_items: int
    rank_law_items: int
    jacobian_tokens: int
    jacobian_inputs: int
    jacobian_probes: int
    seed: int = 0

    def k_seed(self, k: int) -> int:
        """The generator seed of the items with K documents."""
        return 1000 * self.seed + k


@dataclass
class Curves:
    """Per K, the in-domain and the transfer calibration."""

    calibrated: dict[int, SlotResult] = field(default_factory=dict)
    transfer: dict[int, SlotResult] = field(default_factory=dict)


def measure_curves(model: TrainedModel, settings: RealSettings) -> Curves:
    """Accuracy by gold slot at every K, in-domain and with the other template families."""
    curves = Curves()
    for k in settings.k_values:
        seed = settings.k_seed(k)
        own = generate_items(
            settings.calibration_items, k, seed=seed, split="calibration", families=EVAL_FAMILIES
        )
        curves.calibrated[k] = slot_curve(model, own, f"curve K={k}")
        other = generate_items(
            settings.transfer_items, k, seed=seed, split="calibration", families=TRANSFER_FAMILIES
        )
        curves.transfer[k] = slot_curve(model, other, f"transfer K={k}")
    return curves


def profiles_for(curves: Curves, k: int, settings: RealSettings) -> dict[str, InfluenceProfile]:
    """The calibrated and transfer slot profiles at K, as ``bookend calibrate`` writes them."""
    common = {"weights": "smollm2", "docs": k, "seed": settings.k_seed(k), "split": "calibration"}
    return {
        CALIBRATED: calibrated_profile(
            curves.calibrated[k],
            f"smollm2 calibrated K={k}",
            families=list(EVAL_FAMILIES),
            **common,
        ),
        "bookend-transfer": calibrated_profile(
            curves.transfer[k],
            f"smollm2 calibrated K={k} (other templates)",
            families=list(TRANSFER_FAMILIES),
            **common,
        ),
    }


def gold_rank_counts(
    items: Sequence[ProbeItem], rankings: Mapping[str, Sequence[Ranking]], n_ranks: int
) -> dict[str, list[int]]:
    """Per retriever, how often the gold document came at each retrieval rank."""
    out = {}
    for name, ranked in rankings.items():
        counts = Counter(r.rank_of(item.gold) for item, r in zip(items, ranked, strict=True))
        out[name] = [counts.get(i, 0) for i in range(n_ranks)]
    return out


def rank_all(
    retrievers: Mapping[str, Scorer], items: Sequence[ProbeItem], desc: str
) -> dict[str, list[Ranking]]:
    """Every retriever's ranking of every item's documents for its question."""
    out: dict[str, list[Ranking]] = {name: [] for name in retrievers}
    for item in tqdm(items, desc=desc, unit="item"):
        for name, scorer in retrievers.items():
            out[name].append(rank(scorer, item.question, item.documents))
    return out


def rank_law_counts(
    retrievers: Mapping[str, Scorer], settings: RealSettings
) -> dict[str, list[int]]:
    """Gold-rank counts over 20 retrieved documents, for the panel's empirical rank laws."""
    items = generate_items(
        settings.rank_law_items,
        RANK_LAW_DOCS,
        seed=settings.k_seed(RANK_LAW_DOCS),
        split="evaluation",
        families=RANK_LAW_FAMILIES,
    )
    return gold_rank_counts(items, rank_all(retrievers, items, "rank laws"), RANK_LAW_DOCS)


def strategies_at(
    k: int,
    profiles: Mapping[str, InfluenceProfile],
    curve: SlotResult,
    rank_probs: Sequence[float],
) -> dict[str, Strategy]:
    """Every strategy of the real runs at K (the oracle for one retriever's rank law)."""
    out: dict[str, Strategy] = {THEORY: bookend_strategy(THEORY_PRESET)}
    out.update({name: bookend_strategy(profile) for name, profile in profiles.items()})
    # The same two profiles without the token lengths: does the length-aware objective help?
    out[f"{THEORY}-{RANK_ONLY}"] = bookend_strategy(THEORY_PRESET, rank_only=True)
    out[f"{CALIBRATED}-{RANK_ONLY}"] = bookend_strategy(profiles[CALIBRATED], rank_only=True)
    out.update(fixed_strategies())
    out["oracle"] = oracle_strategy(rank_probs, curve.accuracy)
    return out


def evaluate(
    scorer: PromptScorer,
    retrievers: Mapping[str, Scorer],
    curves: Curves,
    extra_profiles: Mapping[str, InfluenceProfile],
    settings: RealSettings,
) -> tuple[list[dict[str, Any]], dict[str, dict[str, list[int]]]]:
    """Run the model on every strategy's prompt for every evaluation item and K.

    Every retriever ranks every item (the oracle's rank law comes from these counts); the model
    runs on the ranking of the item's :func:`assigned_retriever`. Returns one row per (strategy,
    K, item) with ``retriever``, ``correct``, ``gold_rank`` and ``gold_slot``, and per K the
    gold-rank counts of each retriever.
    """
    rows: list[dict[str, Any]] = []
    counts_by_k: dict[str, dict[str, list[int]]] = {}
    for k in settings.k_values:
        items = generate_items(
            settings.eval_items,
            k,
            seed=settings.k_seed(k),
            split="evaluation",
            families=EVAL_FAMILIES,
        )
        rankings = rank_all(retrievers, items, f"retrieve K={k}")
        counts = gold_rank_counts(items, rankings, k)
        counts_by_k[str(k)] = counts
        profiles = {**profiles_for(curves, k, settings), **extra_profiles}
        per_retriever = {
            name: strategies_at(k, profiles, curves.calibrated[k], np.asarray(c) / sum(c))
            for name, c in counts.items()
        }
        total = len(items) * len(next(iter(per_retriever.values())))
        with tqdm(total=total, desc=f"evaluate K={k}", unit="run") as bar:
            for i, item in enumerate(items):
                name = assigned_retriever(i, list(retrievers))
                ranking = rankings[name][i]
                lengths = scorer.token_lengths(item)
                ranked_lengths = [lengths[d] for d in ranking.indices]
                for strategy, choose in per_retriever[name].items():
                    order = [ranking.indices[r] for r in choose(ranking.scores, ranked_lengths)]
                    rows.append(
                        {
                            "strategy": strategy,
                            "k": k,
                            "retriever": name,
                            "item": item.item_id,
                            "family": item.family,
                            "gold_rank": ranking.rank_of(item.gold),
                            "gold_slot": order.index(item.gold),
                            "correct": scorer.correct(item, order),
                        }
                    )
                    bar.update()
    return rows, counts_by_k


def assigned_retriever(index: int, names: Sequence[str]) -> str:
    """The retriever whose ranking item ``index`` is evaluated with.

    One retriever per item: two retrievers on one item share its difficulty, so independent items
    buy more evidence per model call. Items take the families in turn, so retrievers alternate per
    round of families, and every retriever sees every family.
    """
    return names[(index // len(EVAL_FAMILIES)) % len(names)]
