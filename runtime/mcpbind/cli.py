"""The mcpbind command: serve a server, or call one.

    mcpbind serve path/to/server.py[:attr]        # or package.module[:attr]; stdio by default
    mcpbind serve server.py --transport http --port 8000    # Streamable HTTP at /mcp
    mcpbind serve server.py --transport http --header-timeout 5 --body-timeout 20
    mcpbind call "python server.py" tools/list
    mcpbind call "python server.py" tools/call echo --arg text=hello
    mcpbind call "python server.py" tools/call add --json '{"a": 1, "b": 2}'
    mcpbind call "python server.py" resources/read config://app
    mcpbind call "python server.py" prompts/get review --arg code=x
    mcpbind call http://127.0.0.1:8000/mcp tools/list       # a URL: Streamable HTTP (or legacy SSE)

call prints the JSON result on stdout and exits 1 on an error (a JSON-RPC error, or a tool
result with isError). --arg k=v values are converted to the types the tool's input schema
declares (integer, number, boolean, array, object); other values stay strings.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec

from mcpbind import __version__
from mcpbind.client import Client, ClientSession
from mcpbind.errors import McpError
from mcpbind.server import Server

__all__ = ["load_server", "main"]

_DEFAULT_ATTRS = ("server", "mcp", "app")


def load_server(target: str) -> Server:
    """The :class:`Server` that ``target`` names: ``file.py[:attr]`` or ``module[:attr]``."""
    location, _, attr = target.partition(":")
    if location.endswith(".py") or "/" in location or "\\" in location:
        path = Path(location).resolve()
        if not path.is_file():
            raise SystemExit(f"mcpbind: no such file: {location}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"mcpbind: cannot load {location}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        sys.path.insert(0, str(path.parent))
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(location)
    if attr:
        found = getattr(module, attr, None)
        if callable(found) and not isinstance(found, Server):
            found = found()  # a factory such as build()
        if not isinstance(found, Server):
            raise SystemExit(f"mcpbind: {target} is not an mcpbind Server")
        return found
    for name in _DEFAULT_ATTRS:
        found = getattr(module, name, None)
        if isinstance(found, Server):
            return found
    servers = [value for value in vars(module).values() if isinstance(value, Server)]
    if len(servers) == 1:
        return servers[0]
    raise SystemExit(f"mcpbind: name the server in {location} as {location}:ATTR ({len(servers)} found)")


def _coerce(value: str, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind in ("integer", "number", "boolean", "array", "object", "null"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            raise SystemExit(f"mcpbind: {value!r} is not a valid {kind}") from None
    return value


def _pairs(items: list[str], flag: str = "--arg") -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"mcpbind: {flag} takes key=value, not {item!r}")
        out[key] = value
    return out


async def _call(session: ClientSession, args: argparse.Namespace) -> tuple[Any, bool]:
    method: str = args.method
    target: str | None = args.target
    pairs = _pairs(args.arg or [])
    given: dict[str, Any] = json.loads(args.json) if args.json else {}
    if method == "tools/list":
        return await session.all_tools(), False
    if method == "tools/call":
        if target is None:
            raise SystemExit("mcpbind: tools/call needs a tool name")
        tools = {tool.name: tool for tool in await session.all_tools()}
        properties = tools[target].input_schema.get("properties", {}) if target in tools else {}
        arguments = {**given, **{k: _coerce(v, properties.get(k, {})) for k, v in pairs.items()}}
        result = await session.call_tool(target, arguments)
        return result, result.is_error is True
    if method == "resources/list":
        return await session.all_resources(), False
    if method == "resources/templates/list":
        return await session.all_resource_templates(), False
    if method == "resources/read":
        if target is None:
            raise SystemExit("mcpbind: resources/read needs a URI")
        return await session.read_resource(target), False
    if method == "prompts/list":
        return await session.all_prompts(), False
    if method == "prompts/get":
        if target is None:
            raise SystemExit("mcpbind: prompts/get needs a prompt name")
        return await session.get_prompt(target, {**{k: str(v) for k, v in given.items()}, **pairs}), False
    if method == "ping":
        await session.ping()
        return {}, False
    raise SystemExit(f"mcpbind: unsupported method {method}")


async def _run_call(args: argparse.Namespace) -> int:
    server: str = args.server
    client = Client("mcpbind", __version__)
    try:
        if server.startswith(("http://", "https://")):
            headers = _pairs(args.header or [], "--header")
            async with client.connect_url(server, headers=headers, timeout=args.timeout) as session:
                result, failed = await _call(session, args)
        else:
            command = shlex.split(server)
            async with client.connect_stdio(command[0], command[1:], timeout=args.timeout) as session:
                result, failed = await _call(session, args)
    except McpError as exc:
        print(json.dumps({"code": exc.code, "message": exc.message}), file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"mcpbind: cannot reach {server}: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
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
    call = commands.add_parser("call", help="call a server and print the JSON result")
    call.add_argument("server", help='a URL, or a stdio command quoted as one argument ("python server.py")')
    call.add_argument(
        "method",
        help="tools/list, tools/call, resources/list, resources/templates/list, resources/read, "
        "prompts/list, prompts/get, ping",
    )
    call.add_argument("target", nargs="?", help="the tool or prompt name, or the resource URI")
    call.add_argument("--arg", action="append", metavar="KEY=VALUE", help="an argument (repeatable)")
    call.add_argument("--json", metavar="OBJECT", help="the arguments as one JSON object")
    call.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="give up when the server has not started and initialized within this (default 30)",
    )
    call.add_argument("--header", action="append", metavar="NAME=VALUE", help="an HTTP header (repeatable)")
    call.add_argument(
        "--backend",
        choices=["asyncio", "trio"],
        default="asyncio",
        help="the client's event loop (default asyncio; trio needs the trio extra)",
    )
    args = parser.parse_args(argv)
    if args.command == "serve":
        server = load_server(args.target)
        if args.transport == "http":
            options: dict[str, Any] = {"path": args.path}
            if args.stateless:
                options["stateless"] = True
            if args.json_response:
                options["json_response"] = True
            for name in ("header_timeout", "body_timeout", "keep_alive_timeout"):
                if getattr(args, name) is not None:
                    options[name] = getattr(args, name)
            try:
                server.run_http_sync(args.host, args.port, args.backend, **options)
            except KeyboardInterrupt:
                pass
            except OSError as exc:  # the address is in use, say
                print(f"mcpbind: cannot serve on {args.host}:{args.port}: {exc}", file=sys.stderr)
                return 1
            return 0
        server.run_stdio_sync(args.backend)
        return 0
    code: int = anyio.run(_run_call, args, backend=args.backend)
    return code


if __name__ == "__main__":
    sys.exit(main())
