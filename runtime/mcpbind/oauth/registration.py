"""Client registration: the client's metadata (RFC 7591 section 2, with OpenID's
``application_type``), as sent to a registration endpoint or published as a Client ID Metadata
Document, and what the authorization server answers (RFC 7591 section 3.2.1)."""

from __future__ import annotations

import msgspec

__all__ = ["ClientInformation", "ClientMetadata", "decode_client_information"]


class ClientMetadata(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What a client says of itself. ``application_type``: ``"native"`` for a client on the
    user's machine (loopback or custom-scheme redirects), ``"web"`` for one with HTTPS redirects.
    ``client_id`` is set only in a Client ID Metadata Document, where it is the document's own
    URL."""

    redirect_uris: list[str] | None = None
    token_endpoint_auth_method: str | None = None
    grant_types: list[str] | None = None
    response_types: list[str] | None = None
    client_name: str | None = None
    client_uri: str | None = None
    logo_uri: str | None = None
    scope: str | None = None
    contacts: list[str] | None = None
    tos_uri: str | None = None
    policy_uri: str | None = None
    jwks_uri: str | None = None
    software_id: str | None = None
    software_version: str | None = None
    application_type: str | None = None
    client_id: str | None = None


class ClientInformation(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The credentials a client holds for one authorization server: from registration, from
    pre-registration, or (with a Client ID Metadata Document) the document's URL and no secret.
    ``client_secret_expires_at`` 0 or absent: the secret does not expire."""

    client_id: str
    client_secret: str | None = None
    client_id_issued_at: int | None = None
    client_secret_expires_at: int | None = None
    token_endpoint_auth_method: str | None = None
    redirect_uris: list[str] | None = None
    grant_types: list[str] | None = None
    scope: str | None = None


_information_decoder = msgspec.json.Decoder(ClientInformation)


def decode_client_information(body: bytes) -> ClientInformation:
    """Parse a registration response (RFC 7591 section 3.2.1); members it does not know are
    ignored."""
    return _information_decoder.decode(body)
