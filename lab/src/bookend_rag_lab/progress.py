"""Progress bars of long lab runs (tqdm, on stderr so that the reports on stdout stay clean)."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["progress_bar"]


def progress_bar(
    total: int, desc: str, *, unit: str, enabled: bool = True, leave: bool = True
) -> Any:
    """A tqdm bar of ``total`` steps; ``leave=False`` clears it when done."""
    from tqdm import tqdm

    return tqdm(
        total=total, desc=desc, unit=unit, file=sys.stderr, disable=not enabled, leave=leave
    )
