"""Array type aliases shared by the core, the validator and the benchmarks."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = ["FloatArray"]

#: A NumPy array of float64, the type of every weight, relevance and length vector.
FloatArray: TypeAlias = npt.NDArray[np.float64]
