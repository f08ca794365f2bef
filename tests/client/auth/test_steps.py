"""Single steps: scope selection, token endpoint client authentication, registration metadata,
parsing the authorization response."""

from __future__ import annotations

import base64

import httpx
import pytest

from mcpbind.client.auth.authorizer import parse_authorization_response
from mcpbind.client.auth.registration import (
    application_type,
    client_id_metadata_document,
    registration_metadata,
)
from mcpbind.client.auth.scopes import select_scopes
from mcpbind.client.auth.token_endpoint import choose_auth_method, client_authentication, request_token
from mcpbind.oauth.metadata import AuthorizationServerMetadata, ProtectedResourceMetadata
from mcpbind.oauth.registration import ClientInformation, ClientMetadata
from mcpbind.oauth.tokens import OAuthError

PRM = ProtectedResourceMetadata(resource="https://mcp.test/mcp", scopes_supported=["a", "b"])
AS = AuthorizationServerMetadata(issuer="https://as.test", token_endpoint="https://as.test/token")


def test_the_challenge_scope_wins() -> None:
    assert select_scopes(challenge_scope="x y", configured=["c"], prm=PRM, metadata=AS) == "x y"


def test_configured_scopes_come_before_scopes_supported() -> None:
    assert select_scopes(challenge_scope=None, configured=["c"], prm=PRM, metadata=AS) == "c"
    assert select_scopes(challenge_scope=None, configured=None, prm=PRM, metadata=AS) == "a b"


def test_no_scope_when_nothing_says_any() -> None:
    prm = ProtectedResourceMetadata(resource="https://mcp.test/mcp")
    assert select_scopes(challenge_scope=None, configured=None, prm=prm, metadata=AS) is None


def test_a_step_up_keeps_what_was_asked_for_before() -> None:
    assert (
        select_scopes(challenge_scope="w", configured=None, prm=PRM, metadata=AS, previous=["r", "w"])
        == "r w"
    )


def test_offline_access_only_when_listed_and_wanted() -> None:
    listed = AuthorizationServerMetadata(issuer="https://as.test", scopes_supported=["a", "offline_access"])
    assert select_scopes(challenge_scope="a", configured=None, prm=PRM, metadata=listed) == "a offline_access"
    assert (
        select_scopes(challenge_scope="a", configured=None, prm=PRM, metadata=listed, wants_refresh=False)
        == "a"
    )
    assert select_scopes(challenge_scope="a", configured=None, prm=PRM, metadata=AS) == "a"


def test_auth_method_choice() -> None:
    both = AuthorizationServerMetadata(
        issuer="x", token_endpoint_auth_methods_supported=["client_secret_post"]
    )
    assert (
        choose_auth_method(both, ClientInformation(client_id="c", client_secret="s")) == "client_secret_post"
    )
    assert (
        choose_auth_method(AS, ClientInformation(client_id="c", client_secret="s")) == "client_secret_basic"
    )
    assert choose_auth_method(AS, ClientInformation(client_id="c")) == "none"
    named = ClientInformation(
        client_id="c", client_secret="s", token_endpoint_auth_method="client_secret_post"
    )
    assert choose_auth_method(AS, named) == "client_secret_post"


def test_basic_credentials_are_form_encoded() -> None:
    client = ClientInformation(client_id="id:1", client_secret="s e/c")
    form, headers = client_authentication(client, "client_secret_basic", {"grant_type": "x"})
    assert form == {"grant_type": "x", "client_id": "id:1"}  # also in the form (RFC 6749 section 3.2.1)
    assert base64.b64decode(headers["Authorization"].removeprefix("Basic ")) == b"id%3A1:s%20e%2Fc"
    with pytest.raises(OAuthError):
        client_authentication(ClientInformation(client_id="c"), "client_secret_post", {})
    with pytest.raises(OAuthError):
        client_authentication(client, "tls_client_auth", {})


@pytest.mark.anyio
async def test_token_endpoint_errors_are_oauth_errors() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if b"bad" in request.content:
            return httpx.Response(400, json={"error": "invalid_grant", "error_description": "expired"})
        if b"mac" in request.content:
            return httpx.Response(200, json={"access_token": "t", "token_type": "mac"})
        return httpx.Response(502, text="<html>")

    client = ClientInformation(client_id="c")
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        with pytest.raises(OAuthError, match="expired") as raised:
            await request_token(http, AS, client, {"code": "bad"})
        assert (raised.value.error, raised.value.status) == ("invalid_grant", 400)
        with pytest.raises(OAuthError, match="only Bearer"):
            await request_token(http, AS, client, {"code": "mac"})
        with pytest.raises(OAuthError) as raised:
            await request_token(http, AS, client, {"code": "x"})
        assert raised.value.error == "invalid_response"


def test_application_type_and_registration_defaults() -> None:
    assert application_type(ClientMetadata(redirect_uris=["http://127.0.0.1:9/cb"])) == "native"
    assert application_type(ClientMetadata(redirect_uris=["com.example.app:/cb"])) == "native"
    assert application_type(ClientMetadata(redirect_uris=["https://app.example/cb"])) == "web"
    server = AuthorizationServerMetadata(
        issuer="x", token_endpoint_auth_methods_supported=["client_secret_basic"]
    )
    sent = registration_metadata(ClientMetadata(redirect_uris=["https://app.example/cb"]), server)
    assert sent.token_endpoint_auth_method == "client_secret_basic"
    assert sent.grant_types == ["authorization_code", "refresh_token"] and sent.response_types == ["code"]


def test_authorization_response_parameters() -> None:
    answer = parse_authorization_response("http://127.0.0.1/cb?code=c&state=s&iss=https%3A%2F%2Fas.test")
    assert (answer.code, answer.state, answer.iss, answer.error) == ("c", "s", "https://as.test", None)
    assert parse_authorization_response("http://127.0.0.1/cb?code=a&code=b").code is None


def test_the_client_id_metadata_document_names_its_url() -> None:
    import json

    url = "https://app.example/oauth/client.json"
    document = json.loads(
        client_id_metadata_document(ClientMetadata(redirect_uris=["http://127.0.0.1:9/cb"]), url)
    )
    assert document["client_id"] == url
    assert document["application_type"] == "native"
    assert document["token_endpoint_auth_method"] == "none"
    assert document["grant_types"] == ["authorization_code", "refresh_token"]
