"""What a block run in an anyio task group raised, unwrapped from the exception group the task
group wraps it in."""

from __future__ import annotations

import sys

import anyio

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = ["only_error"]


def only_error(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one exception in ``group`` (nested groups flattened) that is not a cancellation, or
    None when there are none or several: a task group's background tasks end by cancellation,
    so what is left is the error of the block (or of the one task) that failed."""
    cancelled = anyio.get_cancelled_exc_class()
    leaves: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        item = stack.pop()
        if isinstance(item, BaseExceptionGroup):
            stack.extend(item.exceptions)
        elif not isinstance(item, cancelled):
            leaves.append(item)
    return leaves[0] if len(leaves) == 1 else None
