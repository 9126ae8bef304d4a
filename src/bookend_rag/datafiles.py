"""Files bundled in ``bookend/data`` (presets, published curves, the demo corpus)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["load_data_json"]


@lru_cache(maxsize=16)
def load_data_json(name: str) -> Any:
    """The parsed JSON file ``bookend/data/<name>``, read once; callers must not mutate it."""
    return json.loads(
        resources.files("bookend_rag").joinpath("data", name).read_text(encoding="utf-8")
    )
