"""A protected MCP server: an OAuth 2.1 resource server (MCP authorization, RFC 9728, RFC 6750,
RFC 8707).

::

    auth = ResourceServerAuth(
        "https://auth.example.com",                 # the issuer
        "https://mcp.example.com/mcp",              # this endpoint: the tokens' audience
        jwks_url="https://auth.example.com/jwks",   # or introspection_url=..., or verifier=...
        required_scopes=["mcp"],
    )
    app = server.http_app(auth=auth)                # a ProtectedApp around the Streamable HTTP app

    @server.tool(scopes=["files:write"])            # checked before the function runs
    async def save(path: str, ctx: RequestContext) -> str:
        who = ctx.access_token.subject              # the verified token (claims, scopes...)

The pieces: :mod:`.settings` (:class:`ResourceServerAuth`), :mod:`.verifier` (the
:class:`TokenVerifier` protocol), :mod:`.jwt_verifier` and :mod:`.jwks` (JWTs against a key
set), :mod:`.introspection` (RFC 7662), :mod:`.claims` (issuer, audience, time checks),
:mod:`.middleware` (:class:`ProtectedApp`: metadata, 401/403, session binding),
:mod:`.scope_check` (per-request scopes), :mod:`.metadata`, :mod:`.bearer`, :mod:`.cli_options`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpbind.oauth.access_token import AccessToken
    from mcpbind.server.auth.algorithms import DEFAULT_ALGORITHMS
    from mcpbind.server.auth.errors import InvalidToken, VerifierUnavailable
    from mcpbind.server.auth.introspection import IntrospectionVerifier
    from mcpbind.server.auth.jwt_verifier import JWTVerifier
    from mcpbind.server.auth.middleware import ProtectedApp
    from mcpbind.server.auth.settings import ResourceServerAuth
    from mcpbind.server.auth.verifier import TokenVerifier

__all__ = [
    "DEFAULT_ALGORITHMS",
    "AccessToken",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "ProtectedApp",
    "ResourceServerAuth",
    "TokenVerifier",
    "VerifierUnavailable",
]

# Where each name lives: imported when first asked for, so that the command line (which reads
# only the settings) loads neither joserfc nor the HTTP server.
_HOMES = {
    "AccessToken": "mcpbind.oauth.access_token",
    "DEFAULT_ALGORITHMS": "mcpbind.server.auth.algorithms",
    "InvalidToken": "mcpbind.server.auth.errors",
    "VerifierUnavailable": "mcpbind.server.auth.errors",
    "IntrospectionVerifier": "mcpbind.server.auth.introspection",
    "JWTVerifier": "mcpbind.server.auth.jwt_verifier",
    "ProtectedApp": "mcpbind.server.auth.middleware",
    "ResourceServerAuth": "mcpbind.server.auth.settings",
    "TokenVerifier": "mcpbind.server.auth.verifier",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(home), name)
