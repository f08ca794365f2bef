"""Finding out who grants tokens for an MCP server: its Protected Resource Metadata (RFC 9728:
the URL a 401 names, else the path-aware then the root well-known URL), then that authorization
server's metadata (RFC 8414 / OpenID Connect Discovery, in the order MCP gives). A server of the
2025-03-26 revision publishes no resource metadata: its origin is then the authorization server,
with its metadata at the root or, when it has none, the default endpoints ``/authorize``,
``/token`` and ``/register``."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec

from mcpbind.oauth.challenge import Challenge
from mcpbind.oauth.metadata import (
    AuthorizationServerMetadata,
    ProtectedResourceMetadata,
    authorization_server_metadata_urls,
    decode_authorization_server_metadata,
    decode_protected_resource_metadata,
    protected_resource_metadata_urls,
)
from mcpbind.oauth.tokens import OAuthError
from mcpbind.versions import LATEST_VERSION

__all__ = ["Discovery", "canonical_resource", "check_secure", "discover", "resource_covers"]


@dataclass(frozen=True, slots=True)
class Discovery:
    """What discovery found. ``resource``: the RFC 8707 ``resource`` value tokens are asked for;
    ``prm``: the resource metadata (None for a 2025-03-26 server); ``issuer``: the authorization
    server's identifier (what credentials are keyed by); ``metadata``: its metadata, synthesized
    with the default endpoints when a 2025-03-26 server has none (``synthesized``)."""

    resource: str
    prm: ProtectedResourceMetadata | None
    issuer: str
    metadata: AuthorizationServerMetadata
    synthesized: bool = False


def canonical_resource(server_url: str) -> str:
    """The MCP server's canonical URI (RFC 8707 section 2): scheme and host lower-cased, no
    fragment, no trailing slash."""
    parts = urlsplit(server_url)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), "", "", ""))


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether the resource a Protected Resource Metadata document names is the MCP server at
    ``server_url`` or a parent of it (same origin, its path a whole-segment prefix). A document
    naming any other resource must not be used: a token for it would go to a server it was not
    meant for."""
    named, target = urlsplit(canonical_resource(resource)), urlsplit(canonical_resource(server_url))
    if (named.scheme, named.netloc) != (target.scheme, target.netloc):
        return False
    prefix, path = named.path.rstrip("/"), target.path.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_secure(metadata: AuthorizationServerMetadata) -> None:
    """OAuth 2.1 section 1.5: every OAuth URL is ``https``, except on the loopback interface.
    ``OAuthError`` (``insecure_endpoint``) naming the first that is not."""
    for name in ("issuer", "authorization_endpoint", "token_endpoint", "registration_endpoint"):
        url = getattr(metadata, name)
        if url is None:
            continue
        parts = urlsplit(url)
        if parts.scheme != "https" and not (parts.scheme == "http" and _is_loopback(parts.hostname or "")):
            raise OAuthError("insecure_endpoint", f"the authorization server's {name} {url!r} is not https")


async def _get(http: httpx.AsyncClient, url: str) -> bytes | None:
    """The body of a 200 answer to a GET of ``url``; None for any other status (a missing
    document)."""
    response = await http.get(
        url, headers={"Accept": "application/json", "MCP-Protocol-Version": LATEST_VERSION}
    )
    if response.status_code != 200:
        return None
    return response.content


async def fetch_protected_resource_metadata(
    http: httpx.AsyncClient, server_url: str, challenge: Challenge | None
) -> ProtectedResourceMetadata | None:
    """The first Protected Resource Metadata document found: at the URL the challenge names,
    else at the path-aware then the root well-known URL. None when there is none."""
    urls = protected_resource_metadata_urls(server_url)
    if challenge is not None and challenge.resource_metadata:
        urls.insert(0, challenge.resource_metadata)
    for url in urls:
        body = await _get(http, url)
        if body is None:
            continue
        try:
            return decode_protected_resource_metadata(body)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
    return None


async def fetch_authorization_server_metadata(
    http: httpx.AsyncClient, issuer: str, *, check_issuer: bool = True
) -> AuthorizationServerMetadata | None:
    """The metadata of the authorization server ``issuer``, from the first of its well-known URLs
    that has a document. With ``check_issuer`` a document naming another issuer is not used
    (RFC 8414 section 3.3: they must be identical)."""
    for url in authorization_server_metadata_urls(issuer):
        body = await _get(http, url)
        if body is None:
            continue
        try:
            metadata = decode_authorization_server_metadata(body)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        if check_issuer and metadata.issuer != issuer:
            continue
        return metadata
    return None


def default_metadata(origin: str) -> AuthorizationServerMetadata:
    """The endpoints a 2025-03-26 client assumes when the server publishes no metadata."""
    return AuthorizationServerMetadata(
        issuer=origin,
        authorization_endpoint=f"{origin}/authorize",
        token_endpoint=f"{origin}/token",
        registration_endpoint=f"{origin}/register",
        response_types_supported=["code"],
        grant_types_supported=["authorization_code", "refresh_token"],
        code_challenge_methods_supported=["S256"],
    )


async def discover(http: httpx.AsyncClient, server_url: str, challenge: Challenge | None) -> Discovery:
    """Discover the authorization server of the MCP server at ``server_url`` (``challenge``: the
    Bearer challenge of its 401, if any). ``OAuthError`` when the resource metadata names another
    resource (``invalid_resource``), no authorization server can be found
    (``discovery_failed``) or one has an endpoint that is not ``https`` off the loopback
    interface (``insecure_endpoint``)."""
    prm = await fetch_protected_resource_metadata(http, server_url, challenge)
    if prm is None:
        # A 2025-03-26 server: the authorization server is at the MCP server's origin.
        origin = _origin(server_url)
        metadata = await fetch_authorization_server_metadata(http, origin, check_issuer=False)
        resource = canonical_resource(server_url)
        if metadata is None:
            metadata = default_metadata(origin)
            check_secure(metadata)
            return Discovery(resource, None, origin, metadata, synthesized=True)
        check_secure(metadata)
        return Discovery(resource, None, metadata.issuer, metadata)
    if not resource_covers(prm.resource, server_url):
        raise OAuthError(
            "invalid_resource",
            f"the protected resource metadata is for {prm.resource!r}, not for {server_url!r}",
        )
    if not prm.authorization_servers:
        raise OAuthError("discovery_failed", "the protected resource metadata names no authorization server")
    for issuer in prm.authorization_servers:
        metadata = await fetch_authorization_server_metadata(http, issuer)
        if metadata is not None:
            check_secure(metadata)
            return Discovery(prm.resource, prm, issuer, metadata)
    raise OAuthError(
        "discovery_failed",
        f"no metadata found for the authorization server(s) {', '.join(prm.authorization_servers)}",
    )
