"""The client the official MCP conformance suite starts for its client scenarios.

The suite runs ``python examples/conformance_client.py [--backend trio] URL`` against a mock
server of its own, with the scenario's name in ``MCP_CONFORMANCE_SCENARIO``; this client does
what that scenario expects over Streamable HTTP and exits 0, or prints why not and exits 1.

    initialize                           connect (initialize + initialized), then close
    tools_call                           call ``add_numbers`` with {a, b}
    elicitation-sep1034-client-defaults  call ``test_client_elicitation_defaults``, accept the
                                         elicitation with every default of its schema filled in
    sse-retry                            call ``test_reconnection``: the server ends the stream,
                                         the transport reconnects after ``retry:`` with
                                         Last-Event-ID and gets the answer

Other scenarios (``auth/*``) are not supported yet: exit 2 with a message.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = ["SCENARIOS", "ScenarioFailed", "accept_with_defaults", "defaults_of", "main", "run"]

UNSUPPORTED = 2


class ScenarioFailed(Exception):
    """The scenario did not go as it should; the message says how."""


def defaults_of(schema: types.ElicitRequestFormParamsRequestedSchema) -> dict[str, Any]:
    """Every property of an elicitation form that declares a ``default``, with that default."""
    filled: dict[str, Any] = {}
    for name, prop in schema.properties.items():
        default = getattr(prop, "default", types.UNSET)
        if not isinstance(default, types.UnsetType):
            filled[name] = default  # a number stays as it came: 30 an int, 95.5 a float
    return filled


async def accept_with_defaults(params: Any, ctx: RequestContext) -> types.ElicitResult:
    """Elicitation handler: accept a form with its defaults as the answer; decline URL mode."""
    if not isinstance(params, types.ElicitRequestFormParams):
        return types.ElicitResult(action="decline")
    return types.ElicitResult(action="accept", content=defaults_of(params.requested_schema))


def _text(result: types.CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def _call(session: RemoteServer, name: str, arguments: dict[str, Any]) -> str:
    tools = {tool.name for tool in await session.all_tools()}
    if name not in tools:
        raise ScenarioFailed(f"the server lists no tool {name!r} (it has {sorted(tools)})")
    result = await session.call_tool(name, arguments)
    if result.is_error is True:
        raise ScenarioFailed(f"{name} answered with an error: {_text(result)}")
    return _text(result)


async def _initialize(session: RemoteServer) -> str:
    return f"initialized with {session.server_info.name}, protocol {session.protocol_version}"


async def _tools_call(session: RemoteServer) -> str:
    return await _call(session, "add_numbers", {"a": 5, "b": 3})


async def _elicitation_defaults(session: RemoteServer) -> str:
    return await _call(session, "test_client_elicitation_defaults", {})


async def _sse_retry(session: RemoteServer) -> str:
    return await _call(session, "test_reconnection", {})


Scenario = Callable[[RemoteServer], Awaitable[str]]

SCENARIOS: dict[str, tuple[Scenario, Client]] = {
    "initialize": (_initialize, Client("mcpbind-conformance-client", "0.1.0")),
    "tools_call": (_tools_call, Client("mcpbind-conformance-client", "0.1.0")),
    "elicitation-sep1034-client-defaults": (
        _elicitation_defaults,
        Client("mcpbind-conformance-client", "0.1.0", elicitation=accept_with_defaults),
    ),
    "sse-retry": (_sse_retry, Client("mcpbind-conformance-client", "0.1.0")),
}


async def run(scenario: str, url: str) -> str:
    """Play ``scenario`` against the server at ``url``; what happened, or ``ScenarioFailed``."""
    from mcpbind.transports.http.client import open_streamable_http

    play, client = SCENARIOS[scenario]
    async with open_streamable_http(url) as transport, client.connect(transport, timeout=30) as session:
        return await play(session)


def _describe(exc: BaseException) -> str:
    """The error itself, from inside the exception groups that task groups wrap it in."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Play the conformance scenario in MCP_CONFORMANCE_SCENARIO.")
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("url", help="the MCP endpoint of the suite's mock server")
    options = parser.parse_args(argv)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if scenario not in SCENARIOS:
        print(
            f"conformance_client: scenario {scenario!r} is not supported (supported: {', '.join(SCENARIOS)})",
            file=sys.stderr,
        )
        return UNSUPPORTED
    try:
        outcome = anyio.run(run, scenario, options.url, backend=options.backend)
    except Exception as exc:  # one line saying why, and a non-zero exit, whatever went wrong
        print(f"conformance_client: {scenario} failed: {_describe(exc)}", file=sys.stderr)
        return 1
    print(f"{scenario}: {outcome}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
