"""A fitted influence profile for trained models: primacy, a recency window in tokens, a floor.

Trained models read the start of a prompt well (primacy, the shape the Cesàro theory predicts) and
the last stretch before the question well (recency over a window of many tokens, not the
untrained network's one-token Recency Delta), and the middle less. :class:`FittedProfile` is the
three-part mixture with those shapes, over a sequence of ``N`` tokens (offset ``t`` in ``[0, N]``,
``x = t / N``)::

    F(t; N) = w_p P_lambda(t / N) + w_r R_tau(t; N) + w_f t / N,      w_p + w_r + w_f = 1

- **Primacy** ``P_lambda``: the Poisson limit of the Cesàro profile (``H -> inf``, ``H alpha =
  lambda``) without its delta, renormalised. Its density in ``x`` is
  ``sum_{k>=1} Poisson(k; lambda) (ln 1/x)^(k-1) / (k-1)! / (1 - e^-lambda)`` and its CDF
  ``P_lambda(x) = sum_{k>=1} Poisson(k; lambda) Q(k, ln 1/x) / (1 - e^-lambda)`` for ``x < 1``
  (``Q`` the regularized upper incomplete gamma function; :func:`bookend_rag.theory.poisson_cdf`),
  ``P_lambda(1) = 1``. It scales with ``N``: the primacy region is a fraction of the sequence.
- **Recency** ``R_tau``: an exponential window ending at the final token with scale ``tau``
  *tokens*, truncated to the sequence: density ``e^(-(N - t) / tau) / (tau (1 - e^(-N / tau)))``,
  CDF ``R_tau(t; N) = e^(-(N - t) / tau) (1 - e^(-t / tau)) / (1 - e^(-N / tau))``. The last
  ``d`` tokens hold ``w_r (1 - e^(-d / tau)) / (1 - e^(-N / tau))`` of the mass, which for
  ``N >> tau`` does not depend on ``N``: the window lives in absolute tokens.
- **Floor**: uniform, ``t / N``.

Because the window is in tokens, :meth:`FittedProfile.cdf_at_tokens` is the profile; :meth:`cdf`
evaluates it at the documented ``reference_tokens`` (the median length of the sequences it was
fitted on). It is a token-level profile; its density is not monotone.

Fits live in the lab (:mod:`bookend_rag_lab.fitting.profile`: ``bookend calibrate``, ``bookend
validate --fitted-out``); this module needs only NumPy and SciPy. A profile that ``bookend
calibrate`` fitted describes the documents block of its prompts (offsets from the first document
to the end of the last; ``metadata["frame"]`` says so): the layout that matches that frame is
``Layout(suffix_tokens=0)``, the chunks filling the sequence. Placement's default layout adds one
answer token after the chunks (``suffix_tokens=1``), which then takes about ``w_r / tau`` of the
mass from the last chunk. A profile fitted to a Jacobian profile (``bookend validate
--fitted-out``) describes the whole measured sequence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from bookend_rag.arrays import FloatArray
from bookend_rag.profiles.base import PROFILE_FORMAT, PROFILE_VERSION, StoredProfile, check_header
from bookend_rag.theory import poisson_cdf

__all__ = ["FITTED_KIND", "PARAMETERS", "FittedProfile"]

FITTED_KIND = "fitted"
PARAMETERS = ("lam", "tau_tokens", "primacy_mass", "recency_mass", "floor_mass")


def _check_positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise ValueError(f"{name} must be a number, got {name}={value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {name}={value!r}")
    return float(value)


@dataclass(frozen=True, eq=False)
class FittedProfile(StoredProfile):
    """Primacy (Poisson-limit Cesàro), a recency window in tokens and a floor (module docstring).

    Args:
        lam: the primacy term's ``lambda = H alpha`` (> 0).
        tau_tokens: the recency window's scale in tokens (> 0).
        recency_mass: ``w_r`` in ``[0, 1]``.
        floor_mass: ``w_f`` in ``[0, 1]``; the primacy mass is ``1 - w_r - w_f`` (>= 0).
        reference_tokens: the sequence length :meth:`cdf` assumes (> 0).
        label: a name for reports.
        standard_errors: uncertainty of the parameters by name (see ``PARAMETERS``).
        metadata: provenance: the model, the data (K values, prompt lengths, item counts,
            families, seed) and the fit.

    Equality and hashing use the shape parameters only (``lam``, ``tau_tokens``, the masses and
    ``reference_tokens``), so equal curves key the same cache entries.
    """

    lam: float
    tau_tokens: float
    recency_mass: float
    floor_mass: float
    reference_tokens: float
    label: str = "fitted"
    standard_errors: Mapping[str, float] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict, repr=False)
    _key: tuple[float, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("lam", "tau_tokens", "reference_tokens"):
            object.__setattr__(self, name, _check_positive(name, getattr(self, name)))
        for name in ("recency_mass", "floor_mass"):
            value = getattr(self, name)
            if not isinstance(value, int | float | np.number) or not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {name}={value!r}")
            object.__setattr__(self, name, float(value))
        if self.recency_mass + self.floor_mass > 1.0 + 1e-12:
            raise ValueError(
                "recency_mass + floor_mass must be <= 1, got "
                f"recency_mass={self.recency_mass!r}, floor_mass={self.floor_mass!r}"
            )
        unknown = set(self.standard_errors) - set(PARAMETERS)
        if unknown:
            raise ValueError(
                f"standard_errors keys must be among {PARAMETERS}, got {sorted(unknown)}"
            )
        key = (self.lam, self.tau_tokens, self.recency_mass, self.floor_mass)
        object.__setattr__(self, "_key", (*key, self.reference_tokens))

    @property
    def primacy_mass(self) -> float:
        """``w_p = 1 - w_r - w_f``."""
        return max(0.0, 1.0 - self.recency_mass - self.floor_mass)

    @property
    def name(self) -> str:
        return self.label

    def cdf(self, x: npt.ArrayLike) -> FloatArray:
        """``F(x N_ref; N_ref)`` with ``N_ref = reference_tokens``."""
        xs = np.asarray(x, dtype=np.float64)
        if xs.size and (not np.all(np.isfinite(xs)) or xs.min() < 0.0 or xs.max() > 1.0):
            raise ValueError(f"x must lie in [0, 1], got x={x!r}")
        return self._cdf(xs, self.reference_tokens)

    def cdf_at_tokens(self, offsets: npt.ArrayLike, total: float) -> FloatArray:
        """``F(t; N)`` for token offsets ``t`` in ``[0, N]``, ``N = total``.

        Offsets within floating-point rounding of ``total`` are the end of the sequence.
        """
        n = _check_positive("total", total)
        x = np.asarray(offsets, dtype=np.float64) / n
        if x.size and (not np.all(np.isfinite(x)) or x.min() < -1e-12 or x.max() > 1 + 1e-12):
            raise ValueError(f"offsets must lie in [0, total={total!r}], got offsets={offsets!r}")
        return self._cdf(np.where(x >= 1.0 - 1e-12, 1.0, np.maximum(x, 0.0)), n)

    def span_mass_at_tokens(
        self, starts: npt.ArrayLike, ends: npt.ArrayLike, totals: npt.ArrayLike
    ) -> FloatArray:
        """Mass ``F(e; N) - F(s; N)`` of token spans ``[s, e)``, each in its own sequence of
        ``N`` tokens (all three broadcast together); for fitting many prompts at once."""
        n = np.asarray(totals, dtype=np.float64)
        s = np.asarray(starts, dtype=np.float64)
        e = np.asarray(ends, dtype=np.float64)
        if n.size and (not np.all(np.isfinite(n)) or n.min() <= 0):
            raise ValueError(f"totals must be finite and > 0, got totals={totals!r}")
        if s.size and (s.min() < 0 or np.any(e < s) or np.any(e > n)):
            raise ValueError("spans must satisfy 0 <= start <= end <= total")
        x_end = np.where(e >= n * (1.0 - 1e-12), 1.0, e / n)
        return np.asarray(self._cdf(x_end, n) - self._cdf(s / n, n), dtype=np.float64)

    def _cdf(self, x: FloatArray, total: float | FloatArray) -> FloatArray:
        primacy = np.where(
            x >= 1.0, 1.0, poisson_cdf(np.minimum(x, 1.0), self.lam) / -math.expm1(-self.lam)
        )
        tokens_before_end = (1.0 - x) * total
        recency = (
            np.exp(-tokens_before_end / self.tau_tokens)
            * -np.expm1(-x * total / self.tau_tokens)
            / -np.expm1(-np.asarray(total) / self.tau_tokens)
        )
        out = self.primacy_mass * primacy + self.recency_mass * recency + self.floor_mass * x
        # Exactly 1 at the end, whatever the rounding of the mixture weights.
        return np.asarray(np.where(x >= 1.0, 1.0, np.clip(out, 0.0, 1.0)), dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        """The versioned JSON object written by :meth:`save`."""
        return {
            "format": PROFILE_FORMAT,
            "kind": FITTED_KIND,
            "version": PROFILE_VERSION,
            "label": self.label,
            "parameters": {
                "lam": self.lam,
                "tau_tokens": self.tau_tokens,
                "primacy_mass": self.primacy_mass,
                "recency_mass": self.recency_mass,
                "floor_mass": self.floor_mass,
                "reference_tokens": self.reference_tokens,
            },
            "standard_errors": dict(self.standard_errors),
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "profile") -> FittedProfile:
        """Build from the object written by :meth:`to_json`, its header checked first."""
        fitted = check_header(data, where=where, kind=FITTED_KIND)
        params, errors, metadata = (
            fitted.get(key, {}) for key in ("parameters", "standard_errors", "metadata")
        )
        for key, value in (("parameters", params), ("standard_errors", errors)):
            if not isinstance(value, Mapping):
                raise ValueError(f"{key} must be a JSON object, got {key}={value!r}")
        if not isinstance(metadata, Mapping):
            raise ValueError(f"metadata must be a JSON object, got metadata={metadata!r}")
        missing = {"lam", "tau_tokens", "recency_mass", "floor_mass", "reference_tokens"} - set(
            params
        )
        if missing:
            raise ValueError(f"fitted profile parameters missing: {sorted(missing)}")
        bad = {
            k: v for k, v in errors.items() if isinstance(v, bool) or not isinstance(v, int | float)
        }
        if bad:
            raise ValueError(f"standard_errors must be numbers, got {bad!r}")
        return cls(
            lam=params["lam"],
            tau_tokens=params["tau_tokens"],
            recency_mass=params["recency_mass"],
            floor_mass=params["floor_mass"],
            reference_tokens=params["reference_tokens"],
            label=str(fitted.get("label", "fitted")),
            standard_errors={str(k): float(v) for k, v in errors.items()},
            metadata=dict(metadata),
        )

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FittedProfile):
            return NotImplemented
        return self._key == other._key
