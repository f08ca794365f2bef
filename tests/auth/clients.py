"""The clients the local authorization server knows: registered dynamically (RFC 7591) or
beforehand (confidential clients for the ``client_credentials`` grant), and how a token or
introspection request authenticates one (``none``, ``client_secret_basic``,
``client_secret_post``; RFC 6749 section 2.3)."""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tests.auth.asgi import Request

__all__ = ["AUTH_METHODS", "GRANT_TYPES", "Client", "ClientError", "ClientRegistry"]

AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
GRANT_TYPES = ("authorization_code", "refresh_token", "client_credentials")


class ClientError(Exception):
    """A refused registration or client authentication: the OAuth ``error`` and a description."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


@dataclass
class Client:
    client_id: str
    auth_method: str
    secret: str | None = None
    redirect_uris: list[str] = field(default_factory=list)
    grant_types: list[str] = field(default_factory=lambda: ["authorization_code", "refresh_token"])
    # The subject of the tokens of its client_credentials grant: the client itself.
    name: str | None = None


def _check_redirect_uri(uri: Any) -> str:
    """A redirect URI a client may register: absolute, no fragment; http only on loopback
    (OAuth 2.1 section 2.3.1 and RFC 8252 section 7.3)."""
    if not isinstance(uri, str):
        raise ClientError("invalid_redirect_uri", "redirect_uris must be strings")
    parts = urlsplit(uri)
    if not parts.scheme or parts.fragment or "#" in uri:
        raise ClientError("invalid_redirect_uri", f"not an absolute URI without fragment: {uri}")
    if parts.scheme == "http" and parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise ClientError("invalid_redirect_uri", f"http redirect URIs only on loopback: {uri}")
    return uri


class ClientRegistry:
    """Every client of the server, by ``client_id``."""

    def __init__(self) -> None:
        self.clients: dict[str, Client] = {}
        self.registrations: list[dict[str, Any]] = []  # the metadata each registration sent

    def add_confidential(self, client_id: str, secret: str, grant_types: list[str] | None = None) -> Client:
        """A client registered beforehand, with a secret (``client_secret_basic`` or ``_post``)."""
        client = Client(
            client_id, "client_secret_basic", secret, grant_types=grant_types or ["client_credentials"]
        )
        self.clients[client_id] = client
        return client

    def register(self, metadata: Any) -> dict[str, Any]:
        """Dynamic registration (RFC 7591 section 3): the client information answered."""
        if not isinstance(metadata, dict):
            raise ClientError("invalid_client_metadata", "the body must be a JSON object")
        self.registrations.append(metadata)
        method = metadata.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in AUTH_METHODS:
            raise ClientError("invalid_client_metadata", f"unsupported token_endpoint_auth_method {method!r}")
        grants = metadata.get("grant_types", ["authorization_code"])
        if not isinstance(grants, list) or not grants or any(grant not in GRANT_TYPES for grant in grants):
            raise ClientError("invalid_client_metadata", f"unsupported grant_types {grants!r}")
        uris = metadata.get("redirect_uris", [])
        if not isinstance(uris, list):
            raise ClientError("invalid_redirect_uri", "redirect_uris must be a list")
        if "authorization_code" in grants and not uris:
            raise ClientError("invalid_redirect_uri", "the authorization code grant needs redirect_uris")
        client = Client(
            client_id=f"client-{secrets.token_hex(8)}",
            auth_method=method,
            secret=None if method == "none" else secrets.token_urlsafe(24),
            redirect_uris=[_check_redirect_uri(uri) for uri in uris],
            grant_types=list(grants),
            name=metadata.get("client_name"),
        )
        self.clients[client.client_id] = client
        information = {
            **metadata,
            "client_id": client.client_id,
            "client_id_issued_at": int(time.time()),
            "token_endpoint_auth_method": method,
            "grant_types": client.grant_types,
            "redirect_uris": client.redirect_uris,
        }
        if client.secret is not None:
            information["client_secret"] = client.secret
            information["client_secret_expires_at"] = 0
        return information

    def authenticate(self, request: Request, form: dict[str, str]) -> Client:
        """The client a token request comes from, authenticated the way it registered; the OAuth
        error ``invalid_client`` otherwise (RFC 6749 section 5.2)."""
        basic = request.basic_credentials()
        if basic is not None and "client_secret" in form:
            raise ClientError("invalid_request", "one client authentication method per request")
        client_id = basic[0] if basic is not None else form.get("client_id")
        client = self.clients.get(client_id or "")
        if client is None:
            raise ClientError("invalid_client", "unknown client")
        if basic is not None:
            presented, method = basic[1], "client_secret_basic"
        elif "client_secret" in form:
            presented, method = form["client_secret"], "client_secret_post"
        else:
            presented, method = None, "none"
        if client.secret is None:
            if method != "none":
                raise ClientError("invalid_client", "a public client has no secret")
            return client
        # A confidential client may use either secret method; never none.
        if presented is None or not hmac.compare_digest(presented, client.secret):
            raise ClientError("invalid_client", "client authentication failed")
        return client
