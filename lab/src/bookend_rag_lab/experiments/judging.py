"""What the steps of ``tune`` share: the scorer, the ranked items and their folds, the metrics,
the budget, the seed of the random shuffles and whether to show progress."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bookend_rag_lab.experiments.budget import Budget
from bookend_rag_lab.experiments.folds import Folds
from bookend_rag_lab.experiments.trials import Ranked
from bookend_rag_lab.items.item import Item
from bookend_rag_lab.metrics import primary_metric
from bookend_rag_lab.models import Scorer
from bookend_rag_lab.retrieval import Ranking

__all__ = ["Judging"]


@dataclass(frozen=True)
class Judging:
    """The run's items, ranked and folded, and how they are scored.

    Attributes:
        scorer: the model.
        items: the items.
        ranked: every item ranked by its retriever (the rank step of the trials).
        folds: the folds and the judging order.
        metrics: the metrics every item supports (:func:`~bookend_rag_lab.metrics.metric_names`).
        budget: the run's budget.
        seed: the seed of the random shuffles.
        progress: whether to show progress bars.
    """

    scorer: Scorer
    items: Sequence[Item]
    ranked: Ranked
    folds: Folds
    metrics: Sequence[str]
    budget: Budget
    seed: int
    progress: bool

    @property
    def metric(self) -> str:
        """The primary metric (:func:`~bookend_rag_lab.metrics.primary_metric`)."""
        return primary_metric(self.metrics)

    @property
    def rankings(self) -> list[Ranking]:
        """Each item's ranking by its assigned retriever."""
        return self.ranked.per_item
