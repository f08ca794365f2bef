"""The one error of a store: :class:`StoreUnavailable`."""

from __future__ import annotations

__all__ = ["StoreUnavailable"]


class StoreUnavailable(Exception):
    """The store could not be reached or did not answer in time (Redis stopped, restarting,
    unreachable, overloaded). The message says which store and what happened, never a
    password. The operation may be tried again: a store recovers by itself when its backend
    is back."""
