"""The ``--loop`` option of ``serve`` and ``proxy`` (:func:`add_loop_argument`) and what it gives
``anyio.run`` (:func:`loop_options`): serving HTTP or proxying, uvloop under asyncio when it can
be imported, unless ``--loop asyncio`` says otherwise; serving stdio, asyncio's loop unless
``--loop uvloop`` says otherwise (see :mod:`mcpbind.event_loop`)."""

from __future__ import annotations

import argparse
from typing import Any

from mcpbind.commands.failures import CommandError
from mcpbind.event_loop import LOOPS, LoopUnavailable, backend_options

__all__ = ["add_loop_argument", "loop_options"]


def add_loop_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--loop auto|asyncio|uvloop`` to a command's parser."""
    parser.add_argument(
        "--loop",
        choices=LOOPS,
        default="auto",
        help="--backend asyncio's loop: auto (the default: uvloop over HTTP if installed, else asyncio's), "
        "asyncio or uvloop",
    )


def loop_options(args: argparse.Namespace, *, prefer_uvloop: bool = True) -> dict[str, Any]:
    """``anyio.run``'s ``backend_options`` for ``args.backend`` and ``args.loop`` (``prefer_uvloop``:
    whether ``auto`` takes uvloop); a :class:`CommandError` (exit code 2) when uvloop is asked for
    and cannot be had."""
    try:
        return backend_options(args.backend, args.loop, prefer_uvloop=prefer_uvloop)
    except LoopUnavailable as missing:
        raise CommandError(f"--loop uvloop: {missing}", 2) from None
