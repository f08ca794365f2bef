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

    auth/*                               authorize with OAuth 2.1 against the suite's
                                         authorization server (its authorization endpoint
                                         redirects at once: the authorizer GETs the URL and
                                         returns the Location), then list the tools and call
                                         the first one; ``MCP_CONFORMANCE_CONTEXT`` carries
                                         pre-registered credentials where the scenario has
                                         them; client credentials (JWT or secret) and
                                         cross-app access get their tokens without a user

Other scenarios: exit 2 with a message.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx

from mcpbind.client.auth import ClientCredentials, CrossAppAccess, OAuth
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.oauth.registration import ClientInformation, ClientMetadata
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = [
    "AUTH_SCENARIOS",
    "MACHINE_AUTH_SCENARIOS",
    "SCENARIOS",
    "ScenarioFailed",
    "accept_with_defaults",
    "conformance_oauth",
    "defaults_of",
    "machine_auth",
    "main",
    "run",
]

UNSUPPORTED = 2

# The authorization scenarios of the core flow (authorization code + PKCE).
AUTH_SCENARIOS = (
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
)
REDIRECT_URI = "http://localhost:3030/callback"
# The suite's authorization server expects this URL as the client_id when it supports Client ID
# Metadata Documents (it does not fetch it).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


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


async def _list_and_call_first(session: RemoteServer) -> str:
    tools = await session.all_tools()
    if not tools:
        raise ScenarioFailed("the server lists no tools")
    result = await session.call_tool(tools[0].name, {})
    if result.is_error is True:
        raise ScenarioFailed(f"{tools[0].name} answered with an error: {_text(result)}")
    return f"authorized; {tools[0].name} answered {_text(result)!r}"


async def _follow_once(url: str) -> str:
    """The suite's authorizer: its authorization endpoint answers with a redirect at once."""
    import httpx

    async with httpx.AsyncClient(follow_redirects=False) as http:
        response = await http.get(url)
    location: str | None = response.headers.get("Location")
    if response.status_code not in (301, 302, 303, 307, 308) or location is None:
        raise ScenarioFailed(f"the authorization endpoint answered {response.status_code} without a redirect")
    return location


def conformance_oauth(url: str, context: dict[str, Any]) -> OAuth:
    """The OAuth flow the auth scenarios use; ``context``: the scenario's MCP_CONFORMANCE_CONTEXT."""
    information = None
    if "client_id" in context:
        information = ClientInformation(
            client_id=context["client_id"], client_secret=context.get("client_secret")
        )
    return OAuth(
        url,
        client_metadata=ClientMetadata(
            client_name="mcpbind-conformance-client",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        authorize=_follow_once,
        client_metadata_url=CLIENT_METADATA_URL,
        client_information=information,
    )


# The authorization scenarios without a user: client credentials and cross-app access.
MACHINE_AUTH_SCENARIOS = (
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow",
)


def machine_auth(scenario: str, url: str, context: dict[str, Any]) -> httpx.Auth:
    """The flow of a scenario of ``MACHINE_AUTH_SCENARIOS``, with the credentials of its context."""
    if scenario == "auth/client-credentials-jwt":
        return ClientCredentials(
            url,
            client_id=context["client_id"],
            private_key=context["private_key_pem"],
            signing_algorithm=context.get("signing_algorithm"),
        )
    if scenario == "auth/client-credentials-basic":
        return ClientCredentials(url, client_id=context["client_id"], client_secret=context["client_secret"])
    return CrossAppAccess(
        url,
        id_token=context["idp_id_token"],
        idp_client_id=context["idp_client_id"],
        idp_token_endpoint=context.get("idp_token_endpoint"),
        idp_issuer=context.get("idp_issuer"),
        client_id=context["client_id"],
        client_secret=context["client_secret"],
    )


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
for _name in AUTH_SCENARIOS + MACHINE_AUTH_SCENARIOS:
    SCENARIOS[_name] = (_list_and_call_first, Client("mcpbind-conformance-client", "0.1.0"))


async def run(scenario: str, url: str) -> str:
    """Play ``scenario`` against the server at ``url``; what happened, or ``ScenarioFailed``."""
    from mcpbind.transports.http.client import open_streamable_http

    play, client = SCENARIOS[scenario]
    auth: httpx.Auth | None = None
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if scenario in MACHINE_AUTH_SCENARIOS:
        auth = machine_auth(scenario, url, context)
    elif scenario.startswith("auth/"):
        auth = conformance_oauth(url, context)
    async with (
        open_streamable_http(url, auth=auth) as transport,
        client.connect(transport, timeout=30) as session,
    ):
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
