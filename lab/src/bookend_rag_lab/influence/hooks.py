"""A context manager base for measurements that hook into a torch model."""

from __future__ import annotations

from types import TracebackType

import torch

__all__ = ["HookScope"]


class HookScope:
    """Holds the hook handles a measurement registers and removes them all on exit.

    Subclasses register hooks in ``__enter__`` and append the handles to ``self._handles``, so the
    model is left as it was however the ``with`` block ends.
    """

    def __init__(self) -> None:
        self._handles: list[torch.utils.hooks.RemovableHandle] = []

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
