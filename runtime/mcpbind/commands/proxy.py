"""``mcpbind proxy``: one server served over another transport.

    mcpbind proxy --port 8000 -- npx -y some-server        # a stdio server over Streamable HTTP
    mcpbind proxy https://example.com/mcp                  # a remote server as a local stdio one
    mcpbind proxy --config servers.json --port 8000        # a gateway: many servers as one

The first form starts the command as a stdio server (restarted if it dies) and serves it at
``http://HOST:PORT/mcp`` (``--host`` 127.0.0.1 by default) to clients of every protocol
version, the stateless 2026-07-28 included, with its health at ``/healthz`` (200 while the
server is up, else 503). The second connects to the URL (Streamable HTTP,
else legacy SSE; signing in on a 401 as ``mcpbind call`` does) and serves it on this
process's stdin and stdout, for clients that only launch commands. Each forwarded call is
logged on stderr (``--log-level``, ``--log-payloads``). ``--upstream-version`` pins the version
spoken to the server (say 2025-11-25, to serve a server of both eras as one of a session).
With ``--config`` the servers of a configuration file are served as one (over HTTP, or
``--stdio``): see :mod:`mcpbind.proxy.gateway`. See :mod:`mcpbind.proxy` for what is forwarded
and how the protocol's eras are bridged.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from mcpbind.client.cli_auth import add_auth_arguments, auth_arguments_error, command_line_auth
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.commands.failures import CommandError, leaf
from mcpbind.commands.loop_option import add_loop_argument
from mcpbind.protocol.errors import McpError
from mcpbind.proxy import ConfigError, Upstream, read_config, serving_gateway, serving_proxy, upstreams_of
from mcpbind.proxy.health import HealthEndpoint
from mcpbind.server.auth.cli_options import add_auth_arguments as add_protection_arguments
from mcpbind.server.auth.cli_options import auth_from_arguments
from mcpbind.server.server import Server
from mcpbind.versions import SUPPORTED_VERSIONS

__all__ = ["add_proxy_arguments", "check_proxy", "run_proxy"]


def add_proxy_arguments(proxy: argparse.ArgumentParser) -> None:
    """The arguments of ``proxy`` (the parser of that command)."""
    proxy.add_argument(
        "server",
        nargs=argparse.REMAINDER,
        help="an http(s) URL (served on stdio), or -- then a command and its arguments (served over HTTP)",
    )
    proxy.add_argument(
        "--config",
        metavar="FILE",
        help='a gateway: the servers of FILE ({"mcpServers": {...}}, as MCP clients configure them) as one',
    )
    proxy.add_argument(
        "--stdio", action="store_true", help="--config: serve on stdin and stdout instead of HTTP"
    )
    proxy.add_argument(
        "--host", default="127.0.0.1", help="HTTP: the address to listen on (default 127.0.0.1)"
    )
    proxy.add_argument("--port", type=int, default=8000, help="HTTP: the TCP port (default 8000)")
    proxy.add_argument("--path", default="/mcp", help="HTTP: the endpoint's path (default /mcp)")
    proxy.add_argument(
        "--json-response",
        action="store_true",
        help="HTTP: answer requests as JSON, not SSE (progress and the server's questions go on the GET stream)",
    )
    proxy.add_argument(
        "--backend", choices=["asyncio", "trio"], default="asyncio", help="the event loop (default asyncio)"
    )
    add_loop_argument(proxy)
    proxy.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long a forwarded request may take (default: no limit of the proxy's own)",
    )
    proxy.add_argument(
        "--max-in-flight",
        type=int,
        default=256,
        metavar="N",
        help="requests forwarded to the server at once; more wait (default 256)",
    )
    proxy.add_argument(
        "--upstream-version",
        choices=SUPPORTED_VERSIONS,
        default=None,
        metavar="VERSION",
        help="the protocol version spoken to the server (default: the newest both speak)",
    )
    proxy.add_argument(
        "--no-restart", action="store_true", help="do not restart (reconnect) the server when it fails"
    )
    proxy.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="URL: an HTTP header sent with every request to the server (repeatable)",
    )
    proxy.add_argument(
        "--transport",
        choices=["auto", "streamable-http", "sse"],
        default="auto",
        help="URL: how to reach the server (default auto: Streamable HTTP, else legacy SSE)",
    )
    proxy.add_argument(
        "--log-level",
        choices=["debug", "info", "warning", "error"],
        default="info",
        help="what the proxy logs on stderr; info (default) logs each forwarded call, with no payloads",
    )
    proxy.add_argument("--log-payloads", action="store_true", help="log each call's params and result too")
    add_auth_arguments(proxy)
    add_protection_arguments(proxy)


def check_proxy(args: argparse.Namespace) -> None:
    """Refuse a bad command line before anything starts (:class:`CommandError`, exit code 2)."""
    _check_server(args)
    over_http = not args.stdio and not (args.config is None and _is_url(args.server[0]))
    try:  # (--auth-audience defaults to the URL served)
        args.protection = auth_from_arguments(
            args, f"http://{args.host}:{args.port}{args.path}", over_http=over_http
        )
    except ValueError as bad:
        raise CommandError(f"proxy: {bad}".replace("add --transport http", "serve over HTTP"), 2) from None


def _check_server(args: argparse.Namespace) -> None:
    server = list(args.server)
    if server and server[0] == "--":
        server = server[1:]
    args.server = server
    if args.config is not None:
        if server:
            raise CommandError("proxy: --config names the servers; give no other server", exit_code=2)
        try:
            args.entries = read_config(args.config)
        except ConfigError as exc:
            raise CommandError(f"proxy: {exc}", exit_code=2) from None
        return
    if args.stdio:
        raise CommandError("proxy: --stdio goes with --config (a URL is served on stdio anyway)", exit_code=2)
    if not server:
        raise CommandError("proxy: give a URL, or -- and the command of a stdio server", exit_code=2)
    args.server = server
    if _is_url(server[0]):
        if len(server) > 1:
            raise CommandError("proxy: a URL takes no arguments after it", exit_code=2)
        problem = auth_arguments_error(args)
        if problem is not None:
            raise CommandError(f"proxy: {problem}", exit_code=2)
    for header in args.header:
        if ":" not in header:
            raise CommandError(f"proxy: --header {header!r}: expected NAME:VALUE", exit_code=2)
    if args.max_in_flight < 1:
        raise CommandError("proxy: --max-in-flight must be at least 1", exit_code=2)


async def run_proxy(args: argparse.Namespace) -> int:
    """Serve until stopped (Ctrl-C, SIGTERM, or for stdio the end of stdin). A server that
    cannot be started or reached (the first connection fails), or an address that cannot be
    listened on, is a :class:`CommandError` (exit code 1)."""
    _log_to_stderr(args.log_level)
    if args.config is not None:
        return await _run_gateway(args)
    server = args.server
    remote_url = _is_url(server[0])
    failures: tuple[type[Exception], ...] = (OSError, McpError)
    if remote_url:
        from mcpbind.transports.http.client import HTTPTransportError, LegacySSEError

        failures = (OSError, McpError, HTTPTransportError, LegacySSEError)
    connector = _url_connector(server[0], args) if remote_url else _command_connector(server)
    upstream = Upstream(
        connector,
        name=server[0] if remote_url else shlex.join(server),
        request_timeout=args.timeout,
        restart=not args.no_restart,
        max_in_flight=args.max_in_flight,
        protocol_version=args.upstream_version,
    )
    options: dict[str, Any] = {"request_timeout": args.timeout, "log_payloads": args.log_payloads}
    connected = False
    try:
        async with serving_proxy(upstream, **options) as front:
            connected = True
            await _serve(front, args, [upstream], on_stdio=remote_url)
    except Exception as exc:
        if not connected:
            failure = leaf(exc, failures)
            if failure is not None:
                verb = "reach" if remote_url else "start"
                raise CommandError(f"proxy: cannot {verb} {upstream.name}: {failure}") from None
        elif not remote_url:
            failure = leaf(exc, OSError)
            if failure is not None:
                raise CommandError(f"proxy: cannot serve on {args.host}:{args.port}: {failure}") from None
        raise
    return 0


async def _run_gateway(args: argparse.Namespace) -> int:
    upstreams = upstreams_of(args.entries, restart=not args.no_restart)
    options: dict[str, Any] = {"request_timeout": args.timeout, "log_payloads": args.log_payloads}
    async with serving_gateway(upstreams, **options) as front:
        await _serve(front, args, upstreams, on_stdio=args.stdio)
    return 0


async def _serve(
    front: Server, args: argparse.Namespace, upstreams: list[Upstream], *, on_stdio: bool
) -> None:
    """Serve ``front`` on stdin and stdout, or over HTTP as the options say."""
    if on_stdio:
        await front.run_stdio()
        return
    await front.run_http(
        args.host, args.port, path=args.path, json_response=args.json_response, wrap=_wrap(args, upstreams)
    )


def _wrap(args: argparse.Namespace, upstreams: list[Upstream]) -> Any:
    """The HTTP front's middleware: the health endpoint, open to all, before the protection
    the ``--auth-*`` options ask for."""
    protection = args.protection

    def wrap(app: Any) -> Any:
        if protection is not None:
            from mcpbind.server.auth.middleware import ProtectedApp

            app = ProtectedApp(app, auth=protection)
        return HealthEndpoint(app, upstreams)

    return wrap


def _log_to_stderr(level: str) -> None:
    logger = logging.getLogger("mcpbind")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(level.upper())


def _is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def _command_connector(command: list[str]) -> Any:
    def connect(client: Client) -> AbstractAsyncContextManager[RemoteServer]:
        return client.connect_stdio(command[0], command[1:])

    return connect


def _url_connector(url: str, args: argparse.Namespace) -> Any:
    headers = dict(_header(h) for h in args.header)

    @asynccontextmanager
    async def connect(client: Client) -> AsyncIterator[RemoteServer]:
        async with (
            command_line_auth(url, args) as auth,
            client.connect_url(url, transport=args.transport, headers=headers, auth=auth) as remote,
        ):
            yield remote

    return connect


def _header(text: str) -> tuple[str, str]:
    name, _, value = text.partition(":")
    return name.strip(), value.strip()
