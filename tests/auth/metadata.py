"""The local authorization server's metadata document (RFC 8414 section 2), naming its issuer
exactly as configured (RFC 8414 section 3.3: the client compares it with the issuer it
expected, character for character)."""

from __future__ import annotations

from typing import Any

from tests.auth.clients import AUTH_METHODS, GRANT_TYPES
from tests.auth.state import AuthorizationServerState

__all__ = ["metadata_document", "metadata_path"]


def metadata_path(state: AuthorizationServerState) -> str:
    """Where the document is served: the well-known prefix before the issuer's path."""
    return f"/.well-known/oauth-authorization-server{state.path}"


def metadata_document(state: AuthorizationServerState) -> dict[str, Any]:
    return {
        "issuer": state.issuer,
        "authorization_endpoint": state.endpoint("authorize"),
        "token_endpoint": state.endpoint("token"),
        "registration_endpoint": state.endpoint("register"),
        "jwks_uri": state.endpoint("jwks"),
        "introspection_endpoint": state.endpoint("introspect"),
        "scopes_supported": list(state.scopes_supported),
        "response_types_supported": ["code"],
        "grant_types_supported": list(GRANT_TYPES),
        "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
    }
