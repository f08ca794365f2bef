"""The mcpbind command: serve a server, or call one.

    mcpbind serve path/to/server.py[:attr]        # or package.module[:attr]; stdio by default
    mcpbind serve server.py --transport http --port 8000    # Streamable HTTP at /mcp
    mcpbind serve server.py --transport http --header-timeout 5 --body-timeout 20
    mcpbind serve server.py --transport http --workers 4 --store redis://127.0.0.1:6379/0
    mcpbind call "python server.py" tools/list
    mcpbind call "python server.py" tools/call echo --arg text=hello
    mcpbind call "python server.py" tools/call add --json '{"a": 1, "b": 2}'
    mcpbind call "python server.py" resources/read config://app
    mcpbind call "python server.py" prompts/get review --arg code=x
    mcpbind call http://127.0.0.1:8000/mcp tools/list       # a URL: Streamable HTTP (or legacy SSE)
    mcpbind call https://example.com/mcp tools/list --no-browser   # signs in (OAuth) on a 401

call prints the JSON result on stdout. --arg k=v values are converted to the types the tool's
input schema declares (integer, number, boolean, array, object; other values stay strings);
when the server does not list the tool, each value is read as JSON if it parses, else kept as a
string. --timeout bounds the whole call: starting or reaching the server, initializing, and the
request.

serve --workers N runs N processes sharing the port under a supervisor, which restarts one that
dies and stops them all on Ctrl-C or SIGTERM; workers given the same --store (and separate
serve processes behind a load balancer) share what they need through it.

Exit codes: 0 done; 1 failed (a JSON-RPC error, printed as JSON on stderr; a tool result with
isError; no answer within --timeout; the server cannot be loaded, reached or served); 2 a bad
command line; 130 call interrupted (Ctrl-C). serve stopped with Ctrl-C exits 0, quietly. Other
failures are one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import shlex
import sys
import traceback
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import anyio
import msgspec

from mcpbind import __version__
from mcpbind.client.cli_auth import (
    add_auth_arguments as add_call_auth_arguments,
)
from mcpbind.client.cli_auth import (
    auth_arguments_error,
    command_line_auth,
)
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.errors import McpError
from mcpbind.server.auth.cli_options import add_auth_arguments as add_serve_auth_arguments
from mcpbind.server.auth.cli_options import auth_from_arguments
from mcpbind.server.server import Server
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
from mcpbind.versions import SUPPORTED_VERSIONS

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = ["CommandError", "load_server", "main"]

_DEFAULT_ATTRS = ("server", "mcp", "app")

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
_INTERRUPTED: Final = 130  # call stopped by Ctrl-C (128 + SIGINT), as shells report it


class CommandError(Exception):
    """A failure the command reports as one line on stderr (``mcpbind: ...``), exiting with
    ``exit_code`` (1; 2 for a bad command line)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _describe(exc: BaseException) -> str:
    """``exc`` in one line: its type, message and, but for a syntax error (whose message says
    where), the file and line that raised it."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError):
        return text
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<frozen")]
    return f"{text} ({frames[-1].filename}:{frames[-1].lineno})" if frames else text


def load_server(target: str) -> Server:
    """The :class:`Server` that ``target`` names: ``file.py[:attr]`` or ``module[:attr]``; an
    ``attr`` that is not a Server is called (a factory such as ``build``). Raises
    :class:`CommandError` when there is no such file, module or attribute, when loading the
    module or calling the factory fails, or when it finds no Server."""
    location, _, attr = target.partition(":")
    if location.endswith(".py") or "/" in location or "\\" in location:
        path = Path(location).resolve()
        if not path.is_file():
            raise CommandError(f"no such file: {location}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise CommandError(f"cannot load {location}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        sys.path.insert(0, str(path.parent))
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise CommandError(f"cannot load {location}: {_describe(exc)}") from exc
    else:
        try:
            module = importlib.import_module(location)
        except ModuleNotFoundError as exc:
            if exc.name == location or location.startswith(f"{exc.name}."):  # the module itself
                raise CommandError(f"no module named {location!r}") from exc
            raise CommandError(f"cannot import {location}: {_describe(exc)}") from exc
        except Exception as exc:
            raise CommandError(f"cannot import {location}: {_describe(exc)}") from exc
    if attr:
        if not hasattr(module, attr):
            raise CommandError(f"{location} has no attribute {attr!r}")
        found = getattr(module, attr)
        if callable(found) and not isinstance(found, Server):
            try:
                found = found()  # a factory such as build()
            except Exception as exc:
                raise CommandError(f"{target}() failed: {_describe(exc)}") from exc
        if not isinstance(found, Server):
            raise CommandError(f"{target} is not an mcpbind Server")
        return found
    for name in _DEFAULT_ATTRS:
        found = getattr(module, name, None)
        if isinstance(found, Server):
            return found
    servers = [value for value in vars(module).values() if isinstance(value, Server)]
    if len(servers) == 1:
        return servers[0]
    raise CommandError(f"name the server in {location} as {location}:ATTR ({len(servers)} found)")


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


def _check_call(args: argparse.Namespace) -> None:
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


async def _run_call(args: argparse.Namespace) -> int:
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
            error = _leaf(exc, McpError)
            if error is not None:
                print(json.dumps({"code": error.code, "message": error.message}), file=sys.stderr)
                return 1
            failure = _leaf(exc, unreachable)
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


def _serve(args: argparse.Namespace) -> int:
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
    server = load_server(args.target)
    if args.transport == "stdio":
        server.run_stdio_sync(args.backend)
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
        anyio.run(serve_http, server, args, store, options, backend=args.backend)
    except BaseException as exc:
        in_use = _leaf(exc, OSError)  # the address is in use, say
        if in_use is None or _leaf(exc, KeyboardInterrupt) is not None:
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
        raise CommandError(f"--store: {lost}") from None


def _supervise(args: argparse.Namespace) -> int:
    try:
        return supervise(args)
    except OSError as exc:  # the address is in use, say
        raise CommandError(f"cannot serve on {args.host}:{args.port}: {exc}") from exc


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, or the exceptions inside it if it is a group (nested groups too)."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def _leaf(exc: BaseException, kind: type[Any] | tuple[type[Any], ...]) -> Any:
    """The first exception of ``kind`` among :func:`_leaves`, or ``None``."""
    return next((leaf for leaf in _leaves(exc) if isinstance(leaf, kind)), None)


def _missing_extra(exc: BaseException) -> str | None:
    """The line to print when ``exc`` says an optional dependency is missing: which extra to
    install (anyio reports a backend it cannot import as a ``LookupError`` caused by it)."""
    for leaf in _leaves(exc):
        cause: BaseException | None = leaf
        while cause is not None and not isinstance(cause, ModuleNotFoundError):
            cause = cause.__cause__
        if cause is not None and cause.name is not None:
            extra = _EXTRAS.get(cause.name.partition(".")[0])
            if extra is not None:
                name, needed_by = extra
                return f'{cause}; {needed_by} needs the {name} extra: pip install "mcpbind[{name}]"'
    return None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpbind", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"mcpbind {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run a server")
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
    add_serve_auth_arguments(serve)
    call = commands.add_parser("call", help="call a server and print the JSON result")
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
    add_call_auth_arguments(call)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    args = _parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # (what a supervisor's workers run)
    try:
        if args.command == "serve":
            return _serve(args)
        _check_call(args)
        code: int = anyio.run(_run_call, args, backend=args.backend)
        return code
    except CommandError as exc:
        print(f"mcpbind: {exc}", file=sys.stderr)
        return exc.exit_code
    except BaseException as exc:
        failure = _leaf(exc, CommandError)
        if failure is not None:  # raised inside a task group
            print(f"mcpbind: {failure}", file=sys.stderr)
            return int(failure.exit_code)
        if _leaf(exc, KeyboardInterrupt) is not None:
            return 0 if args.command == "serve" else _INTERRUPTED
        missing = _missing_extra(exc)
        if missing is None:
            raise
        print(f"mcpbind: {missing}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
