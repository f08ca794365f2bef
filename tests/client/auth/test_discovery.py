"""Discovery of the authorization server: RFC 9728 resource metadata (the 401's URL, else
path-aware then root), RFC 8414 / OpenID metadata in MCP's order, the resource check and the
2025-03-26 fallbacks."""

from __future__ import annotations

import pytest

from mcpbind.client.auth.discovery import canonical_resource, discover, resource_covers
from mcpbind.oauth.challenge import bearer_challenge
from mcpbind.oauth.tokens import OAuthError
from tests.client.auth.fake_world import RESOURCE, FakeWorld

pytestmark = pytest.mark.anyio


def _gets(world: FakeWorld) -> list[str]:
    return [url for method, url in world.requests if method == "GET"]


async def test_the_url_of_the_challenge_is_used_first() -> None:
    world = FakeWorld(prm_path="/custom/metadata.json")
    challenge = bearer_challenge('Bearer resource_metadata="https://mcp.test/custom/metadata.json"')
    async with world.client() as http:
        found = await discover(http, RESOURCE, challenge)
    assert _gets(world)[0] == "https://mcp.test/custom/metadata.json"
    assert (found.issuer, found.resource) == ("https://as.test", RESOURCE)
    assert found.metadata.token_endpoint == "https://as.test/token"


async def test_without_a_url_the_path_aware_location_comes_before_the_root() -> None:
    world = FakeWorld(prm_path="/.well-known/oauth-protected-resource", prm_resource="https://mcp.test")
    async with world.client() as http:
        found = await discover(http, RESOURCE, None)
    assert _gets(world)[:2] == [
        "https://mcp.test/.well-known/oauth-protected-resource/mcp",
        "https://mcp.test/.well-known/oauth-protected-resource",
    ]
    assert found.resource == "https://mcp.test"  # the document's resource is the one tokens are asked for


async def test_the_path_aware_document_stops_the_search() -> None:
    world = FakeWorld()
    async with world.client() as http:
        await discover(http, RESOURCE, None)
    assert "https://mcp.test/.well-known/oauth-protected-resource" not in _gets(world)


@pytest.mark.parametrize(
    ("issuer", "served_at", "expected_tries"),
    [
        (
            "https://as.test/tenant1",
            "https://as.test/tenant1/.well-known/openid-configuration",
            [
                "https://as.test/.well-known/oauth-authorization-server/tenant1",
                "https://as.test/.well-known/openid-configuration/tenant1",
                "https://as.test/tenant1/.well-known/openid-configuration",
            ],
        ),
        (
            "https://as.test",
            "https://as.test/.well-known/openid-configuration",
            [
                "https://as.test/.well-known/oauth-authorization-server",
                "https://as.test/.well-known/openid-configuration",
            ],
        ),
    ],
)
async def test_authorization_server_metadata_is_looked_for_in_the_spec_order(
    issuer: str, served_at: str, expected_tries: list[str]
) -> None:
    world = FakeWorld(issuer=issuer, metadata_url=served_at)
    async with world.client() as http:
        found = await discover(http, RESOURCE, None)
    assert [url for url in _gets(world) if url.startswith("https://as.test")] == expected_tries
    assert found.issuer == issuer


async def test_metadata_naming_another_issuer_is_not_used() -> None:
    world = FakeWorld(metadata_issuer="https://evil.test")
    async with world.client() as http:
        with pytest.raises(OAuthError) as raised:
            await discover(http, RESOURCE, None)
    assert raised.value.error == "discovery_failed"


async def test_resource_metadata_for_another_resource_is_refused() -> None:
    world = FakeWorld(prm_resource="https://evil.example.com/mcp")
    async with world.client() as http:
        with pytest.raises(OAuthError) as raised:
            await discover(http, RESOURCE, None)
    assert raised.value.error == "invalid_resource"
    assert not [url for url in _gets(world) if url.startswith("https://as.test")]


@pytest.mark.parametrize(
    ("resource", "server", "covers"),
    [
        ("https://mcp.test/mcp", "https://mcp.test/mcp", True),
        ("https://MCP.test/mcp/", "https://mcp.test/mcp", True),
        ("https://mcp.test", "https://mcp.test/mcp", True),
        ("https://mcp.test/mc", "https://mcp.test/mcp", False),
        ("https://mcp.test/mcp/other", "https://mcp.test/mcp", False),
        ("http://mcp.test/mcp", "https://mcp.test/mcp", False),
        ("https://mcp.test:8443/mcp", "https://mcp.test/mcp", False),
    ],
)
def test_resource_covers(resource: str, server: str, covers: bool) -> None:
    assert resource_covers(resource, server) is covers


def test_canonical_resource() -> None:
    assert canonical_resource("HTTPS://MCP.Test/mcp/#frag") == "https://mcp.test/mcp"


async def test_a_2025_03_26_server_has_its_metadata_at_its_origin() -> None:
    world = FakeWorld(prm_path=None, issuer="https://mcp.test")
    world.metadata_extra = {"issuer": "https://mcp.test/oauth"}  # the old revision did not check it
    async with world.client() as http:
        found = await discover(http, RESOURCE, None)
    assert found.prm is None and not found.synthesized
    assert found.issuer == "https://mcp.test/oauth"
    assert found.resource == RESOURCE


async def test_a_2025_03_26_server_without_metadata_has_the_default_endpoints() -> None:
    world = FakeWorld(prm_path=None, metadata_url="")
    async with world.client() as http:
        found = await discover(http, "https://mcp.test/mcp", None)
    assert found.synthesized
    assert (found.metadata.authorization_endpoint, found.metadata.token_endpoint) == (
        "https://mcp.test/authorize",
        "https://mcp.test/token",
    )
    assert found.metadata.registration_endpoint == "https://mcp.test/register"


@pytest.mark.parametrize(
    ("endpoint", "refused"),
    [
        ("http://as.test/token", True),
        ("http://localhost:9000/token", False),
        ("http://127.0.0.1:9000/token", False),
        ("http://[::1]:9000/token", False),
        ("https://as.test/token", False),
    ],
)
async def test_oauth_endpoints_must_be_https_off_loopback(endpoint: str, refused: bool) -> None:
    world = FakeWorld(metadata_extra={"token_endpoint": endpoint})
    async with world.client() as http:
        if refused:
            with pytest.raises(OAuthError) as raised:
                await discover(http, RESOURCE, None)
            assert raised.value.error == "insecure_endpoint"
        else:
            assert (await discover(http, RESOURCE, None)).metadata.token_endpoint == endpoint
