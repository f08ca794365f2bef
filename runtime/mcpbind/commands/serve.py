"""``mcpbind serve``: its options (the transport, the event loop, where and how long HTTP waits; the workers and
the store, and the authorization a served server demands, from their own modules) and
:func:`serve`, which loads the server and runs it until it is stopped."""

from __future__ import annotations

import argparse
from typing import Any

import anyio

from mcpbind.commands.failures import CommandError, leaf
from mcpbind.commands.loading import load_server
from mcpbind.commands.loop_option import add_loop_argument, loop_options
from mcpbind.server.auth.cli_options import add_auth_arguments, auth_from_arguments
from mcpbind.server.workers.command import (
    add_worker_arguments,
    open_store,
    reach_store,
    serve_http,
    supervise,
    worker_arguments_error,
    worker_options,
)
from mcpbind.store.errors import StoreUnavailable

__all__ = ["add_serve_arguments", "serve"]


def add_serve_arguments(serve: argparse.ArgumentParser) -> None:
    """The arguments of ``serve`` (the parser of that command)."""
    serve.add_argument("target", help="path/to/file.py[:attr] or package.module[:attr]")
    serve.add_argument(
        "--transport", choices=["stdio", "http"], default="stdio", help="stdio (default) or Streamable HTTP"
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="HTTP: the address to listen on (default 127.0.0.1; 0.0.0.0 for every IPv4 interface)",
    )
    serve.add_argument(
        "--port", type=int, default=8000, help="HTTP: the TCP port to listen on (default 8000)"
    )
    serve.add_argument(
        "--backend",
        choices=["asyncio", "trio"],
        default="asyncio",
        help="the event loop (default asyncio; trio needs the trio extra)",
    )
    add_loop_argument(serve)
    serve.add_argument("--path", default="/mcp", help="HTTP: the endpoint's path (default /mcp)")
    serve.add_argument("--stateless", action="store_true", help="HTTP without sessions")
    serve.add_argument("--json-response", action="store_true", help="answer HTTP requests as JSON, not SSE")
    serve.add_argument(
        "--header-timeout",
        type=float,
        metavar="SECONDS",
        help="HTTP: close a connection whose request head is not complete within this (default 10)",
    )
    serve.add_argument(
        "--body-timeout",
        type=float,
        metavar="SECONDS",
        help="HTTP: answer 408 to a POST whose body is not complete within this (default 30)",
    )
    serve.add_argument(
        "--keep-alive-timeout",
        type=float,
        metavar="SECONDS",
        help="HTTP: close a connection idle between requests for this long (default 5)",
    )
    add_worker_arguments(serve)
    add_auth_arguments(serve)


def serve(args: argparse.Namespace) -> int:
    """Serve as ``args`` say until stopped (a supervisor of ``--workers`` processes, or one
    process serving); the exit code, 0. A bad option, a server that cannot be loaded or an
    address that cannot be served on is a :class:`CommandError`."""
    try:  # (--auth-audience defaults to the URL served)
        auth = auth_from_arguments(args, f"http://{args.host}:{args.port}{args.path}")
    except ValueError as bad:
        raise CommandError(str(bad), 2) from None
    if (workers_error := worker_arguments_error(args)) is not None:
        raise CommandError(workers_error, 2)
    if args.transport == "http" and args.store is not None and args.listen_fd is None:
        _check_store(args)  # (once, before any worker starts: workers given --listen-fd do not)
    if args.workers > 1 and args.listen_fd is None:
        return _supervise(args)
    backend_options = loop_options(args, prefer_uvloop=args.transport == "http")
    server = load_server(args.target)
    if args.transport == "stdio":
        anyio.run(server.run_stdio, backend=args.backend, backend_options=backend_options)
        return 0
    options: dict[str, Any] = {"path": args.path}
    if args.stateless:
        options["stateless"] = True
    if args.json_response:
        options["json_response"] = True
    for name in ("header_timeout", "body_timeout", "keep_alive_timeout"):
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    options["auth"] = auth
    try:
        store = open_store(args.store) if args.store is not None else None
    except ValueError as bad:
        raise CommandError(f"--store {args.store}: {bad}", 2) from None
    try:
        options.update(worker_options(args))
    except ValueError as bad:
        raise CommandError(f"--listen-fd/--supervisor-fd: {bad}", 2) from None
    try:
        anyio.run(
            serve_http, server, args, store, options, backend=args.backend, backend_options=backend_options
        )
    except BaseException as exc:
        in_use = leaf(exc, OSError)  # the address is in use, say
        if in_use is None or leaf(exc, KeyboardInterrupt) is not None:
            raise
        raise CommandError(f"cannot serve on {args.host}:{args.port}: {in_use}") from exc
    return 0


def _check_store(args: argparse.Namespace) -> None:
    """Fail (exit 1, one line) when the store of ``--store`` cannot be reached now; exit 2 for
    a URL it does not take."""
    try:
        store = open_store(args.store)
    except ValueError as bad:
        raise CommandError(f"--store {args.store}: {bad}", 2) from None
    try:
        anyio.run(reach_store, store, backend=args.backend)
    except StoreUnavailable as lost:
        raise CommandError(f"--store: {lost.detail}") from None


def _supervise(args: argparse.Namespace) -> int:
    try:
        return supervise(args)
    except OSError as exc:  # the address is in use, say
        raise CommandError(f"cannot serve on {args.host}:{args.port}: {exc}") from exc
