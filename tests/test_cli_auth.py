"""``mcpbind call URL`` against a server that demands authorization (the tests' own protected
MCP server and authorization server on 127.0.0.1): the sign-in through the printed URL with the
test as the browser, the tokens kept for the next call, client credentials, and the options'
errors."""

from __future__ import annotations

import json
import math
import os
import socket
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from joserfc.jwk import ECKey

from mcpbind.client.cli_auth import SECRET_ENV, UntimedAuthorizer, default_token_store
from tests.cli_harness import finish, mcpbind_command, printed_url, run_mcpbind
from tests.client.auth.mock_servers import MockOAuth, OAuthApp
from tests.harness import child_env
from tests.http_harness import serve_asgi


def code_flow() -> MockOAuth:
    """An authorization server for users: authorization code, public clients."""
    return MockOAuth(grant_types=["authorization_code", "refresh_token"], auth_methods=["none"])


@asynccontextmanager
async def served(oauth: MockOAuth) -> AsyncIterator[MockOAuth]:
    async with serve_asgi(OAuthApp(oauth)) as base:
        oauth.base = base
        yield oauth


def command(oauth: MockOAuth, backend: str, *options: str) -> list[str]:
    add = ["tools/call", "add", "--arg", "a=2", "--arg", "b=3", "--backend", backend]
    return mcpbind_command("call", oauth.resource, *add, *options)


@pytest.mark.anyio
async def test_call_signs_in_through_the_printed_url_then_reuses_the_tokens(
    anyio_backend: str, tmp_path: Path
) -> None:
    store = tmp_path / "auth" / "tokens.json"
    async with served(code_flow()) as oauth:
        options = ("--no-browser", "--token-store", str(store), "--scope", "mcp:tools", "--timeout", "6")
        with anyio.fail_after(60):
            process = await anyio.open_process(command(oauth, anyio_backend, *options), env=child_env())
            async with process:
                url, printed = await printed_url(process)
                assert url.startswith(f"{oauth.issuer}/authorize?")
                assert "Open this URL in a browser" in printed
                # The user takes longer than --timeout to sign in: that time does not count.
                await anyio.sleep(7)
                async with httpx.AsyncClient(follow_redirects=True) as browser:
                    page = await browser.get(url)  # the server approves and sends it back to the CLI
                assert page.status_code == 200
                assert "Authorization complete" in page.text
                code, out, err = await finish(process)
        assert code == 0, out + err
        assert json.loads(out)["structuredContent"] == {"result": 5}
        [registration] = oauth.registered.values()
        assert registration["redirect_uris"][0].startswith("http://127.0.0.1:")
        assert registration["application_type"] == "native"
        assert list(oauth.tokens.values()) == [frozenset({"mcp:tools"})]
        assert stat.S_IMODE(store.stat().st_mode) == 0o600

        # The next call finds the tokens in the store: no sign-in.
        again = await anyio.run_process(command(oauth, anyio_backend, *options), env=child_env(), check=False)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["structuredContent"] == {"result": 5}
    assert b"authorize" not in again.stderr
    assert len(oauth.tokens) == 1


@pytest.mark.anyio
async def test_call_with_client_credentials(anyio_backend: str) -> None:
    async with served(MockOAuth()) as oauth:
        env = {**child_env(), SECRET_ENV: "machine-secret"}
        options = ("--client-credentials", "--client-id", oauth.client_id, "--issuer", oauth.issuer)
        done = await anyio.run_process(command(oauth, anyio_backend, *options), env=env, check=False)
        elsewhere = (*options[:-1], "https://as.example.com")
        refused = await anyio.run_process(command(oauth, anyio_backend, *elsewhere), env=env, check=False)
    assert refused.returncode == 1
    assert b"invalid_issuer" in refused.stderr
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredContent"] == {"result": 5}
    assert [request.form["grant_type"] for request in oauth.requests] == ["client_credentials"]


@pytest.mark.anyio
async def test_call_with_a_private_key(anyio_backend: str, tmp_path: Path) -> None:
    key = ECKey.generate_key("P-256", private=True)
    pem = tmp_path / "client.pem"
    pem.write_bytes(key.as_pem(private=True))
    oauth = MockOAuth(
        client_secret=None, client_key=key, auth_methods=["private_key_jwt"], signing_algs=["ES256"]
    )
    async with served(oauth):
        options = ("--client-credentials", "--client-id", oauth.client_id, "--private-key", str(pem))
        done = await anyio.run_process(command(oauth, anyio_backend, *options), env=child_env(), check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredContent"] == {"result": 5}
    [claims] = oauth.assertion_claims
    assert claims["sub"] == oauth.client_id


@pytest.mark.anyio
async def test_a_failed_authorization_fails_the_call_in_one_line(anyio_backend: str) -> None:
    async with served(MockOAuth()) as oauth:
        env = {**child_env(), SECRET_ENV: "wrong-secret"}
        options = ("--client-credentials", "--client-id", oauth.client_id)
        done = await anyio.run_process(command(oauth, anyio_backend, *options), env=env, check=False)
    assert done.returncode == 1
    assert b"invalid_client" in done.stderr
    assert b"wrong-secret" not in done.stderr
    assert b"Traceback" not in done.stderr


@pytest.mark.anyio
async def test_no_auth_leaves_the_401(anyio_backend: str) -> None:
    async with served(code_flow()) as oauth:
        done = await anyio.run_process(
            command(oauth, anyio_backend, "--no-auth"), env=child_env(), check=False
        )
    assert done.returncode == 1
    assert b"401" in done.stderr
    assert oauth.requests == [] and oauth.registered == {}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--client-credentials"], "--client-credentials needs --client-id"),
        (["--client-secret", "s"], "--client-secret needs --client-id"),
        (["--redirect-port", "70000"], "not a TCP port"),
        (["--private-key", "k.pem"], "goes with --client-credentials"),
        (["--issuer", "https://as.example.com"], "goes with --client-credentials"),
        (["--client-credentials", "--client-id", "c", "--private-key", "/nonexistent.pem"], "no such file"),
    ],
)
def test_bad_auth_options(options: list[str], message: str) -> None:
    env = {key: value for key, value in child_env().items() if key != SECRET_ENV}
    done = run_mcpbind("call", "http://127.0.0.1:9/mcp", "tools/list", *options, env=env)
    assert done.returncode == 2
    assert message in done.stderr


def test_a_redirect_port_in_use() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = run_mcpbind("call", "http://127.0.0.1:9/mcp", "tools/list", "--redirect-port", port)
    assert done.returncode == 2
    assert f"--redirect-port {port}: cannot listen on 127.0.0.1" in done.stderr


def test_the_default_token_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    expected = Path(os.environ["APPDATA"]) if sys.platform == "win32" else tmp_path
    assert default_token_store() == expected / "mcpbind" / "tokens.json"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    if sys.platform != "win32":
        assert default_token_store() == Path.home() / ".config" / "mcpbind" / "tokens.json"


@pytest.mark.anyio
async def test_the_sign_in_does_not_count_toward_the_timeout(anyio_backend: str) -> None:
    seen: list[float] = []
    with anyio.CancelScope(deadline=anyio.current_time() + 5) as deadline:

        async def user(url: str) -> str:
            seen.append(deadline.deadline)
            return url + "?code=c"

        assert await UntimedAuthorizer(user, deadline)("http://127.0.0.1/cb") == "http://127.0.0.1/cb?code=c"
        left = deadline.deadline - anyio.current_time()
    assert seen == [math.inf]
    assert 0 < left <= 5
