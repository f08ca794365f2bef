"""The OAuth ``httpx.Auth`` against the tests' fake authorization server: the authorization code
flow (PKCE, resource, state, iss), registration choices, refresh, step-up and its limit, one
authorization for concurrent requests, and credentials kept per authorization server."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import anyio
import httpx
import pytest

from mcpbind.client.auth import FileTokenStore, MemoryTokenStore, OAuth, TokenStore
from mcpbind.oauth.registration import ClientInformation, ClientMetadata
from mcpbind.oauth.tokens import OAuthError
from tests.client.auth.fake_world import RESOURCE, FakeWorld

pytestmark = pytest.mark.anyio

REDIRECT = "http://127.0.0.1:8765/callback"


def _oauth(world: FakeWorld, http: httpx.AsyncClient, **options: object) -> OAuth:
    return OAuth(
        RESOURCE,
        client_metadata=ClientMetadata(client_name="tests", redirect_uris=[REDIRECT]),
        authorize=world.authorize,
        http_client=http,
        **options,  # type: ignore[arg-type]
    )


async def _post(world: FakeWorld, auth: OAuth) -> httpx.Response:
    async with httpx.AsyncClient(transport=world.transport(), auth=auth) as client:
        return await client.post(RESOURCE, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})


async def test_a_401_runs_the_authorization_code_flow_with_pkce_and_resource() -> None:
    world = FakeWorld()
    async with world.client() as http:
        response = await _post(world, _oauth(world, http))
    assert response.status_code == 200
    [authorization] = world.authorizations
    assert authorization["response_type"] == "code"
    assert authorization["code_challenge_method"] == "S256"
    assert authorization["resource"] == RESOURCE
    assert authorization["redirect_uri"] == REDIRECT
    assert len(authorization["state"]) >= 32
    [token_request] = world.token_requests
    form = token_request["form"]
    assert form["grant_type"] == "authorization_code" and form["resource"] == RESOURCE
    digest = hashlib.sha256(form["code_verifier"].encode()).digest()
    assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == authorization["code_challenge"]
    assert 43 <= len(form["code_verifier"]) <= 128
    [registration] = world.registrations
    assert registration["application_type"] == "native"
    assert "refresh_token" in registration["grant_types"]
    assert registration["token_endpoint_auth_method"] == "none"
    assert world.mcp_tokens[0] is None and world.mcp_tokens[1] is not None


async def test_later_requests_reuse_the_token() -> None:
    world = FakeWorld()
    async with world.client() as http:
        auth = _oauth(world, http)
        assert (await _post(world, auth)).status_code == 200
        assert (await _post(world, auth)).status_code == 200
    assert len(world.authorizations) == 1
    assert world.mcp_tokens[2] == world.mcp_tokens[1]


@pytest.mark.parametrize(
    ("iss_supported", "tamper"),
    [
        (False, {"iss": "https://evil.test"}),  # present: compared whether advertised or not
        (True, {"iss": "https://evil.test"}),
        (True, {"iss": None}),  # advertised, absent
        (True, {"iss": "https://AS.test"}),  # no case folding
    ],
)
async def test_a_wrong_or_missing_iss_is_refused_before_the_code_is_redeemed(
    iss_supported: bool, tamper: dict[str, str | None]
) -> None:
    world = FakeWorld(iss_in_response=iss_supported, tamper=tamper)
    async with world.client() as http:
        with pytest.raises(OAuthError) as raised:
            await _post(world, _oauth(world, http))
    assert raised.value.error == "invalid_issuer"
    assert world.token_requests == []


async def test_a_matching_iss_is_accepted() -> None:
    world = FakeWorld(iss_in_response=True)
    async with world.client() as http:
        assert (await _post(world, _oauth(world, http))).status_code == 200


async def test_an_error_response_from_another_issuer_is_not_acted_on() -> None:
    world = FakeWorld(tamper={"iss": "https://evil.test", "code": None, "error": "access_denied"})
    async with world.client() as http:
        with pytest.raises(OAuthError) as raised:
            await _post(world, _oauth(world, http))
    assert raised.value.error == "invalid_issuer"


async def test_an_authorization_error_is_reported() -> None:
    world = FakeWorld(
        tamper={"code": None, "error": "access_denied", "error_description": "the user said no"}
    )
    async with world.client() as http:
        with pytest.raises(OAuthError, match="the user said no") as raised:
            await _post(world, _oauth(world, http))
    assert raised.value.error == "access_denied"


async def test_a_state_mismatch_is_refused() -> None:
    world = FakeWorld(tamper={"state": "forged"})
    async with world.client() as http:
        with pytest.raises(OAuthError) as raised:
            await _post(world, _oauth(world, http))
    assert raised.value.error == "invalid_state"
    assert world.token_requests == []


async def test_an_authorization_server_without_s256_is_refused() -> None:
    world = FakeWorld(metadata_extra={"code_challenge_methods_supported": ["plain"]})
    async with world.client() as http:
        with pytest.raises(OAuthError) as raised:
            await _post(world, _oauth(world, http))
    assert raised.value.error == "pkce_unsupported"
    assert world.authorizations == []


async def test_scopes_come_from_the_challenge_then_the_resource_metadata() -> None:
    world = FakeWorld(challenge_scope="files:read", prm_scopes=["a", "b"])
    async with world.client() as http:
        await _post(world, _oauth(world, http))
    assert world.authorizations[0]["scope"] == "files:read"
    world = FakeWorld(prm_scopes=["a", "b"])
    async with world.client() as http:
        await _post(world, _oauth(world, http))
    assert world.authorizations[0]["scope"] == "a b"
    world = FakeWorld()
    async with world.client() as http:
        await _post(world, _oauth(world, http))
    assert "scope" not in world.authorizations[0]


@pytest.mark.parametrize(("listed", "expected"), [(True, "a offline_access"), (False, "a")])
async def test_offline_access_is_asked_for_only_when_the_server_lists_it(listed: bool, expected: str) -> None:
    supported = ["a", "offline_access"] if listed else ["a"]
    world = FakeWorld(prm_scopes=["a"], metadata_extra={"scopes_supported": supported})
    async with world.client() as http:
        await _post(world, _oauth(world, http))
    assert world.authorizations[0]["scope"] == expected


async def test_insufficient_scope_steps_up_with_the_union_of_scopes() -> None:
    world = FakeWorld(challenge_scope="files:read", required_scopes={"files:read", "files:write"})
    async with world.client() as http:
        response = await _post(world, _oauth(world, http))
    assert response.status_code == 200
    assert [a.get("scope") for a in world.authorizations] == ["files:read", "files:read files:write"]


async def test_step_up_gives_up_after_the_limit() -> None:
    world = FakeWorld(challenge_scope="admin", required_scopes={"admin"}, withheld={"admin"})
    async with world.client() as http:
        with pytest.raises(OAuthError, match="giving up") as raised:
            await _post(world, _oauth(world, http, max_step_ups=2))
    assert raised.value.error == "insufficient_scope"
    assert len(world.authorizations) == 3  # the first authorization and two step-ups


async def test_an_expired_token_is_refreshed_before_the_request() -> None:
    world = FakeWorld(expires_in=0)
    async with world.client() as http:
        auth = _oauth(world, http)
        await _post(world, auth)
        assert (await _post(world, auth)).status_code == 200
    assert world.token_grants == ["authorization_code", "refresh_token"]
    assert world.token_requests[1]["form"]["resource"] == RESOURCE
    assert len(world.authorizations) == 1


async def test_a_401_with_a_token_refreshes_it() -> None:
    world = FakeWorld()
    async with world.client() as http:
        auth = _oauth(world, http)
        await _post(world, auth)
        world.revoke_access_tokens()
        assert (await _post(world, auth)).status_code == 200
    assert world.token_grants == ["authorization_code", "refresh_token"]
    assert len(world.authorizations) == 1


async def test_a_refused_refresh_falls_back_to_authorization() -> None:
    world = FakeWorld()
    async with world.client() as http:
        auth = _oauth(world, http)
        await _post(world, auth)
        world.revoke_access_tokens()
        for issued in world.refresh.values():
            issued.valid = False
        assert (await _post(world, auth)).status_code == 200
    assert world.token_grants == ["authorization_code", "refresh_token", "authorization_code"]
    assert len(world.authorizations) == 2


async def test_concurrent_requests_authorize_once() -> None:
    world = FakeWorld()
    async with world.client() as http:
        auth = _oauth(world, http)
        statuses: list[int] = []
        async with httpx.AsyncClient(transport=world.transport(), auth=auth) as client:

            async def one() -> None:
                statuses.append((await client.post(RESOURCE, json={})).status_code)

            async with anyio.create_task_group() as group:
                for _ in range(6):
                    group.start_soon(one)
    assert statuses == [200] * 6
    assert len(world.authorizations) == 1 and len(world.registrations) == 1


async def test_a_client_id_metadata_document_is_used_when_supported() -> None:
    world = FakeWorld(metadata_extra={"client_id_metadata_document_supported": True})
    url = "https://client.example/metadata.json"
    async with world.client() as http:
        assert (await _post(world, _oauth(world, http, client_metadata_url=url))).status_code == 200
    assert world.registrations == []
    assert world.authorizations[0]["client_id"] == url


async def test_pre_registered_credentials_use_a_method_the_server_supports() -> None:
    world = FakeWorld(registration=False, auth_methods=["client_secret_post"])
    world.clients["pre"] = "s3cret"
    info = ClientInformation(client_id="pre", client_secret="s3cret")
    async with world.client() as http:
        assert (await _post(world, _oauth(world, http, client_information=info))).status_code == 200
    assert world.token_requests[0]["method"] == "client_secret_post"


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_registration_asks_for_a_method_the_server_supports(method: str) -> None:
    world = FakeWorld(auth_methods=[method])
    async with world.client() as http:
        assert (await _post(world, _oauth(world, http))).status_code == 200
    assert world.registrations[0]["token_endpoint_auth_method"] == method
    assert world.token_requests[0]["method"] == method


async def test_without_any_way_to_register_the_error_says_so() -> None:
    world = FakeWorld(registration=False)
    async with world.client() as http:
        with pytest.raises(OAuthError) as raised:
            await _post(world, _oauth(world, http))
    assert raised.value.error == "registration_unsupported"


async def test_a_new_authorization_server_means_a_new_registration(tmp_path: Path) -> None:
    world = FakeWorld()
    store: TokenStore = FileTokenStore(tmp_path / "tokens.json")
    async with world.client() as http:
        auth = _oauth(world, http, store=store)
        await _post(world, auth)
        first_client = await store.get_client("https://as.test")
        assert first_client is not None
        world.issuer = "https://as2.test"  # the resource now names another authorization server
        assert (await _post(world, auth)).status_code == 200
    second_client = await store.get_client("https://as2.test")
    assert second_client is not None and second_client.client_id != first_client.client_id
    assert len(world.registrations) == 2
    sent_to_as2 = [r for r in world.token_requests[1:]]
    assert sent_to_as2 and all(r["client_id"] == second_client.client_id for r in sent_to_as2)
    assert await store.get_client("https://as.test") == first_client  # kept for that server only


async def test_tokens_in_a_file_store_survive_a_restart(tmp_path: Path) -> None:
    world = FakeWorld()
    path = tmp_path / "tokens.json"
    async with world.client() as http:
        await _post(world, _oauth(world, http, store=FileTokenStore(path)))
        assert (await _post(world, _oauth(world, http, store=FileTokenStore(path)))).status_code == 200
    assert len(world.authorizations) == 1 and len(world.registrations) == 1
    assert path.stat().st_mode & 0o777 == 0o600


async def test_the_default_store_is_in_memory() -> None:
    world = FakeWorld()
    async with world.client() as http:
        auth = _oauth(world, http)
        assert isinstance(auth.store, MemoryTokenStore)


def test_synchronous_clients_are_told_to_use_the_async_one() -> None:
    world = FakeWorld()
    auth = OAuth(
        RESOURCE, client_metadata=ClientMetadata(redirect_uris=[REDIRECT]), authorize=world.authorize
    )
    with (
        httpx.Client(transport=world.transport(), auth=auth) as client,
        pytest.raises(RuntimeError, match="AsyncClient"),
    ):
        client.post(RESOURCE)


def test_client_metadata_needs_a_redirect_uri() -> None:
    with pytest.raises(ValueError, match="redirect_uris"):
        OAuth(RESOURCE, client_metadata=ClientMetadata(), authorize=FakeWorld().authorize)


async def test_pre_registered_credentials_are_not_offered_to_another_server() -> None:
    world = FakeWorld(auth_methods=["client_secret_basic"])
    world.clients["pre"] = "s3cret"
    info = ClientInformation(client_id="pre", client_secret="s3cret")
    async with world.client() as http:
        auth = _oauth(world, http, client_information=info)
        await _post(world, auth)
        world.issuer = "https://as2.test"
        with pytest.raises(OAuthError, match=r"are for https://as\.test") as raised:
            await _post(world, auth)
    assert raised.value.error == "authorization_server_changed"
    assert [request["client_id"] for request in world.token_requests] == ["pre"]
    assert len(world.authorizations) == 1 and world.registrations == []


async def test_pre_registered_credentials_can_name_their_server() -> None:
    world = FakeWorld()
    info = ClientInformation(client_id="pre")
    async with world.client() as http:
        auth = _oauth(world, http, client_information=info, client_information_issuer="https://other.test")
        with pytest.raises(OAuthError) as raised:
            await _post(world, auth)
    assert raised.value.error == "authorization_server_changed"
    assert world.authorizations == []


async def test_pre_registered_credentials_come_before_a_metadata_document() -> None:
    world = FakeWorld(metadata_extra={"client_id_metadata_document_supported": True})
    world.clients["pre"] = None
    info = ClientInformation(client_id="pre")
    async with world.client() as http:
        auth = _oauth(world, http, client_information=info, client_metadata_url="https://app.example/c.json")
        assert (await _post(world, auth)).status_code == 200
    assert world.authorizations[0]["client_id"] == "pre"


async def test_a_registration_for_another_redirect_uri_is_replaced(tmp_path: Path) -> None:
    world = FakeWorld()
    store = FileTokenStore(tmp_path / "tokens.json")
    async with world.client() as http:
        await _post(world, _oauth(world, http, store=store))
        moved = OAuth(
            RESOURCE,
            client_metadata=ClientMetadata(redirect_uris=["http://127.0.0.1:9999/callback"]),
            authorize=world.authorize,
            http_client=http,
            store=store,
        )
        world.revoke_access_tokens()
        for issued in world.refresh.values():
            issued.valid = False
        assert (await _post(world, moved)).status_code == 200
    assert [r["redirect_uris"] for r in world.registrations] == [
        [REDIRECT],
        ["http://127.0.0.1:9999/callback"],
    ]


@pytest.mark.parametrize("url", ["http://client.example/metadata.json", "https://client.example/"])
def test_a_client_metadata_url_must_be_https_with_a_path(url: str) -> None:
    with pytest.raises(ValueError, match="client_metadata_url"):
        OAuth(
            RESOURCE,
            client_metadata=ClientMetadata(redirect_uris=[REDIRECT]),
            authorize=FakeWorld().authorize,
            client_metadata_url=url,
        )


async def test_login_authorizes_ahead_of_the_first_request() -> None:
    world = FakeWorld()
    async with world.client() as http:
        auth = _oauth(world, http)
        tokens = await auth.login()
        assert await auth.login() == tokens  # still valid: nothing more to do
        assert (await _post(world, auth)).status_code == 200
    assert world.mcp_tokens == [tokens.access_token]
    assert len(world.authorizations) == 1


async def test_a_2025_03_26_server_without_metadata_uses_the_default_endpoints() -> None:
    world = FakeWorld(prm_path=None, issuer="https://mcp.test", metadata_url="")
    async with world.client() as http:
        assert (await _post(world, _oauth(world, http))).status_code == 200
    assert ("POST", "https://mcp.test/register") in world.requests
    assert ("POST", "https://mcp.test/token") in world.requests
    assert world.authorizations[0]["resource"] == RESOURCE


async def test_a_registration_that_does_not_cover_a_step_up_is_replaced() -> None:
    world = FakeWorld(challenge_scope="a", required_scopes={"a", "b"}, scopes_bound_to_registration=True)
    async with world.client() as http:
        assert (await _post(world, _oauth(world, http))).status_code == 200
    assert [registration["scope"] for registration in world.registrations] == ["a", "a b"]
    assert [a.get("scope") for a in world.authorizations] == ["a", "a b", "a b"]


async def test_a_pre_registered_client_is_not_registered_again_on_invalid_scope() -> None:
    world = FakeWorld(
        scopes_bound_to_registration=True, challenge_scope="a", auth_methods=["client_secret_basic"]
    )
    world.clients["pre"] = "s3cret"
    info = ClientInformation(client_id="pre", client_secret="s3cret")
    async with world.client() as http:
        with pytest.raises(OAuthError) as raised:
            await _post(world, _oauth(world, http, client_information=info))
    assert raised.value.error == "invalid_scope"
    assert world.registrations == []
