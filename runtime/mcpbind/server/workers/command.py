"""What ``mcpbind serve`` does to serve with several processes: its options (``--workers``,
``--store``, and the ones a supervisor gives its workers, hidden from ``--help``), the
supervisor it runs (:func:`supervise`), and a worker's side (:func:`worker_options`,
:func:`serve_http`)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import Any

from mcpbind.server.server import Server
from mcpbind.server.workers.link import WorkerLink
from mcpbind.server.workers.supervisor import Supervisor, log
from mcpbind.store import Store
from mcpbind.store import open_store as open_store_at

__all__ = [
    "add_worker_arguments",
    "open_store",
    "reach_store",
    "serve_http",
    "supervise",
    "worker_arguments_error",
    "worker_command",
    "worker_options",
]


def add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--workers``, ``--store`` and the supervisor's hidden options to ``parser``."""
    group = parser.add_argument_group("several processes (HTTP)")
    group.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="HTTP: serve with N worker processes sharing the port, under a supervisor that "
        "restarts a worker that dies and stops them all on Ctrl-C or SIGTERM (default 1: this "
        "process serves)",
    )
    group.add_argument(
        "--store",
        metavar="URL",
        help="HTTP: where what workers and hosts serving the same server share lives: "
        "redis://HOST:PORT/DB, or memory: (the default: this process alone)",
    )
    # Given to each worker by the supervisor: the listening sockets it inherited, and its link.
    parser.add_argument("--listen-fd", type=int, action="append", help=argparse.SUPPRESS)
    parser.add_argument("--supervisor-fd", type=int, help=argparse.SUPPRESS)


def worker_arguments_error(args: argparse.Namespace) -> str | None:
    """What is wrong with these options (for exit code 2), or ``None``."""
    workers: int = args.workers
    if workers < 1:
        return f"--workers takes a number of processes, 1 or more (not {workers})"
    if args.transport != "http":
        given = [name for name, value in (("--workers", workers != 1), ("--store", args.store)) if value]
        if given:
            return f"{' and '.join(given)}: for HTTP only (add --transport http)"
    return None


def worker_command(argv: Sequence[str], port: int) -> list[str]:
    """The command starting a worker of ``mcpbind serve`` run with ``argv``, on ``port`` (the
    port the supervisor bound, which ``--port 0`` leaves to the system to choose)."""
    return [sys.executable, "-m", "mcpbind", *argv, "--port", str(port)]


def supervise(args: argparse.Namespace) -> int:
    """Serve with ``args.workers`` processes: bind the port here (``OSError`` if it cannot),
    then run a :class:`Supervisor` of workers running ``mcpbind`` with the same arguments
    (``args.argv``), logging what it does on stderr. Returns the exit code."""
    from mcpbind.transports.http.server.listeners import bind_listeners

    listeners = bind_listeners(args.host, args.port, listen=True)
    try:
        port: int = listeners[0].getsockname()[1]
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("mcpbind: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
        where = f"[{args.host}]" if ":" in args.host else args.host
        log.info("serving http://%s:%d%s with %d workers", where, port, args.path, args.workers)
        try:
            return Supervisor(worker_command(args.argv, port), listeners, args.workers).run()
        finally:
            log.removeHandler(handler)
    finally:
        for listener in listeners:
            listener.close()


def worker_options(args: argparse.Namespace) -> dict[str, Any]:
    """For a worker a supervisor started (``--listen-fd`` given), the options of
    :meth:`~mcpbind.server.server.Server.run_http` serving on the sockets it inherited and
    telling the supervisor when it serves; it stops if the supervisor is gone. Nothing for a
    process started otherwise. ``ValueError`` for descriptors that are not what they should be."""
    if args.listen_fd is None:
        return {}
    from mcpbind.transports.http.server.listeners import adopt_listeners

    options: dict[str, Any] = {"sockets": adopt_listeners(args.listen_fd)}
    if args.supervisor_fd is not None:
        link = WorkerLink(args.supervisor_fd)
        link.watch()
        options["ready"] = link.ready
    return options


def open_store(url: str) -> Store:
    """The store at ``url`` (:func:`mcpbind.store.open_store`), not open yet: the application
    opens it while it serves. ``ValueError`` for a URL it does not take."""
    return open_store_at(url)


async def reach_store(store: Store) -> None:
    """Open ``store`` and read from it once (what ``serve --store`` does before it serves, so
    that a store it cannot reach is one clear line and a failed start, not a traceback per
    worker): :class:`~mcpbind.store.StoreUnavailable` when it cannot be reached."""
    async with store:
        await store.get("key:request-state")


async def serve_http(
    server: Server, args: argparse.Namespace, store: Store | None, options: dict[str, Any]
) -> None:
    """Serve ``server`` over HTTP with ``options``, sharing ``store`` (:func:`open_store`)
    with the other workers if not ``None``."""
    if store is not None:
        options = {**options, "store": store}
    await server.run_http(args.host, args.port, **options)
