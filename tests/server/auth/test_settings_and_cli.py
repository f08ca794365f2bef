"""ResourceServerAuth refuses settings that cannot work when made (ValueError naming what is
wrong), and ``mcpbind serve --transport http --auth-*`` serves a protected server."""

from __future__ import annotations

import argparse
from typing import Any

import httpx
import pytest

from mcpbind.server.auth import IntrospectionVerifier, JWTVerifier, ResourceServerAuth
from mcpbind.server.auth.cli_options import add_auth_arguments, auth_from_arguments
from tests.cli_harness import free_port, mcpbind_serving, run_mcpbind
from tests.server.auth.tokens import ISSUER, JWKS_URL, RESOURCE
from tests.test_cli_failures import CALLS_ONLY


class Custom:
    async def verify(self, token: str) -> Any:
        raise NotImplementedError


@pytest.mark.parametrize(
    ("issuer", "resource", "options", "message"),
    [
        (ISSUER, RESOURCE, {}, "exactly one way"),
        (ISSUER, RESOURCE, {"jwks_url": JWKS_URL, "verifier": Custom()}, "exactly one way"),
        ("http://auth.example.com", RESOURCE, {"jwks_url": JWKS_URL}, "issuer must be an https URL"),
        ("auth.example.com", RESOURCE, {"jwks_url": JWKS_URL}, "issuer must be an absolute"),
        (ISSUER + "?tenant=1", RESOURCE, {"jwks_url": JWKS_URL}, "query"),
        (ISSUER, "/mcp", {"jwks_url": JWKS_URL}, "resource must be an absolute"),
        (ISSUER, RESOURCE + "#x", {"jwks_url": JWKS_URL}, "fragment"),
        (ISSUER, RESOURCE, {"jwks_url": "http://keys.example.com/jwks"}, "jwks_url must be an https URL"),
        (ISSUER, RESOURCE, {"introspection_url": ISSUER + "/introspect"}, "client_id"),
        (ISSUER, RESOURCE, {"jwks_url": JWKS_URL, "algorithms": ["HS256"]}, "algorithms"),
        (ISSUER, RESOURCE, {"jwks_url": JWKS_URL, "required_scopes": ["a b"]}, "invalid scope"),
        (ISSUER, RESOURCE, {"jwks_url": JWKS_URL, "leeway": -1}, "leeway"),
        (ISSUER, RESOURCE, {"verifier": object()}, "verify"),
    ],
)
def test_bad_settings(issuer: str, resource: str, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ResourceServerAuth(issuer, resource, **options)


def test_the_verifier_each_setting_makes() -> None:
    assert isinstance(ResourceServerAuth(ISSUER, RESOURCE, jwks_url=JWKS_URL).verifier, JWTVerifier)
    introspecting = ResourceServerAuth(ISSUER, RESOURCE, introspection_url=ISSUER + "/i", client_id="rs")
    assert isinstance(introspecting.verifier, IntrospectionVerifier)
    custom = Custom()
    assert ResourceServerAuth(ISSUER, RESOURCE, verifier=custom).verifier is custom
    # A loopback issuer may be plain http (development).
    ResourceServerAuth("http://127.0.0.1:9000", RESOURCE, jwks_url="http://127.0.0.1:9000/jwks")


@pytest.mark.parametrize(
    ("resource", "url", "paths"),
    [
        (
            "https://mcp.example.com/api/mcp",
            "https://mcp.example.com/.well-known/oauth-protected-resource/api/mcp",
            ("/.well-known/oauth-protected-resource/api/mcp", "/.well-known/oauth-protected-resource"),
        ),
        (
            "https://mcp.example.com",
            "https://mcp.example.com/.well-known/oauth-protected-resource",
            ("/.well-known/oauth-protected-resource",),
        ),
    ],
)
def test_where_the_metadata_is(resource: str, url: str, paths: tuple[str, ...]) -> None:
    auth = ResourceServerAuth(ISSUER, resource, jwks_url=JWKS_URL)
    assert auth.metadata_url == url
    assert auth.metadata_paths == paths


def parse(*args: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", default="stdio")
    add_auth_arguments(parser)
    return parser.parse_args(list(args))


def test_the_command_line_options() -> None:
    args = parse(
        "--transport", "http", "--auth-issuer", ISSUER, "--auth-jwks-url", JWKS_URL, "--auth-scopes", "a, b"
    )
    auth = auth_from_arguments(args, "http://127.0.0.1:8000/mcp")
    assert auth is not None
    assert auth.resource == "http://127.0.0.1:8000/mcp"  # (--auth-audience defaults to the URL served)
    assert auth.required_scopes == frozenset({"a", "b"})
    args = parse(
        "--transport",
        "http",
        "--auth-issuer",
        ISSUER,
        "--auth-jwks-url",
        JWKS_URL,
        "--auth-audience",
        RESOURCE,
    )
    audience = auth_from_arguments(args, "http://0.0.0.0:8000/mcp")
    assert audience is not None and audience.resource == RESOURCE
    assert auth_from_arguments(parse(), "http://x/mcp") is None
    with pytest.raises(ValueError, match="--auth-issuer"):
        auth_from_arguments(parse("--auth-jwks-url", JWKS_URL), "http://x/mcp")
    with pytest.raises(ValueError, match="--transport http"):
        auth_from_arguments(parse("--auth-issuer", ISSUER, "--auth-jwks-url", JWKS_URL), "http://x/mcp")


def test_bad_auth_options_are_a_usage_error() -> None:
    done = run_mcpbind("serve", CALLS_ONLY, "--transport", "http", "--auth-issuer", ISSUER)
    assert done.returncode == 2
    assert "exactly one way to verify tokens" in done.stderr


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_serve_protected_from_the_command_line(backend: str) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    options = ("--backend", backend, "--auth-issuer", ISSUER, "--auth-jwks-url", JWKS_URL)
    with mcpbind_serving(
        CALLS_ONLY, "--transport", "http", *options, "--auth-scopes", "mcp,tools", port=port
    ):
        metadata = httpx.get(f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp", timeout=10)
        refused = httpx.post(
            url, json={}, headers={"accept": "application/json, text/event-stream"}, timeout=10
        )
    assert metadata.json() == {
        "resource": url,
        "authorization_servers": [ISSUER],
        "scopes_supported": ["mcp", "tools"],
        "bearer_methods_supported": ["header"],
    }
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == (
        f'Bearer scope="mcp tools", resource_metadata="http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"'
    )
