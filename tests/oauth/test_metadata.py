"""The discovery documents and the URLs a client looks them up at."""

from __future__ import annotations

import msgspec
import pytest

from mcpbind.oauth.metadata import (
    AuthorizationServerMetadata,
    authorization_server_metadata_urls,
    decode_authorization_server_metadata,
    decode_protected_resource_metadata,
    protected_resource_metadata_urls,
)
from mcpbind.oauth.registration import ClientMetadata, decode_client_information
from mcpbind.oauth.tokens import decode_error, decode_token_response


def test_protected_resource_metadata_urls_are_path_aware_then_root() -> None:
    assert protected_resource_metadata_urls("https://example.com:8443/public/mcp") == [
        "https://example.com:8443/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com:8443/.well-known/oauth-protected-resource",
    ]
    assert protected_resource_metadata_urls("https://example.com/?q=1") == [
        "https://example.com/.well-known/oauth-protected-resource"
    ]


def test_authorization_server_metadata_urls_follow_the_specification_order() -> None:
    assert authorization_server_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


def test_documents_decode_ignoring_members_they_do_not_know() -> None:
    prm = decode_protected_resource_metadata(
        b'{"resource": "https://mcp.example.com/mcp", "authorization_servers": ["https://as"], "x-vendor": 1}'
    )
    assert prm.authorization_servers == ["https://as"]
    asm = decode_authorization_server_metadata(
        b'{"issuer": "https://as", "token_endpoint": "https://as/token",'
        b' "client_id_metadata_document_supported": true, "claims_supported": ["sub"]}'
    )
    assert asm.client_id_metadata_document_supported is True
    assert msgspec.json.decode(msgspec.json.encode(asm)) == {
        "issuer": "https://as",
        "token_endpoint": "https://as/token",
        "client_id_metadata_document_supported": True,
    }


@pytest.mark.parametrize("body", [b"[]", b'{"authorization_servers": []}', b"not json"])
def test_a_protected_resource_document_without_its_resource_is_refused(body: bytes) -> None:
    with pytest.raises((msgspec.ValidationError, msgspec.DecodeError)):
        decode_protected_resource_metadata(body)


def test_an_issuer_is_required() -> None:
    with pytest.raises(msgspec.ValidationError, match="issuer"):
        decode_authorization_server_metadata(b'{"token_endpoint": "https://as/token"}')
    assert AuthorizationServerMetadata(issuer="https://as").token_endpoint is None


def test_client_metadata_omits_what_is_unset() -> None:
    metadata = ClientMetadata(redirect_uris=["http://127.0.0.1:9/cb"], application_type="native")
    assert msgspec.json.decode(msgspec.json.encode(metadata)) == {
        "redirect_uris": ["http://127.0.0.1:9/cb"],
        "application_type": "native",
    }
    info = decode_client_information(b'{"client_id": "abc", "client_secret": "s", "extra": true}')
    assert (info.client_id, info.client_secret) == ("abc", "s")


def test_token_responses_and_errors() -> None:
    token = decode_token_response(b'{"access_token": "t", "token_type": "Bearer", "expires_in": 60}')
    assert (token.access_token, token.expires_in, token.refresh_token) == ("t", 60, None)
    error = decode_error(b'{"error": "invalid_grant", "error_description": "code used"}', 400)
    assert (error.error, error.description, error.status) == ("invalid_grant", "code used", 400)
    assert str(error) == "invalid_grant: code used"
    unknown = decode_error(b"<html>", 502)
    assert (unknown.error, unknown.status) == ("invalid_response", 502)
