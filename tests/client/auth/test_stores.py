"""Token stores: kept per authorization server (issuer) and resource; the file store is private
to its owner and replaced atomically."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcpbind.client.auth.stores import FileTokenStore, MemoryTokenStore, StoredTokens, TokenStore
from mcpbind.oauth.registration import ClientInformation
from mcpbind.oauth.tokens import TokenResponse

pytestmark = pytest.mark.anyio

A, B = "https://as-a.test", "https://as-b.test"
RESOURCE = "https://mcp.test/mcp"


@pytest.fixture(params=["memory", "file"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> TokenStore:
    return (
        MemoryTokenStore() if request.param == "memory" else FileTokenStore(tmp_path / "auth" / "tokens.json")
    )


async def test_tokens_and_clients_are_kept_per_issuer(store: TokenStore) -> None:
    await store.set_client(A, ClientInformation(client_id="id-a", client_secret="secret-a"))
    await store.set_tokens(A, RESOURCE, StoredTokens(access_token="at-a", refresh_token="rt-a"))
    assert await store.get_client(B) is None
    assert await store.get_tokens(B, RESOURCE) is None
    assert await store.get_tokens(A, "https://other.test/mcp") is None
    client = await store.get_client(A)
    assert client is not None and client.client_secret == "secret-a"
    tokens = await store.get_tokens(A, RESOURCE)
    assert tokens is not None and tokens.refresh_token == "rt-a"


async def test_forgetting(store: TokenStore) -> None:
    await store.set_client(A, ClientInformation(client_id="id-a"))
    await store.set_tokens(A, RESOURCE, StoredTokens(access_token="at-a"))
    await store.set_tokens(B, RESOURCE, StoredTokens(access_token="at-b"))
    await store.forget_tokens(B, RESOURCE)
    assert await store.get_tokens(B, RESOURCE) is None
    await store.forget_client(A)  # the tokens that registration got go too
    assert await store.get_client(A) is None and await store.get_tokens(A, RESOURCE) is None


async def test_the_file_is_private_and_survives_a_new_store(tmp_path: Path) -> None:
    path = tmp_path / "auth" / "tokens.json"
    await FileTokenStore(path).set_tokens(A, RESOURCE, StoredTokens(access_token="at-a"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert os.listdir(path.parent) == ["tokens.json"]  # no temporary file left behind
    tokens = await FileTokenStore(path).get_tokens(A, RESOURCE)
    assert tokens is not None and tokens.access_token == "at-a"


async def test_an_existing_file_gets_private_on_the_next_write(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("")
    path.chmod(0o644)
    await FileTokenStore(path).set_client(A, ClientInformation(client_id="id-a"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_stored_tokens_from_a_response() -> None:
    response = TokenResponse(access_token="at", token_type="Bearer", expires_in=60)
    tokens = StoredTokens.from_response(
        response, requested_scope="a b", previous_refresh_token="rt", now=1000.0
    )
    assert (tokens.expires_at, tokens.scope, tokens.refresh_token) == (1060.0, "a b", "rt")
    assert not tokens.expired(now=1000.0) and tokens.expired(now=1040.0)  # 30 s margin
    assert not StoredTokens(access_token="x").expired()


async def test_a_file_that_is_no_store_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a token store"):
        await FileTokenStore(path).get_client(A)
