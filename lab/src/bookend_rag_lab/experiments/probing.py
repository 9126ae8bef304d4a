"""The probe designs a run can build from retrievals, by name (:data:`PROBE_DESIGNS`): what each
refuses before a model loads and how it builds its items on the run's scorer.

A design is its items module (:mod:`~bookend_rag_lab.items.probes` holds what they share) and one
entry here; :class:`~bookend_rag_lab.experiments.runspec.RunSpec` and the commands' ``--probes``
take their names from this registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bookend_rag.retrievals import RetrievalRecord
from bookend_rag_lab.items import codes, self_answer
from bookend_rag_lab.items.probes import Probes
from bookend_rag_lab.items.template import PromptTemplate
from bookend_rag_lab.models.scorer import (
    Prompt,
    Scorer,
    capabilities,
    context_length,
    exact_tokens,
    generate_all,
)
from bookend_rag_lab.progress import progress_bar

__all__ = ["DEFAULT_DESIGN", "PROBE_DESIGNS", "ProbeDesign", "ProbeRequest"]


@dataclass(frozen=True)
class ProbeRequest:
    """What a design builds its probes from.

    Attributes:
        records: the retrievals, in file order.
        seed: the run's seed.
        limit: the most probes the run keeps (``None``: all).
        template: the prompt the items are rendered into.
        scorer: the run's model.
        unanswered: for a dry run, where a design that generates answers puts the prompts it
            did not answer (``None``: generate them).
        progress: show a progress bar for the generation calls.
    """

    records: tuple[RetrievalRecord, ...]
    seed: int
    limit: int | None
    template: PromptTemplate
    scorer: Scorer
    unanswered: list[Prompt] | None
    progress: bool

    def token_length(self) -> Callable[[str], int] | None:
        """The scorer's tokenizer where it is the model's own (``None``: it only estimates)."""
        return self.scorer.token_length if exact_tokens(self.scorer) else None


@dataclass(frozen=True)
class ProbeDesign:
    """One probe design: why a retrieval gives none of its probes whatever the model (a key of
    ``reasons``, ``None``: it may give one), those reasons in words, and the builder."""

    unusable: Callable[[RetrievalRecord], str | None]
    reasons: Mapping[str, str]
    build: Callable[[ProbeRequest], Probes]


def _codes(request: ProbeRequest) -> Probes:
    """Code probes whose codes are single tokens of the scorer's own tokenizer."""
    return codes.probe_items(
        request.records,
        seed=request.seed,
        template=request.template,
        token_length=request.token_length(),
        context=context_length(request.scorer),
    )


def _self_answer(request: ProbeRequest) -> Probes:
    """Self-answer probes from the scorer's answers (a progress bar counts them); with
    :attr:`~ProbeRequest.unanswered` (a dry run), no answer is generated: each document gets a
    placeholder of :data:`~bookend_rag_lab.items.self_answer.ANSWER_TOKENS` words, an upper bound
    on what scoring it costs, and its prompt is kept there."""
    scorer, unanswered = request.scorer, request.unanswered
    caps = capabilities(scorer)
    documents = sum(len(r.documents) for r in request.records)
    placeholders = iter(range(documents))

    def placeholder(prompts: Sequence[Prompt]) -> list[str]:
        assert unanswered is not None
        unanswered.extend(prompts)
        words = ["x"] * (self_answer.ANSWER_TOKENS - 1)
        return [" ".join([str(next(placeholders)), *words]) for _ in prompts]

    enabled = request.progress and unanswered is None
    with progress_bar(documents, "answers", unit="call", enabled=enabled) as bar:

        def generated(prompts: Sequence[Prompt]) -> list[str]:
            texts = generate_all(scorer, prompts, self_answer.ANSWER_TOKENS)
            bar.update(len(prompts))
            return texts

        return self_answer.self_answer_items(
            request.records,
            generated if unanswered is None else placeholder,
            seed=request.seed,
            template=request.template,
            token_length=request.token_length(),
            context=context_length(scorer),
            distinct_first_words=caps.logprobs and not caps.full_continuation,
            limit=request.limit,
        )


#: The probe designs by name, the default first: the model's own answers to the user's question
#: (:mod:`~bookend_rag_lab.items.self_answer`), or inserted codes
#: (:mod:`~bookend_rag_lab.items.codes`, kept for the comparison that chose the default).
PROBE_DESIGNS: Mapping[str, ProbeDesign] = {
    self_answer.DESIGN: ProbeDesign(self_answer.unusable, self_answer.SKIP_REASONS, _self_answer),
    codes.DESIGN: ProbeDesign(codes.unusable, codes.SKIP_REASONS, _codes),
}

#: The design a run builds when not told.
DEFAULT_DESIGN = next(iter(PROBE_DESIGNS))
