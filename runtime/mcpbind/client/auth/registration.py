"""How the client gets a ``client_id`` at an authorization server, in MCP's order of preference:
a Client ID Metadata Document (its HTTPS URL is the ``client_id``) when the server supports them,
else credentials registered beforehand, else Dynamic Client Registration (RFC 7591). What was
obtained is kept in the store under the server's issuer and used only with that server."""

from __future__ import annotations

import ipaddress
import time
from urllib.parse import urlsplit

import httpx
import msgspec

from mcpbind.client.auth.stores import TokenStore
from mcpbind.oauth.metadata import AuthorizationServerMetadata
from mcpbind.oauth.registration import ClientInformation, ClientMetadata, decode_client_information
from mcpbind.oauth.tokens import OAuthError, decode_error

__all__ = ["application_type", "obtain_client", "register_client", "registration_metadata"]

_DEFAULT_GRANT_TYPES = ["authorization_code", "refresh_token"]


def _is_loopback_or_custom(uri: str) -> bool:
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https"):
        return True  # a custom scheme: an app on the user's machine
    host = parts.hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def application_type(metadata: ClientMetadata) -> str:
    """``native`` for a client whose redirect URIs are all loopback or custom-scheme (it runs on
    the user's machine), ``web`` otherwise; the metadata's own value when it has one."""
    if metadata.application_type:
        return metadata.application_type
    uris = metadata.redirect_uris or []
    return "native" if uris and all(_is_loopback_or_custom(uri) for uri in uris) else "web"


def registration_metadata(
    client_metadata: ClientMetadata, server: AuthorizationServerMetadata
) -> ClientMetadata:
    """What to send to the registration endpoint: the client's metadata with the defaults filled
    in (``application_type``, authorization code and refresh grants, ``code`` responses) and a
    token endpoint authentication method the server supports (a public client's ``none`` when it
    can, else a secret method)."""
    method = client_metadata.token_endpoint_auth_method
    supported = server.token_endpoint_auth_methods_supported
    if method is None and supported:
        method = next(
            (m for m in ("none", "client_secret_basic", "client_secret_post") if m in supported), None
        )
    return msgspec.structs.replace(
        client_metadata,
        application_type=application_type(client_metadata),
        grant_types=client_metadata.grant_types or list(_DEFAULT_GRANT_TYPES),
        response_types=client_metadata.response_types or ["code"],
        token_endpoint_auth_method=method,
        client_id=None,
    )


async def register_client(
    http: httpx.AsyncClient, server: AuthorizationServerMetadata, client_metadata: ClientMetadata
) -> ClientInformation:
    """Dynamic Client Registration (RFC 7591 section 3). ``OAuthError`` when the server has no
    registration endpoint (``registration_unsupported``) or refuses (its error)."""
    if not server.registration_endpoint:
        raise OAuthError(
            "registration_unsupported",
            f"{server.issuer} supports neither Client ID Metadata Documents nor dynamic registration, "
            "and no pre-registered client_information was given",
        )
    body = msgspec.json.encode(registration_metadata(client_metadata, server))
    response = await http.post(
        server.registration_endpoint,
        content=body,
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    if response.status_code not in (200, 201):
        raise decode_error(response.content, response.status_code)
    try:
        info = decode_client_information(response.content)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise OAuthError(
            "invalid_response", f"the registration answer is not client information ({exc})"
        ) from None
    return info


def _usable(info: ClientInformation) -> bool:
    expires = info.client_secret_expires_at
    return not expires or expires > time.time() + 30


async def obtain_client(
    http: httpx.AsyncClient,
    issuer: str,
    server: AuthorizationServerMetadata,
    store: TokenStore,
    *,
    client_metadata: ClientMetadata,
    client_metadata_url: str | None = None,
    client_information: ClientInformation | None = None,
) -> ClientInformation:
    """The client's credentials at the authorization server ``issuer``: those stored for it,
    else a Client ID Metadata Document's URL (when the server supports them), else
    ``client_information`` (pre-registered), else a new registration, which is stored."""
    stored = await store.get_client(issuer)
    if stored is not None and _usable(stored):
        return stored
    if client_metadata_url and server.client_id_metadata_document_supported:
        return ClientInformation(client_id=client_metadata_url, token_endpoint_auth_method="none")
    if client_information is not None:
        return client_information
    info = await register_client(http, server, client_metadata)
    await store.set_client(issuer, info)
    return info
