"""A protected MCP server, its authorization server and an enterprise identity provider, in one
ASGI app of the tests' own (served on 127.0.0.1 by ``tests.http_harness.serve_asgi``).

- ``/mcp``: mcpbind's Streamable HTTP server behind a bearer check: 401 with a
  ``WWW-Authenticate`` naming the resource metadata without a valid token, 403
  ``insufficient_scope`` when the token lacks ``required_scopes``.
- ``/.well-known/oauth-protected-resource/mcp``: its resource metadata, naming ``{base}/as``.
- ``/.well-known/oauth-authorization-server/as``: the authorization server's metadata;
  ``/as/token``: the ``client_credentials``, ``jwt-bearer`` and ``authorization_code`` grants;
  ``/as/authorize``: approves at once (302 to the redirect URI); ``/as/register``: RFC 7591.
- ``/.well-known/openid-configuration/idp``, ``/idp/token``: the identity provider, RFC 8693
  token exchange of an ID token for an ID-JAG (cross-app access).

Every token request is recorded (form and headers) for the tests to look at.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from joserfc import jwt
from joserfc.jwk import ECKey

from mcpbind.oauth.challenge import format_challenge
from mcpbind.server.server import Server
from tests.raw_asgi import Scope, read_body

ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def mcp_server() -> Server:
    server = Server("protected", "1.0")

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Adds two numbers."""
        return a + b

    return server


@dataclass
class TokenRequest:
    endpoint: str
    form: dict[str, str]
    headers: dict[str, str]


@dataclass
class MockOAuth:
    """What the mock servers accept; ``base`` is set once served."""

    base: str = ""
    client_id: str = "machine-client"
    client_secret: str | None = "machine-secret"
    client_key: ECKey | None = None
    auth_methods: list[str] = field(default_factory=lambda: ["client_secret_basic"])
    signing_algs: list[str] | None = None
    grant_types: list[str] = field(default_factory=lambda: ["client_credentials"])
    scopes_supported: list[str] | None = None
    required_scopes: frozenset[str] = frozenset()
    other_authorization_servers: list[str] = field(default_factory=list)  # named before ours
    token_lifetime: int = 3600
    # cross-app access
    idp_client_id: str = "idp-client"
    idp_audience: str | None = None  # the authorization server ID-JAGs are for (default: ours)
    idp_key: ECKey = field(default_factory=lambda: ECKey.generate_key("P-256", private=True))
    jag_key: ECKey = field(default_factory=lambda: ECKey.generate_key("P-256", private=True))
    # authorization code (the CLI)
    registered: dict[str, dict[str, Any]] = field(default_factory=dict)
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    # what happened
    tokens: dict[str, frozenset[str]] = field(default_factory=dict)
    requests: list[TokenRequest] = field(default_factory=list)
    mcp_authorizations: list[str | None] = field(default_factory=list)
    assertion_claims: list[dict[str, Any]] = field(default_factory=list)

    @property
    def issuer(self) -> str:
        return f"{self.base}/as"

    @property
    def idp_issuer(self) -> str:
        return f"{self.base}/idp"

    @property
    def resource(self) -> str:
        return f"{self.base}/mcp"

    def id_token(self, subject: str = "alice@example.com", audience: str | None = None) -> str:
        """An ID token the identity provider issued to the client at sign-in."""
        now = int(time.time())
        claims = {
            "iss": self.idp_issuer,
            "sub": subject,
            "aud": audience or self.idp_client_id,
            "iat": now,
            "exp": now + 600,
        }
        return jwt.encode({"alg": "ES256"}, claims, self.idp_key, algorithms=["ES256"])

    def grant_for(self, token: str) -> frozenset[str]:
        return self.tokens[token]


class OAuthApp:
    """The ASGI app; see the module's docstring."""

    def __init__(self, oauth: MockOAuth) -> None:
        self.oauth = oauth
        self.mcp = mcp_server().http_app()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.mcp(scope, receive, send)
            return
        path: str = scope["path"]
        if path == "/mcp":
            await self._mcp(scope, receive, send)
            return
        body = await read_body(receive)
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        form = {key: values[0] for key, values in parse_qs(body.decode()).items()}
        query = {key: values[0] for key, values in parse_qs(scope["query_string"].decode()).items()}
        status, answer, extra = self._route(scope["method"], path, form, query, headers, body)
        payload = json.dumps(answer).encode() if answer is not None else b""
        response_headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store"), *extra]
        await send({"type": "http.response.start", "status": status, "headers": response_headers})
        await send({"type": "http.response.body", "body": payload})

    async def _mcp(self, scope: Scope, receive: Any, send: Any) -> None:
        oauth = self.oauth
        authorization = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1") or None
        oauth.mcp_authorizations.append(authorization)
        token = authorization[7:] if authorization and authorization.lower().startswith("bearer ") else None
        metadata = f"{oauth.base}/.well-known/oauth-protected-resource/mcp"
        if token is None or token not in oauth.tokens:
            error = "invalid_token" if token is not None else None
            challenge = format_challenge("Bearer", error=error, resource_metadata=metadata)
            await _plain(send, 401, challenge)
            return
        if not oauth.required_scopes <= oauth.tokens[token]:
            scopes = " ".join(sorted(oauth.required_scopes))
            challenge = format_challenge(
                "Bearer", error="insufficient_scope", scope=scopes, resource_metadata=metadata
            )
            await _plain(send, 403, challenge)
            return
        await self.mcp(scope, receive, send)

    def _route(
        self,
        method: str,
        path: str,
        form: dict[str, str],
        query: dict[str, str],
        headers: dict[str, str],
        body: bytes,
    ) -> tuple[int, Any, list[tuple[bytes, bytes]]]:
        oauth = self.oauth
        if path == "/.well-known/oauth-protected-resource/mcp":
            servers = [*oauth.other_authorization_servers, oauth.issuer]
            prm: dict[str, Any] = {"resource": oauth.resource, "authorization_servers": servers}
            if oauth.scopes_supported is not None:
                prm["scopes_supported"] = oauth.scopes_supported
            return 200, prm, []
        if path == "/.well-known/oauth-authorization-server/as":
            metadata: dict[str, Any] = {
                "issuer": oauth.issuer,
                "authorization_endpoint": f"{oauth.issuer}/authorize",
                "token_endpoint": f"{oauth.issuer}/token",
                "registration_endpoint": f"{oauth.issuer}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": oauth.grant_types,
                "token_endpoint_auth_methods_supported": oauth.auth_methods,
                "code_challenge_methods_supported": ["S256"],
            }
            if oauth.signing_algs is not None:
                metadata["token_endpoint_auth_signing_alg_values_supported"] = oauth.signing_algs
            return 200, metadata, []
        if path == "/.well-known/openid-configuration/idp":
            idp = {"issuer": oauth.idp_issuer, "token_endpoint": f"{oauth.idp_issuer}/token"}
            return 200, {**idp, "grant_types_supported": [TOKEN_EXCHANGE]}, []
        if path == "/as/token" and method == "POST":
            oauth.requests.append(TokenRequest("as", form, headers))
            return self._token(form, headers)
        if path == "/idp/token" and method == "POST":
            oauth.requests.append(TokenRequest("idp", form, headers))
            return self._exchange(form)
        if path == "/as/authorize":
            return self._authorize(query)
        if path == "/as/register" and method == "POST":
            request = json.loads(body)
            client_id = f"dcr-{secrets.token_hex(4)}"
            oauth.registered[client_id] = request
            return 201, {**request, "client_id": client_id, "token_endpoint_auth_method": "none"}, []
        return 404, {"error": "not_found"}, []

    def _authorize(self, query: dict[str, str]) -> tuple[int, Any, list[tuple[bytes, bytes]]]:
        oauth = self.oauth
        client = oauth.registered.get(query.get("client_id", ""))
        redirect_uri = query.get("redirect_uri", "")
        if client is None or not any(
            _same_redirect(redirect_uri, uri) for uri in client.get("redirect_uris", [])
        ):
            return (
                400,
                {"error": "invalid_request", "error_description": "unknown client or redirect_uri"},
                [],
            )
        code = secrets.token_urlsafe(16)
        oauth.codes[code] = query
        location = (
            redirect_uri
            + "?"
            + urlencode({"code": code, "state": query.get("state", ""), "iss": oauth.issuer})
        )
        return 302, None, [(b"location", location.encode())]

    def _token(
        self, form: dict[str, str], headers: dict[str, str]
    ) -> tuple[int, Any, list[tuple[bytes, bytes]]]:
        oauth = self.oauth
        grant = form.get("grant_type")
        if grant == "authorization_code":
            query = oauth.codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            challenge = (
                base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            )
            if (
                query is None
                or challenge != query.get("code_challenge")
                or form.get("resource") != oauth.resource
            ):
                return 400, {"error": "invalid_grant"}, []
            return self._issue(query.get("scope"))
        client_id = self._authenticate(form, headers)
        if client_id is None:
            return 401, {"error": "invalid_client"}, []
        if form.get("resource") != oauth.resource:
            return 400, {"error": "invalid_target"}, []
        if grant == "client_credentials" and grant in oauth.grant_types:
            return self._issue(form.get("scope"))
        if grant == JWT_BEARER and grant in oauth.grant_types:
            try:
                token = jwt.decode(form.get("assertion", ""), oauth.jag_key, algorithms=["ES256"])
                jwt.JWTClaimsRegistry(
                    iss={"essential": True, "value": oauth.idp_issuer},
                    aud={"essential": True, "value": oauth.issuer},
                    client_id={"essential": True, "value": client_id},
                    resource={"essential": True, "value": oauth.resource},
                ).validate(token.claims)
            except Exception:
                return 400, {"error": "invalid_grant"}, []
            if token.header.get("typ") != "oauth-id-jag+jwt":
                return 400, {"error": "invalid_grant"}, []
            return self._issue(form.get("scope") or token.claims.get("scope"))
        return 400, {"error": "unsupported_grant_type"}, []

    def _authenticate(self, form: dict[str, str], headers: dict[str, str]) -> str | None:
        """The authenticated client, by one of the accepted methods; None when it is not."""
        oauth = self.oauth
        authorization = headers.get("authorization", "")
        if authorization.startswith("Basic ") and "client_secret_basic" in oauth.auth_methods:
            client_id, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")
            good = unquote(client_id) == oauth.client_id and unquote(secret) == oauth.client_secret
            return oauth.client_id if good else None
        if "client_secret" in form and "client_secret_post" in oauth.auth_methods:
            good = form.get("client_id") == oauth.client_id and form["client_secret"] == oauth.client_secret
            return oauth.client_id if good else None
        if form.get("client_assertion_type") == ASSERTION_TYPE and "private_key_jwt" in oauth.auth_methods:
            assert oauth.client_key is not None
            try:
                token = jwt.decode(
                    form.get("client_assertion", ""), oauth.client_key, algorithms=oauth.signing_algs
                )
                jwt.JWTClaimsRegistry(
                    iss={"essential": True, "value": oauth.client_id},
                    sub={"essential": True, "value": oauth.client_id},
                    aud={"essential": True, "value": oauth.issuer},
                    exp={"essential": True},
                    jti={"essential": True},
                ).validate(token.claims)
            except Exception:
                return None
            oauth.assertion_claims.append({"header": token.header, **token.claims})
            return oauth.client_id
        return None

    def _issue(self, scope: str | None) -> tuple[int, Any, list[tuple[bytes, bytes]]]:
        token = f"at-{secrets.token_hex(8)}"
        granted = frozenset((scope or "").split())
        self.oauth.tokens[token] = granted
        answer: dict[str, Any] = {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": self.oauth.token_lifetime,
        }
        if scope:
            answer["scope"] = scope
        return 200, answer, []

    def _exchange(self, form: dict[str, str]) -> tuple[int, Any, list[tuple[bytes, bytes]]]:
        """RFC 8693 at the identity provider: an ID token for an ID-JAG."""
        oauth = self.oauth
        if form.get("grant_type") != TOKEN_EXCHANGE:
            return 400, {"error": "unsupported_grant_type"}, []
        if form.get("requested_token_type") != ID_JAG or form.get("subject_token_type") != ID_TOKEN:
            return 400, {"error": "invalid_request"}, []
        audience = oauth.idp_audience or oauth.issuer
        if form.get("audience") != audience or form.get("client_id") != oauth.idp_client_id:
            return 400, {"error": "invalid_request", "error_description": "audience or client_id"}, []
        try:
            id_token = jwt.decode(form.get("subject_token", ""), oauth.idp_key, algorithms=["ES256"])
            jwt.JWTClaimsRegistry(
                iss={"essential": True, "value": oauth.idp_issuer},
                aud={"essential": True, "value": oauth.idp_client_id},
            ).validate(id_token.claims)
        except Exception:
            return 400, {"error": "invalid_grant", "error_description": "the ID token is not valid"}, []
        now = int(time.time())
        claims = {
            "iss": oauth.idp_issuer,
            "sub": id_token.claims["sub"],
            "aud": form["audience"],
            "client_id": oauth.client_id,
            "resource": form.get("resource"),
            "iat": now,
            "exp": now + 300,
            "jti": secrets.token_hex(8),
        }
        if form.get("scope"):
            claims["scope"] = form["scope"]
        jag = jwt.encode(
            {"alg": "ES256", "typ": "oauth-id-jag+jwt"}, claims, oauth.jag_key, algorithms=["ES256"]
        )
        return (
            200,
            {"access_token": jag, "issued_token_type": ID_JAG, "token_type": "N_A", "expires_in": 300},
            [],
        )


def _same_redirect(asked: str, registered: str) -> bool:
    """RFC 8252 section 7.3: a loopback redirect URI matches whatever its port."""
    a, r = urlsplit(asked), urlsplit(registered)
    if a.hostname == r.hostname == "127.0.0.1" and a.scheme == r.scheme == "http":
        return (a.path, a.query) == (r.path, r.query)
    return asked == registered


async def _plain(send: Any, status: int, challenge: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", challenge.encode())],
        }
    )
    await send({"type": "http.response.body", "body": b"authorization needed"})


def basic(client_id: str, secret: str) -> str:
    return (
        "Basic " + base64.b64encode(f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()).decode()
    )
