"""Array type aliases shared by the core and the lab."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = ["FloatArray", "IntArray"]

#: A NumPy array of float64, the type of every weight, relevance and length vector.
FloatArray: TypeAlias = npt.NDArray[np.float64]
#: A NumPy array of int64, the type of every order (chunk indices in prompt order).
IntArray: TypeAlias = npt.NDArray[np.int64]
