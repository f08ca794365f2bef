"""Which event loop a command or a ``run_*_sync`` convenience runs on: for serving HTTP, uvloop
under asyncio when it is importable (the ``http`` extra installs it where wheels exist), asyncio's
own loop otherwise or when asked for (:func:`run`, :data:`LOOPS`).

``loop`` is one of:

* ``"auto"`` (the default): where uvloop is preferred (``prefer_uvloop``: serving HTTP), uvloop
  if it can be imported, else asyncio's loop; elsewhere (stdio) asyncio's loop, as uvloop
  measured no faster there and costs its import and about 2 MiB of memory (``bench/README.md``,
  "Embedded HTTP servers");
* ``"uvloop"``: uvloop, or :class:`LoopUnavailable` when it cannot be imported;
* ``"asyncio"``: asyncio's own loop.

On trio the choice is trio's: ``"auto"`` and ``"asyncio"`` change nothing, and ``"uvloop"`` is an
error (:class:`LoopUnavailable`), since uvloop is an asyncio loop.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import anyio

__all__ = ["LOOPS", "LoopUnavailable", "backend_options", "run", "uvloop_available"]

T = TypeVar("T")

# The values ``loop`` takes (the ``--loop`` option's choices).
LOOPS: Final = ("auto", "asyncio", "uvloop")


class LoopUnavailable(RuntimeError):
    """uvloop was asked for and cannot be had (not installed, or not an asyncio run)."""


def uvloop_available() -> bool:
    """Whether uvloop can be imported here (found, without importing it)."""
    try:
        return importlib.util.find_spec("uvloop") is not None
    except (ImportError, ValueError):  # a broken or blocked install
        return False


def backend_options(backend: str, loop: str = "auto", *, prefer_uvloop: bool = True) -> dict[str, Any]:
    """``anyio.run``'s ``backend_options`` for ``loop`` on ``backend`` (see the module's
    docstring; ``prefer_uvloop``: whether ``"auto"`` takes uvloop when it can); :class:`LoopUnavailable`
    for uvloop that cannot be had, :class:`ValueError` for a ``loop`` not in :data:`LOOPS`."""
    if loop not in LOOPS:
        raise ValueError(f"loop must be one of {', '.join(LOOPS)}, not {loop!r}")
    if backend != "asyncio":
        if loop == "uvloop":
            raise LoopUnavailable(f"uvloop is an asyncio loop: it cannot run under {backend}")
        return {}
    if loop == "asyncio":
        return {}
    if loop == "uvloop":
        try:
            import uvloop  # noqa: F401  # (imported to fail here, in one line, when missing)
        except ImportError as missing:
            raise LoopUnavailable(
                f"uvloop was asked for but cannot be imported ({missing}): "
                "pip install uvloop (or mcpbind[http]), or use the asyncio loop"
            ) from None
        return {"use_uvloop": True}
    return {"use_uvloop": True} if prefer_uvloop and _importable_uvloop() else {}


def _importable_uvloop() -> bool:
    """Whether uvloop is found and imports (an install that fails to import counts as none)."""
    if not uvloop_available():
        return False
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def run(
    func: Callable[..., Awaitable[T]],
    *args: Any,
    backend: str = "asyncio",
    loop: str = "auto",
    prefer_uvloop: bool = True,
) -> T:
    """``anyio.run(func, *args, backend=backend)`` on the loop ``loop`` names (see the module's
    docstring and :func:`backend_options`)."""
    options = backend_options(backend, loop, prefer_uvloop=prefer_uvloop)
    return anyio.run(func, *args, backend=backend, backend_options=options)
