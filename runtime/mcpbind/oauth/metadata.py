"""The two discovery documents of MCP authorization: a resource server's Protected Resource
Metadata (RFC 9728) and an authorization server's metadata (RFC 8414, or OpenID Connect Discovery
1.0, which carries the same members), with the well-known URLs each is looked up at."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import msgspec

__all__ = [
    "AuthorizationServerMetadata",
    "ProtectedResourceMetadata",
    "authorization_server_metadata_urls",
    "decode_authorization_server_metadata",
    "decode_protected_resource_metadata",
    "protected_resource_metadata_urls",
]

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"


class ProtectedResourceMetadata(msgspec.Struct, kw_only=True, omit_defaults=True):
    """RFC 9728 section 2. ``resource`` is the resource's identifier (the MCP endpoint's URL);
    ``authorization_servers`` the issuers that grant tokens for it."""

    resource: str
    authorization_servers: list[str] | None = None
    jwks_uri: str | None = None
    scopes_supported: list[str] | None = None
    bearer_methods_supported: list[str] | None = None
    resource_signing_alg_values_supported: list[str] | None = None
    resource_name: str | None = None
    resource_documentation: str | None = None
    resource_policy_uri: str | None = None
    resource_tos_uri: str | None = None
    tls_client_certificate_bound_access_tokens: bool | None = None
    authorization_details_types_supported: list[str] | None = None
    dpop_signing_alg_values_supported: list[str] | None = None
    dpop_bound_access_tokens_required: bool | None = None


class AuthorizationServerMetadata(msgspec.Struct, kw_only=True, omit_defaults=True):
    """RFC 8414 section 2 (the OpenID Connect Discovery document has these members too), with
    ``client_id_metadata_document_supported`` (Client ID Metadata Documents, MCP 2025-11-25) and
    ``authorization_response_iss_parameter_supported`` (RFC 9207)."""

    issuer: str
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    jwks_uri: str | None = None
    registration_endpoint: str | None = None
    scopes_supported: list[str] | None = None
    response_types_supported: list[str] | None = None
    response_modes_supported: list[str] | None = None
    grant_types_supported: list[str] | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    token_endpoint_auth_signing_alg_values_supported: list[str] | None = None
    service_documentation: str | None = None
    revocation_endpoint: str | None = None
    revocation_endpoint_auth_methods_supported: list[str] | None = None
    introspection_endpoint: str | None = None
    introspection_endpoint_auth_methods_supported: list[str] | None = None
    code_challenge_methods_supported: list[str] | None = None
    client_id_metadata_document_supported: bool | None = None
    authorization_response_iss_parameter_supported: bool | None = None


_prm_decoder = msgspec.json.Decoder(ProtectedResourceMetadata)
_asm_decoder = msgspec.json.Decoder(AuthorizationServerMetadata)


def decode_protected_resource_metadata(body: bytes) -> ProtectedResourceMetadata:
    """Parse a Protected Resource Metadata document (members it does not know are ignored);
    ``msgspec.ValidationError``/``DecodeError`` when it is not one."""
    return _prm_decoder.decode(body)


def decode_authorization_server_metadata(body: bytes) -> AuthorizationServerMetadata:
    """Parse an authorization server metadata document (RFC 8414 or OpenID Discovery)."""
    return _asm_decoder.decode(body)


def _with_path(url: str, path: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def protected_resource_metadata_urls(resource_url: str) -> list[str]:
    """Where a client looks for the Protected Resource Metadata of ``resource_url`` when the
    server's 401 names none (RFC 9728 section 3.1): the path-aware URL first (the well-known
    prefix inserted before the resource's path), then the root one."""
    parts = urlsplit(resource_url)
    path = parts.path.rstrip("/")
    urls = []
    if path:
        urls.append(_with_path(resource_url, PRM_WELL_KNOWN + path))
    urls.append(_with_path(resource_url, PRM_WELL_KNOWN))
    return urls


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where a client looks for an authorization server's metadata, in the order MCP 2025-11-25
    gives. An issuer with a path component ``/p``: OAuth path-inserted
    (``/.well-known/oauth-authorization-server/p``), OpenID path-inserted
    (``/.well-known/openid-configuration/p``), OpenID path-appended
    (``/p/.well-known/openid-configuration``). Without one: the OAuth and the OpenID URL at the
    root."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    if not path:
        return [_with_path(issuer, OAUTH_WELL_KNOWN), _with_path(issuer, OIDC_WELL_KNOWN)]
    return [
        _with_path(issuer, OAUTH_WELL_KNOWN + path),
        _with_path(issuer, OIDC_WELL_KNOWN + path),
        _with_path(issuer, path + OIDC_WELL_KNOWN),
    ]
