"""The client side of MCP authorization (OAuth 2.1): discovery of the authorization server,
client registration, the authorization code flow with PKCE as an ``httpx.Auth``, refresh and
step-up, and where tokens are kept."""

from mcpbind.client.auth.discovery import Discovery, discover
from mcpbind.client.auth.stores import FileTokenStore, MemoryTokenStore, StoredTokens, TokenStore
from mcpbind.client.auth.token_endpoint import choose_auth_method, request_token

__all__ = [
    "Discovery",
    "FileTokenStore",
    "MemoryTokenStore",
    "StoredTokens",
    "TokenStore",
    "choose_auth_method",
    "discover",
    "request_token",
]
