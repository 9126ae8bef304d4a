"""Choosing a placement by measurement: a race between candidates, then a guard for the default.

Every candidate order is scored on the same items, so candidates are compared by their paired
per-item differences ``d_i = a_i - b_i`` (a continuous metric: the gold answer's probability among
the candidates, or its log-probability). Two rules decide:

**The race** (:class:`Race`): after each batch of items, a candidate whose paired interval against
the current leader lies wholly below 0 at ``eliminate_confidence`` (99% by default; anytime-valid
when the race is planned, so that looking after every batch costs nothing) stops being scored;
the default is never eliminated. The budget is then spent on the candidates that are still close,
and :func:`settled` says when the whole race can stop.

**The guard** (:func:`decide`): the best surviving candidate replaces the default only when its
paired interval against the default excludes 0 at ``confidence`` after a Bonferroni correction for
the ``m`` candidates it was chosen among, eliminated ones included (level
``1 - (1 - confidence) / m``); otherwise the default stays and the decision reports the smallest
effect that comparison could have detected.

**Anytime-valid intervals.** ``tune`` looks at its items after every batch and stops as soon as
the decision is settled (:func:`settled`), so the intervals it reads at those looks must hold at
every look, not at one fixed ``n``: a race passes ``planned`` (the items it may judge) and the
interval is then the
asymptotic confidence sequence of Waudby-Smith, Arnold, Wu and Ramdas (2024, "Time-uniform
central limit theory and asymptotic confidence sequences", Ann. Statist.; two-sided), which
covers the mean at every ``n`` at once with probability ``level`` (asymptotically):

    mean(d) ± sd(d) · sqrt( 2 (n ρ² + 1) / (n² ρ²) · log( sqrt(n ρ² + 1) / α ) ),
    α = 1 - level,   ρ² = (-2 log α + log(-2 log α + 1)) / planned

(``ρ`` makes it tightest at ``n = planned``). It is wider than the fixed-``n`` interval below by a
third (at a Bonferroni level) to a half (at 95%) at ``n = planned``, so a race that judges all its
items should not pay for looks it did not act on. The error rate is therefore split, as in a
Haybittle-Peto design (:func:`split_level`): the looks before the last spend
:data:`INTERIM_SHARE` of it, through the anytime-valid interval (a race that stops early decides
with it), and the last look, after every item, the rest through the fixed-``n`` interval. A
switch is wrong with probability at most their sum, the level the fixed design had; the last
look's interval is barely wider than the fixed design's (``t`` at 90% of the error rate).

Without ``planned`` intervals are Student-t intervals of the mean paired difference
(``scipy.stats.ttest_rel``), valid at one fixed ``n``:

    mean(d) ± t_{1-(1-level)/2, n-1} · sd(d) / sqrt(n)

and the minimum detectable effect at 80% power is ``(z_{1-(1-level)/2} + z_{0.8}) · sd(d) /
sqrt(n)`` either way (the fixed-``n`` design's). A sample whose differences are all equal has a
zero-width interval at that value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy import stats

from bookend_rag_lab.stats import Interval

__all__ = [
    "Comparison",
    "Decision",
    "Race",
    "compare",
    "confidence_sequence_radius",
    "decide",
    "hold_to_current",
    "settled",
    "split_level",
]

#: Power at which the minimum detectable effect is stated.
POWER = 0.8
#: The share of a guard's error rate spent at the looks before the last (module docstring).
INTERIM_SHARE = 0.1


@dataclass(frozen=True)
class Comparison(Interval):
    """``candidate`` minus ``reference`` on the same items.

    Attributes:
        diff: mean paired difference.
        ci_low, ci_high: its interval at ``level``.
        level: the interval's confidence level.
        mde: the smallest true difference this comparison detects with 80% power.
        n: items.
        anytime: whether the interval is the anytime-valid confidence sequence (module
            docstring), planned for this many items; ``None``: the fixed-``n`` t-interval.
    """

    candidate: str
    reference: str
    diff: float
    ci_low: float
    ci_high: float
    level: float
    mde: float
    n: int
    anytime: int | None = None


def confidence_sequence_radius(sd: float, n: int, level: float, planned: int) -> float:
    """The half-width of the two-sided asymptotic confidence sequence at ``n`` items (module
    docstring): ``sd · sqrt(2 (n ρ² + 1) / (n² ρ²) · log(sqrt(n ρ² + 1) / α))``.

    Raises:
        ValueError: when ``n`` or ``planned`` is below 1, or ``level`` is not in (0, 1).
    """
    if n < 1 or planned < 1:
        raise ValueError(f"n and planned must be >= 1, got n={n!r}, planned={planned!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got level={level!r}")
    log_alpha = math.log(1.0 - level)
    rho2 = (-2.0 * log_alpha + math.log(-2.0 * log_alpha + 1.0)) / planned
    spread = n * rho2 + 1.0
    return sd * math.sqrt(2.0 * spread / (n * n * rho2) * (0.5 * math.log(spread) - log_alpha))


def compare(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    level: float = 0.95,
    names: tuple[str, str] = ("a", "b"),
    planned: int | None = None,
) -> Comparison:
    """The paired comparison ``a - b`` (formulas in the module docstring): the fixed-``n``
    t-interval, or with ``planned`` the anytime-valid confidence sequence planned for that many
    items.

    Raises:
        ValueError: when ``a`` and ``b`` differ in length, hold fewer than 2 items, or ``level``
            is not in (0, 1).
    """
    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if va.shape != vb.shape or va.ndim != 1:
        raise ValueError(f"a and b must be paired 1-d samples, got shapes {va.shape}, {vb.shape}")
    if va.size < 2:
        raise ValueError(f"a paired comparison needs at least 2 items, got n={va.size}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got level={level!r}")
    d = va - vb
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0.0:
        low = high = mean
    elif planned is not None:
        radius = confidence_sequence_radius(sd, d.size, level, planned)
        low, high = mean - radius, mean + radius
    else:
        interval = stats.ttest_rel(va, vb).confidence_interval(confidence_level=level)
        low, high = float(interval.low), float(interval.high)
    z = float(stats.norm.ppf(1.0 - (1.0 - level) / 2.0) + stats.norm.ppf(POWER))
    mde = z * sd / math.sqrt(d.size)
    return Comparison(names[0], names[1], mean, low, high, level, mde, int(d.size), planned)


@dataclass(frozen=True)
class Decision:
    """What :func:`decide` chose, and why.

    Attributes:
        chosen: the candidate to use (the default unless the guard let another through).
        default: the default it was measured against.
        switched: whether ``chosen`` replaces the default.
        best: the best-scoring non-default candidate (``None`` when there was none).
        guard: ``best`` minus the default at the Bonferroni-corrected level.
        reason: one sentence for the report, without figures (``guard`` holds them).
    """

    chosen: str
    default: str
    switched: bool
    best: str | None
    guard: Comparison | None
    reason: str


def decide(
    scores: Mapping[str, Sequence[float]],
    default: str,
    *,
    confidence: float = 0.95,
    among: Sequence[str] | None = None,
    comparisons: int | None = None,
    planned: int | None = None,
) -> Decision:
    """Keep ``default`` unless the best candidate of ``among`` (default: every other key of
    ``scores``) is measurably better (the guard of the module docstring). Candidates whose
    scores equal the default's on every item are not its rivals.

    ``comparisons`` is the ``m`` of the Bonferroni correction: by default the number of rivals of
    the default in ``among``; a race passes the number it started with, since the candidates it
    eliminated were part of the choice too. ``planned``: the guard is the anytime-valid interval
    planned for that many items (module docstring), as a race that may stop early needs.

    Raises:
        ValueError: when ``default`` or a name of ``among`` has no scores, or ``comparisons`` is
            fewer than the rivals.
    """
    missing = [n for n in [default, *(among or ())] if n not in scores]
    if missing:
        raise ValueError(f"no scores for {missing!r}; scored: {sorted(scores)!r}")
    rivals = [n for n in (among if among is not None else scores) if n != default]
    if comparisons is not None and comparisons < len(rivals):
        raise ValueError(
            f"comparisons must be >= the {len(rivals)} rivals, got comparisons={comparisons!r}"
        )
    # A rival that scores as the default on every item is the default under another name (the
    # relevance order, for a model whose theory is most relevant first): it cannot be better,
    # and its MDE of 0 would say nothing about the candidates that differ.
    distinct = [n for n in rivals if not np.array_equal(scores[n], scores[default])]
    if not distinct:
        reason = "keep the default: no candidate besides it scores differently"
        return Decision(default, default, False, None, None, reason)
    best = max(distinct, key=lambda n: float(np.mean(scores[n])))
    level = 1.0 - (1.0 - confidence) / (comparisons or len(rivals))
    guard = compare(
        scores[best], scores[default], level=level, names=(best, default), planned=planned
    )
    named = "" if default == "default" else f" ({default})"
    if guard.ci_low > 0.0:
        reason = f"{best} is measurably better than the default{named}"
        return Decision(best, default, True, best, guard, reason)
    reason = f"keep the default{named}: no candidate is measurably better (best rival {best})"
    return Decision(default, default, False, best, guard, reason)


def hold_to_current(
    decision: Decision,
    scores: Mapping[str, Sequence[float]],
    current: str,
    *,
    confidence: float = 0.95,
    planned: int | None = None,
) -> Decision:
    """The decision against what the user does today: a kept default that is measurably behind
    the user's ``current`` order (its paired interval against it lies wholly below 0 at
    ``confidence``; anytime-valid with ``planned``) gives way to that order, and the reason says
    so; any other decision stands.

    Raises:
        ValueError: when ``current`` has no scores.
    """
    if current not in scores:
        raise ValueError(f"no scores for the current order {current!r}; scored: {sorted(scores)}")
    if decision.switched or current == decision.default:
        return decision
    versus = compare(
        scores[decision.default],
        scores[current],
        level=confidence,
        names=(decision.default, current),
        planned=planned,
    )
    if versus.ci_high >= 0.0:
        return decision
    reason = (
        f"keep your current order ({current}): the default is measurably behind it and no "
        "candidate is measurably better than the default"
    )
    return Decision(current, decision.default, True, decision.best, versus, reason)


@dataclass
class Race:
    """Sequential elimination (module docstring): call :meth:`update` after each batch.

    Attributes:
        candidates: every candidate, the default among them.
        default: never eliminated.
        eliminate_confidence: level of the interval that eliminates.
        min_items: no elimination before this many items.
        eliminated: candidate -> items seen when it was eliminated.
        kept: candidates never eliminated besides the default (the user's current order, which
            every candidate is compared with at the end).
        planned: the items the race may judge: its intervals are then anytime-valid (module
            docstring); ``None``: fixed-``n`` intervals at every look.
    """

    candidates: Sequence[str]
    default: str
    eliminate_confidence: float = 0.99
    min_items: int = 20
    eliminated: dict[str, int] = field(default_factory=dict)
    kept: Sequence[str] = ()
    planned: int | None = None

    def __post_init__(self) -> None:
        if self.default not in self.candidates:
            raise ValueError(f"default must be one of the candidates, got default={self.default!r}")
        unknown = [c for c in self.kept if c not in self.candidates]
        if unknown:
            raise ValueError(f"kept must name candidates, got kept={list(self.kept)!r}")
        if self.min_items < 2:
            raise ValueError(f"min_items must be >= 2, got min_items={self.min_items!r}")

    @property
    def alive(self) -> list[str]:
        """The candidates still being scored, in their given order."""
        return [c for c in self.candidates if c not in self.eliminated]

    def update(self, scores: Mapping[str, Sequence[float]]) -> list[str]:
        """Eliminate the candidates clearly behind the leader on the items scored so far
        (``scores`` holds every live candidate's per-item values, the same items for all);
        returns the live candidates."""
        alive = self.alive
        n = min(len(scores[c]) for c in alive)
        if n < self.min_items:
            return alive
        leader = max(alive, key=lambda c: float(np.mean(scores[c][:n])))
        for c in alive:
            if c in (leader, self.default, *self.kept):
                continue
            versus = compare(
                scores[c][:n],
                scores[leader][:n],
                level=self.eliminate_confidence,
                planned=self.planned,
            )
            if versus.ci_high < 0.0:
                self.eliminated[c] = n
        return self.alive


def settled(
    scores: Mapping[str, Sequence[float]],
    default: str,
    *,
    confidence: float,
    comparisons: int,
    planned: int,
) -> str | None:
    """Why the race can stop now, or ``None``: with anytime-valid intervals at the guard's
    Bonferroni-corrected level (``comparisons`` candidates besides the default, the items
    ``planned``), read on the items every candidate of ``scores`` (the live ones) was judged on:

    - **no rival**: no candidate scores differently from the default;
    - **a winner**: the best rival is measurably better than the default and than every other
      rival at the looks' share of the error rate (:func:`split_level`), so that the guard then
      switches to it;
    - **no rival can win by what a full run would detect**: every rival's upper bound against the
      default is below ``δ``, the effect the fixed-``n`` design over the ``planned`` items detects
      with 80% power at the same level (``(z + z_0.8) · sd(d) / sqrt(planned)``, the largest over
      the rivals), so the default would be kept unless a rival were better by less than the full
      run could tell.

    Raises:
        ValueError: when ``default`` has no scores.
    """
    if default not in scores:
        raise ValueError(f"no scores for the default {default!r}; scored: {sorted(scores)!r}")
    n = min(len(v) for v in scores.values())
    if n < 2:
        return None
    base = np.asarray(scores[default][:n], dtype=np.float64)
    rivals = {
        c: np.asarray(v[:n], dtype=np.float64)
        for c, v in scores.items()
        if c != default and not np.array_equal(v[:n], base)
    }
    if not rivals:
        return "no candidate scores differently from the default"
    level = 1.0 - (1.0 - split_level(confidence, early=True)) / comparisons
    best = max(rivals, key=lambda c: float(rivals[c].mean()))
    guard = compare(rivals[best], base, level=level, planned=planned)
    ahead = all(
        compare(rivals[c], rivals[best], level=level, planned=planned).ci_high < 0.0
        for c in rivals
        if not np.array_equal(rivals[c], rivals[best])  # the winner under another name
    )
    if guard.ci_low > 0.0 and ahead:
        return f"{best} is measurably better than the default and every other rival"
    # Stopping for futility spends no error rate of a switch: it is read at the guard's level.
    level = 1.0 - (1.0 - confidence) / comparisons
    versus = [compare(v, base, level=level, planned=planned) for v in rivals.values()]
    # Each comparison's MDE at its n, rescaled to the planned n.
    delta = max(c.mde * math.sqrt(c.n / planned) for c in versus)
    if all(c.ci_high < delta for c in versus):
        return (
            f"no rival can beat the default by {delta:.3g}, the effect {planned} items would detect"
        )
    return None


def split_level(confidence: float, *, early: bool) -> float:
    """The confidence a look reads, its error rate split as in the module docstring: at the looks
    before the last (``early``), ``1 - INTERIM_SHARE · (1 - confidence)``; at the last, the
    rest, ``1 - (1 - INTERIM_SHARE) · (1 - confidence)``.

    Raises:
        ValueError: when ``confidence`` is not in (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got confidence={confidence!r}")
    share = INTERIM_SHARE if early else 1.0 - INTERIM_SHARE
    return 1.0 - share * (1.0 - confidence)
