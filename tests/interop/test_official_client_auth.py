"""The official MCP Python SDK's client, with its OAuth provider (in a child process:
tests/interop/official_oauth_client.py), signing in through the tests' local authorization
server (tests/auth) to an mcpbind protected server, both served here on 127.0.0.1: discovery,
dynamic registration, the code flow with PKCE and ``resource``, tool calls as the signed-in
user, and a step-up for a tool needing more scope."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest

from tests.auth.server import serve_authorization_server
from tests.auth.signing import Algorithm
from tests.auth.stack import serve_protected
from tests.harness import child_env

pytestmark = pytest.mark.anyio

CLIENT = Path(__file__).with_name("official_oauth_client.py")


# The issuer has a path: the SDK reads the issuer as a pydantic URL, which adds a slash to a
# bare origin, and would then find the RFC 9207 ``iss`` of the redirect (the issuer exactly as
# configured) different from it.
@pytest.mark.parametrize(("algorithm", "introspection"), [("RS256", False), ("ES256", True)])
async def test_official_client_signs_in_to_an_mcpbind_server(
    algorithm: Algorithm, introspection: bool
) -> None:
    with anyio.fail_after(60):
        async with (
            serve_authorization_server(
                algorithm=algorithm, path="/oauth", token_format="opaque" if introspection else "jwt"
            ) as auth_server,
            serve_protected(auth_server, introspection=introspection, required_scopes=["mcp"]) as protected,
        ):
            done = await anyio.run_process(
                [sys.executable, str(CLIENT), protected.url], env=child_env(), check=False
            )
            assert done.returncode == 0, done.stderr.decode()
            seen = json.loads(done.stdout)

            client = auth_server.clients.clients[auth_server.issued[0].claims["client_id"]]
            assert client.name == "official-sdk-e2e"
            assert seen["tools"] == ["whoami", "write", "shutdown"]
            assert seen["whoami"] == f"alice {client.client_id} mcp"
            assert seen["write"] == "wrote from the SDK"
            assert seen["whoami_after"] == f"alice {client.client_id} mcp x:write"
            assert seen["scope"] == "mcp x:write"
            # Signed in once, then once more for the larger scope; each time with PKCE S256 and
            # the resource.
            first, second = (parse_qs(urlsplit(url).query) for url in seen["visited"])
            for query in (first, second):
                assert query["code_challenge_method"] == ["S256"]
                assert query["resource"] == [protected.url]
            assert (first["scope"], second["scope"]) == (["mcp"], ["mcp x:write"])
            assert len(auth_server.clients.registrations) == 1
            assert [token.claims["aud"] for token in auth_server.issued] == [protected.url] * 2
            assert [token.claims["scope"] for token in auth_server.issued] == ["mcp", "mcp x:write"]
