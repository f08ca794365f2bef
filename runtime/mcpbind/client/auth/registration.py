"""How the client gets a ``client_id`` at an authorization server, in MCP's order of preference:
credentials registered beforehand for that server, else a Client ID Metadata Document (its HTTPS
URL is the ``client_id``) when the server supports them, else Dynamic Client Registration
(RFC 7591). A registration is kept in the store under the server's issuer and used only with
that server."""

from __future__ import annotations

import ipaddress
import time
from urllib.parse import urlsplit

import httpx
import msgspec

from mcpbind.client.auth.scopes import join_scopes, split_scopes
from mcpbind.client.auth.stores import TokenStore
from mcpbind.oauth.metadata import AuthorizationServerMetadata
from mcpbind.oauth.registration import ClientInformation, ClientMetadata, decode_client_information
from mcpbind.oauth.tokens import OAuthError, decode_error

__all__ = [
    "application_type",
    "client_id_metadata_document",
    "obtain_client",
    "register_client",
    "registration_metadata",
]

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
    client_metadata: ClientMetadata, server: AuthorizationServerMetadata, scope: str | None = None
) -> ClientMetadata:
    """What to send to the registration endpoint: the client's metadata with the defaults filled
    in (``application_type``, authorization code and refresh grants, ``code`` responses), a
    token endpoint authentication method the server supports (a public client's ``none`` when it
    can, else a secret method) and, unless the metadata names its scopes, the ``scope`` about to
    be asked for with those the server lists (servers may refuse later requests for scopes the
    registration did not name)."""
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
        scope=client_metadata.scope or join_scopes([*split_scopes(scope), *(server.scopes_supported or [])]),
    )


def client_id_metadata_document(client_metadata: ClientMetadata, url: str) -> bytes:
    """The JSON to publish at ``url`` as the client's Client ID Metadata Document: its metadata
    with ``client_id`` set to that URL, a public client (``none``) of the authorization code
    flow unless it says otherwise."""
    document = msgspec.structs.replace(
        client_metadata,
        client_id=url,
        application_type=application_type(client_metadata),
        grant_types=client_metadata.grant_types or list(_DEFAULT_GRANT_TYPES),
        response_types=client_metadata.response_types or ["code"],
        token_endpoint_auth_method=client_metadata.token_endpoint_auth_method or "none",
    )
    return msgspec.json.encode(document)


async def register_client(
    http: httpx.AsyncClient,
    server: AuthorizationServerMetadata,
    client_metadata: ClientMetadata,
    *,
    scope: str | None = None,
) -> ClientInformation:
    """Dynamic Client Registration (RFC 7591 section 3). ``OAuthError`` when the server has no
    registration endpoint (``registration_unsupported``) or refuses (its error)."""
    if not server.registration_endpoint:
        raise OAuthError(
            "registration_unsupported",
            f"{server.issuer} supports neither Client ID Metadata Documents nor dynamic registration, "
            "and no pre-registered client_information was given",
        )
    body = msgspec.json.encode(registration_metadata(client_metadata, server, scope))
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


def _usable(info: ClientInformation, redirect_uri: str | None) -> bool:
    """A stored registration is used while its secret lasts and while it names the redirect URI
    in use (a loopback port can change from one run to the next)."""
    expires = info.client_secret_expires_at
    if expires and expires <= time.time() + 30:
        return False
    return redirect_uri is None or info.redirect_uris is None or redirect_uri in info.redirect_uris


async def obtain_client(
    http: httpx.AsyncClient,
    issuer: str,
    server: AuthorizationServerMetadata,
    store: TokenStore,
    *,
    client_metadata: ClientMetadata,
    client_metadata_url: str | None = None,
    client_information: ClientInformation | None = None,
    redirect_uri: str | None = None,
    scope: str | None = None,
) -> ClientInformation:
    """The client's credentials at the authorization server ``issuer``: ``client_information``
    (registered beforehand, for this server), else a Client ID Metadata Document's URL when the
    server supports them, else the registration stored for ``issuer`` (while usable with
    ``redirect_uri``), else a new registration (for ``scope``, the scopes about to be asked for),
    which is stored."""
    if client_information is not None:
        return client_information
    if client_metadata_url and server.client_id_metadata_document_supported:
        return ClientInformation(client_id=client_metadata_url, token_endpoint_auth_method="none")
    stored = await store.get_client(issuer)
    if stored is not None and _usable(stored, redirect_uri):
        return stored
    info = await register_client(http, server, client_metadata, scope=scope)
    await store.set_client(issuer, info)
    return info
