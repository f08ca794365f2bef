"""An official MCP Python SDK server (``MCPServer``) that is its own authorization server with the
SEP-990 identity assertion grant turned on: it knows one confidential client (``xaa-client``,
secret ``xaa-secret``, Basic authentication) and accepts, in its jwt-bearer grant, the ID-JAGs an
enterprise identity provider signs. The provider here checks the ID-JAG with joserfc against the
identity provider's public key: its ``typ``, issuer, audience (this server's issuer), the client
it was issued to and the resource. Run as ``python official_xaa_server.py PORT IDP_ISSUER JWK``
(the identity provider's public key, a JSON JWK)."""

from __future__ import annotations

import json
import secrets
import sys
import time
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    IdentityAssertionParams,
    RefreshToken,
    TokenError,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CLIENT_ID = "xaa-client"
CLIENT_SECRET = "xaa-secret"


class EnterpriseProvider:
    """ID-JAGs in, access tokens out; no user-facing authorization at all."""

    def __init__(self, issuer: str, resource: str, idp_issuer: str, idp_key: ECKey) -> None:
        self.issuer, self.resource, self.idp_issuer, self.idp_key = issuer, resource, idp_issuer, idp_key
        self.access: dict[str, AccessToken] = {}
        self.client = OAuthClientInformationFull(
            client_id=CLIENT_ID,
            client_secret=CLIENT_SECRET,
            token_endpoint_auth_method="client_secret_basic",
            grant_types=[JWT_BEARER],
            scope="mcp:use",
        )

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.client if client_id == CLIENT_ID else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        raise NotImplementedError

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        raise NotImplementedError

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, code: str
    ) -> AuthorizationCode | None:
        return None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, code: AuthorizationCode
    ) -> OAuthToken:
        raise NotImplementedError

    async def load_refresh_token(self, client: OAuthClientInformationFull, token: str) -> RefreshToken | None:
        return None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        raise NotImplementedError

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        try:
            grant = jwt.decode(params.assertion, self.idp_key, algorithms=["ES256"])
            jwt.JWTClaimsRegistry(
                iss={"essential": True, "value": self.idp_issuer},
                aud={"essential": True, "value": self.issuer},
                client_id={"essential": True, "value": client.client_id},
                resource={"essential": True, "value": self.resource},
                exp={"essential": True},
            ).validate(grant.claims)
        except Exception as exc:
            raise TokenError("invalid_grant", f"the ID-JAG is not valid: {type(exc).__name__}") from None
        if grant.header.get("typ") != "oauth-id-jag+jwt":
            raise TokenError("invalid_grant", "not an ID-JAG")
        claims: dict[str, Any] = grant.claims
        scopes = params.scopes or str(claims.get("scope", "")).split()
        token = secrets.token_urlsafe(24)
        self.access[token] = AccessToken(
            token=token,
            client_id=CLIENT_ID,
            scopes=scopes,
            expires_at=int(time.time()) + 3600,
            resource=self.resource,
        )
        return OAuthToken(access_token=token, expires_in=3600, scope=" ".join(scopes))


def build(port: int, idp_issuer: str, idp_key: ECKey) -> MCPServer:
    base = f"http://127.0.0.1:{port}"
    server = MCPServer(
        "official-enterprise",
        auth_server_provider=EnterpriseProvider(base, f"{base}/mcp", idp_issuer, idp_key),
        auth=AuthSettings(
            issuer_url=base,  # type: ignore[arg-type]  # a string keeps its canonical form (no slash)
            resource_server_url=f"{base}/mcp",  # type: ignore[arg-type]
            validate_token_resource=True,
            required_scopes=["mcp:use"],
            identity_assertion_enabled=True,
            client_registration_options=ClientRegistrationOptions(enabled=False),
        ),
    )

    @server.tool(description="Says hello to someone.")
    def hello(name: str) -> str:
        return f"hello {name}"

    return server


if __name__ == "__main__":
    port = int(sys.argv[1])
    key = ECKey.import_key(json.loads(sys.argv[3]))
    build(port, sys.argv[2], key).run("streamable-http", host="127.0.0.1", port=port)
