"""The mcpbind command: serve a server, or call one.

    mcpbind serve path/to/server.py[:attr]        # or package.module[:attr]; stdio by default
    mcpbind serve server.py --transport http --port 8000    # Streamable HTTP at /mcp
    mcpbind serve server.py --transport http --header-timeout 5 --body-timeout 20
    mcpbind serve server.py --transport http --loop asyncio   # not uvloop (used when installed)
    mcpbind serve server.py --transport http --workers 4 --store redis://127.0.0.1:6379/0
    mcpbind call "python server.py" tools/list
    mcpbind call "python server.py" tools/call echo --arg text=hello
    mcpbind call "python server.py" tools/call add --json '{"a": 1, "b": 2}'
    mcpbind call "python server.py" resources/read config://app
    mcpbind call "python server.py" prompts/get review --arg code=x
    mcpbind call http://127.0.0.1:8000/mcp tools/list       # a URL: Streamable HTTP (or legacy SSE)
    mcpbind call https://example.com/mcp tools/list --no-browser   # signs in (OAuth) on a 401
    mcpbind proxy --port 8000 -- npx -y some-server    # a stdio server over Streamable HTTP
    mcpbind proxy https://example.com/mcp              # a remote server as a local stdio server

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
command line; 130 call interrupted (Ctrl-C). serve and proxy stopped with Ctrl-C exit 0, quietly. Other
failures are one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import Final

import anyio

from mcpbind import __version__
from mcpbind.commands.call import add_call_arguments, check_call, run_call
from mcpbind.commands.failures import CommandError, leaf, missing_extra
from mcpbind.commands.loading import load_server
from mcpbind.commands.loop_option import loop_options
from mcpbind.commands.proxy import add_proxy_arguments, check_proxy, run_proxy
from mcpbind.commands.serve import add_serve_arguments, serve

__all__ = ["CommandError", "load_server", "main"]

_INTERRUPTED: Final = 130  # call stopped by Ctrl-C (128 + SIGINT), as shells report it


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpbind", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"mcpbind {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    add_serve_arguments(commands.add_parser("serve", help="run a server"))
    add_call_arguments(commands.add_parser("call", help="call a server and print the JSON result"))
    add_proxy_arguments(commands.add_parser("proxy", help="serve a server over another transport"))
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    args = _parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # (what a supervisor's workers run)
    try:
        if args.command == "serve":
            return serve(args)
        if args.command == "proxy":
            check_proxy(args)
            proxy_code: int = anyio.run(
                run_proxy, args, backend=args.backend, backend_options=loop_options(args)
            )
            return proxy_code
        check_call(args)
        code: int = anyio.run(run_call, args, backend=args.backend)
        return code
    except CommandError as exc:
        print(f"mcpbind: {exc}", file=sys.stderr)
        return exc.exit_code
    except BaseException as exc:
        failure = leaf(exc, CommandError)
        if failure is not None:  # raised inside a task group
            print(f"mcpbind: {failure}", file=sys.stderr)
            return int(failure.exit_code)
        if leaf(exc, KeyboardInterrupt) is not None:
            return _INTERRUPTED if args.command == "call" else 0
        missing = missing_extra(exc)
        if missing is None:
            raise
        print(f"mcpbind: {missing}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
