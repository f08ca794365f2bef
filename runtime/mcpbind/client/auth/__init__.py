"""The client side of MCP authorization (OAuth 2.1): discovery of the authorization server,
client registration, the authorization code flow with PKCE as an ``httpx.Auth``
(:class:`OAuth`), refresh and step-up, and where tokens are kept. Without a user: client
credentials (:class:`ClientCredentials`) and cross-app access (:class:`CrossAppAccess`); on the
user's machine, the loopback redirect (:class:`LoopbackAuthorizer`)."""

from mcpbind.client.auth.assertion import PrivateKeyJWT
from mcpbind.client.auth.authorizer import AuthorizationResponse, Authorizer, parse_authorization_response
from mcpbind.client.auth.client_credentials import ClientCredentials
from mcpbind.client.auth.cross_app import CrossAppAccess
from mcpbind.client.auth.discovery import Discovery, discover
from mcpbind.client.auth.flow import AuthorizationFailed, OAuth
from mcpbind.client.auth.loopback import LoopbackAuthorizer
from mcpbind.client.auth.registration import client_id_metadata_document, obtain_client, register_client
from mcpbind.client.auth.scopes import select_scopes
from mcpbind.client.auth.stores import FileTokenStore, MemoryTokenStore, StoredTokens, TokenStore
from mcpbind.client.auth.token_endpoint import choose_auth_method, request_token

__all__ = [
    "AuthorizationFailed",
    "AuthorizationResponse",
    "Authorizer",
    "ClientCredentials",
    "CrossAppAccess",
    "Discovery",
    "FileTokenStore",
    "LoopbackAuthorizer",
    "MemoryTokenStore",
    "OAuth",
    "PrivateKeyJWT",
    "StoredTokens",
    "TokenStore",
    "choose_auth_method",
    "client_id_metadata_document",
    "discover",
    "obtain_client",
    "parse_authorization_response",
    "register_client",
    "request_token",
    "select_scopes",
]
