"""``mcpbind call``: its options (the server, the method and its target, the arguments, the
timeout, the protocol version; signing in, from :mod:`mcpbind.client.cli_auth`),
:func:`check_call`, which reads them before any server is started, and :func:`run_call`, which
makes the call and prints its JSON result."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import msgspec

from mcpbind import __version__
from mcpbind.client.cli_auth import add_auth_arguments, auth_arguments_error, command_line_auth
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.commands.failures import CommandError, leaf
from mcpbind.protocol.errors import McpError
from mcpbind.versions import SUPPORTED_VERSIONS

__all__ = ["add_call_arguments", "check_call", "run_call"]

# The methods that take a target, and what it is.
_TARGETS: Final = {"tools/call": "a tool name", "resources/read": "a URI", "prompts/get": "a prompt name"}
_METHODS: Final = (
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "ping",
)


def add_call_arguments(call: argparse.ArgumentParser) -> None:
    """The arguments of ``call`` (the parser of that command)."""
    call.add_argument("server", help='a URL, or a stdio command quoted as one argument ("python server.py")')
    call.add_argument("method", help=", ".join(_METHODS))
    call.add_argument("target", nargs="?", help="the tool or prompt name, or the resource URI")
    call.add_argument("--arg", action="append", metavar="KEY=VALUE", help="an argument (repeatable)")
    call.add_argument("--json", metavar="OBJECT", help="the arguments as one JSON object")
    call.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="give up after this long, exit code 1 (default 30): starting or reaching the server, "
        "initializing and the request all count",
    )
    call.add_argument("--header", action="append", metavar="NAME=VALUE", help="an HTTP header (repeatable)")
    call.add_argument(
        "--protocol-version",
        metavar="VERSION",
        help="speak this protocol version (default: negotiate, the newest stateless version when "
        "the server speaks it, else the newest handshake version both speak)",
    )
    call.add_argument(
        "--backend",
        choices=["asyncio", "trio"],
        default="asyncio",
        help="the client's event loop (default asyncio; trio needs the trio extra)",
    )
    add_auth_arguments(call)


def _coerce(value: str, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind in ("integer", "number", "boolean", "array", "object", "null"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            raise CommandError(f"{value!r} is not a valid {kind}", 2) from None
    return value


def _guess(value: str) -> Any:
    """A value for an argument of unknown type: the JSON it holds, else the string itself."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise CommandError(f"{flag} takes key=value, not {item!r}", 2)
        out[key] = value
    return out


def check_call(args: argparse.Namespace) -> None:
    """Read what ``call``'s command line gives (``args.pairs``, ``args.given``, ``args.headers``)
    before any server is started; a bad value is a :class:`CommandError` (exit code 2)."""
    if args.method not in _METHODS:
        raise CommandError(f"unsupported method {args.method} (one of {', '.join(_METHODS)})", 2)
    if args.method in _TARGETS and args.target is None:
        raise CommandError(f"{args.method} needs {_TARGETS[args.method]}", 2)
    if args.timeout <= 0:
        raise CommandError("--timeout takes a positive number of seconds", 2)
    if (auth_error := auth_arguments_error(args)) is not None:
        raise CommandError(auth_error, 2)
    args.pairs = _pairs(args.arg or [], "--arg")
    args.headers = _pairs(args.header or [], "--header")
    args.given = {}
    if args.json is not None:
        try:
            args.given = json.loads(args.json)
        except json.JSONDecodeError as exc:
            raise CommandError(f"--json is not valid JSON: {exc}", 2) from None
        if not isinstance(args.given, dict):
            raise CommandError(f"--json takes a JSON object, not {args.json}", 2)


async def _tool_arguments(session: RemoteServer, name: str, args: argparse.Namespace) -> dict[str, Any]:
    """The tool's arguments: ``--json``, and ``--arg`` values as the tool's listed input schema
    types them, or as :func:`_guess` reads them when the server does not list the tool."""
    arguments: dict[str, Any] = dict(args.given)
    if not args.pairs:
        return arguments
    try:
        tools = await session.all_tools()
    except McpError:  # no listing (say, a server handling only tools/call)
        tools = []
    schema = next((tool.input_schema for tool in tools if tool.name == name), None)
    if schema is None:
        arguments.update((k, _guess(v)) for k, v in args.pairs.items())
    else:
        properties = schema.get("properties", {})
        arguments.update((k, _coerce(v, properties.get(k, {}))) for k, v in args.pairs.items())
    return arguments


async def _call(session: RemoteServer, args: argparse.Namespace) -> tuple[Any, bool]:
    method: str = args.method
    target: str = args.target
    if method == "tools/list":
        return await session.all_tools(), False
    if method == "tools/call":
        result = await session.call_tool(target, await _tool_arguments(session, target, args))
        return result, result.is_error is True
    if method == "resources/list":
        return await session.all_resources(), False
    if method == "resources/templates/list":
        return await session.all_resource_templates(), False
    if method == "resources/read":
        return await session.read_resource(target), False
    if method == "prompts/list":
        return await session.all_prompts(), False
    if method == "prompts/get":
        given = {k: str(v) for k, v in args.given.items()}
        return await session.get_prompt(target, {**given, **args.pairs}), False
    await session.ping()
    return {}, False


@asynccontextmanager
async def _connect(
    client: Client, args: argparse.Namespace, deadline: anyio.CancelScope
) -> AsyncIterator[RemoteServer]:
    server: str = args.server
    if server.startswith(("http://", "https://")):
        # --timeout bounds the whole call; the HTTP client's own timers must not end it sooner.
        limit = args.timeout + 1
        async with (
            command_line_auth(server, args, deadline) as auth,
            client.connect_url(
                server,
                headers=args.headers,
                auth=auth,
                http_timeout=limit,  # (plus a sign-in's time: OAuth.authorization_timeout)
                sse_read_timeout=max(limit, 300.0),
            ) as session,
        ):
            yield session
    else:
        command = shlex.split(server)
        if not command:
            raise CommandError("the server command is empty", 2)
        async with client.connect_stdio(command[0], command[1:]) as session:
            yield session


async def run_call(args: argparse.Namespace) -> int:
    """Make the call ``args`` (checked by :func:`check_call`) describe and print its result as
    JSON on stdout; the exit code (1 for a result with ``isError`` or a JSON-RPC error, printed
    on stderr). No answer within ``--timeout`` or a server that cannot be reached is a
    :class:`CommandError`."""
    server: str = args.server
    unreachable: tuple[type[Exception], ...] = (OSError,)
    if server.startswith(("http://", "https://")):
        from mcpbind.transports.http.client import HTTPTransportError, LegacySSEError

        unreachable = (OSError, HTTPTransportError, LegacySSEError)
    pin: str | None = args.protocol_version
    if pin is not None and pin not in SUPPORTED_VERSIONS:
        raise CommandError(
            f"--protocol-version {pin}: not one of the versions mcpbind speaks ({', '.join(SUPPORTED_VERSIONS)})",
            2,
        )
    # Without a pin the client negotiates: server/discover (MCP 2026-07-28), else initialize.
    client = Client("mcpbind", __version__, protocol_version=pin, request_timeout=None)
    with anyio.move_on_after(args.timeout) as deadline:
        try:
            async with _connect(client, args, deadline) as session:
                result, failed = await _call(session, args)
        except Exception as exc:
            if anyio.current_time() >= deadline.deadline:  # (the transport closing as it ends)
                raise _timed_out(args) from exc
            error = leaf(exc, McpError)
            if error is not None:
                print(json.dumps({"code": error.code, "message": error.message}), file=sys.stderr)
                return 1
            failure = leaf(exc, unreachable)
            if failure is not None:
                raise CommandError(f"cannot reach {server}: {failure}") from exc
            raise
    if deadline.cancelled_caught:
        raise _timed_out(args)
    sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
    return 1 if failed else 0


def _timed_out(args: argparse.Namespace) -> CommandError:
    asked = " ".join(filter(None, (args.method, args.target)))
    return CommandError(f"{asked}: no answer within {args.timeout:g} s (--timeout)")
