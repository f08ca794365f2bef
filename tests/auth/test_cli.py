"""``mcpbind call URL ...`` (a child process) against the protected mcpbind server through the
local authorization server: a sign-in through the printed URL with the test as the browser, the
tokens kept for the next call, and a machine's client credentials."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import anyio
import httpx
import pytest

from mcpbind.client.cli_auth import SECRET_ENV
from tests.auth.server import serve_authorization_server
from tests.auth.stack import serve_protected
from tests.cli_harness import finish, mcpbind_command, printed_url
from tests.harness import child_env

pytestmark = pytest.mark.anyio

TIMEOUT = 60


def call(url: str, backend: str, *options: str) -> list[str]:
    return mcpbind_command("call", url, "tools/call", "whoami", "--backend", backend, *options)


def tool_text(stdout: str | bytes) -> str:
    result = json.loads(stdout)
    assert not result.get("isError", False), result
    text: str = result["content"][0]["text"]
    return text


async def test_call_signs_in_then_reuses_the_tokens(anyio_backend: str, tmp_path: Path) -> None:
    store = tmp_path / "tokens.json"
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_authorization_server() as auth_server,
            serve_protected(auth_server, required_scopes=["mcp"]) as protected,
        ):
            command = call(protected.url, anyio_backend, "--no-browser", "--token-store", str(store))
            process = await anyio.open_process(command, env=child_env())
            async with process:
                url, _ = await printed_url(process)
                assert url.startswith(f"{auth_server.issuer}/authorize?")
                async with httpx.AsyncClient(follow_redirects=True) as browser:
                    page = await browser.get(url)  # approved, then back to the command's loopback
                assert page.status_code == 200
                code, out, err = await finish(process)
            assert code == 0, out + err
            [client] = auth_server.clients.clients.values()
            assert tool_text(out) == f"alice {client.client_id} mcp"
            assert stat.S_IMODE(store.stat().st_mode) == 0o600

            again = await anyio.run_process(
                call(protected.url, anyio_backend, "--token-store", str(store)), env=child_env(), check=False
            )
            assert again.returncode == 0, again.stderr
            assert tool_text(again.stdout) == f"alice {client.client_id} mcp"
            assert len(auth_server.authorization_requests) == 1
            assert auth_server.grant_types_issued() == ["authorization_code"]


async def test_call_with_client_credentials(anyio_backend: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_authorization_server() as auth_server,
            serve_protected(auth_server, required_scopes=["mcp"]) as protected,
        ):
            auth_server.clients.add_confidential("reporter", "reporter-secret")
            options = ("--client-credentials", "--client-id", "reporter", "--issuer", auth_server.issuer)
            env = {**child_env(), SECRET_ENV: "reporter-secret"}
            done = await anyio.run_process(call(protected.url, anyio_backend, *options), env=env, check=False)
            assert done.returncode == 0, done.stderr
            assert tool_text(done.stdout) == "reporter reporter mcp"
            assert auth_server.grant_types_issued() == ["client_credentials"]

            env[SECRET_ENV] = "not-it"
            refused = await anyio.run_process(
                call(protected.url, anyio_backend, *options), env=env, check=False
            )
            assert refused.returncode == 1
            assert b"invalid_client" in refused.stderr
            assert b"not-it" not in refused.stderr
