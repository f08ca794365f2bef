"""The failures the ``mcpbind`` command reports: :class:`CommandError` (one line on stderr and an
exit code), an exception told in one line, the exceptions inside an exception group, and the
line saying which extra to install when an optional dependency is missing."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from typing import Any, Final

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = ["CommandError", "describe", "leaf", "leaves", "missing_extra"]

# The optional modules the command may need, with the extra installing each and what needs it.
_EXTRAS: Final = {
    "httpx": ("http", "calling a URL"),
    "httpcore": ("http", "calling a URL"),
    "uvicorn": ("http", "serving over HTTP"),
    "sniffio": ("http", "serving over HTTP"),
    "trio": ("trio", "the trio backend"),
    "hypercorn": ("trio", "serving over HTTP on trio"),
    "authlib": ("auth", "authorizing with OAuth"),
    "joserfc": ("auth", "authorizing with OAuth"),
    "coredis": ("redis", "a Redis store (--store redis://...)"),
}


class CommandError(Exception):
    """A failure the command reports as one line on stderr (``mcpbind: ...``), exiting with
    ``exit_code`` (1; 2 for a bad command line)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def describe(exc: BaseException) -> str:
    """``exc`` in one line: its type, message and, but for a syntax error (whose message says
    where), the file and line that raised it."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError):
        return text
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<frozen")]
    return f"{text} ({frames[-1].filename}:{frames[-1].lineno})" if frames else text


def leaves(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, or the exceptions inside it if it is a group (nested groups too)."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from leaves(inner)
    else:
        yield exc


def leaf(exc: BaseException, kind: type[Any] | tuple[type[Any], ...]) -> Any:
    """The first exception of ``kind`` among :func:`leaves`, or ``None``."""
    return next((found for found in leaves(exc) if isinstance(found, kind)), None)


def missing_extra(exc: BaseException) -> str | None:
    """The line to print when ``exc`` says an optional dependency is missing: which extra to
    install (anyio reports a backend it cannot import as a ``LookupError`` caused by it)."""
    for found in leaves(exc):
        cause: BaseException | None = found
        while cause is not None and not isinstance(cause, ModuleNotFoundError):
            cause = cause.__cause__
        if cause is not None and cause.name is not None:
            extra = _EXTRAS.get(cause.name.partition(".")[0])
            if extra is not None:
                name, needed_by = extra
                return f'{cause}; {needed_by} needs the {name} extra: pip install "mcpbind[{name}]"'
    return None
