"""A small world for the client's OAuth tests: a protected MCP endpoint (``https://mcp.test/mcp``)
and an authorization server (``https://as.test`` by default), both answered in process through
``httpx.MockTransport``, and an authorizer playing the user who approves at once. Everything each
side receives is recorded so tests can check what the client sent, and in which order."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote_plus, urlencode, urlsplit

import httpx

from mcpbind.oauth.metadata import authorization_server_metadata_urls

RESOURCE = "https://mcp.test/mcp"


@dataclass
class Issued:
    client_id: str
    scopes: set[str]
    resource: str | None
    issuer: str
    valid: bool = True


@dataclass
class Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    resource: str | None
    scope: str | None


@dataclass
class FakeWorld:
    issuer: str = "https://as.test"
    prm_path: str | None = "/.well-known/oauth-protected-resource/mcp"
    prm_in_header: bool = True
    prm_resource: str = RESOURCE
    prm_scopes: list[str] | None = None
    challenge_scope: str | None = None
    # None: the first URL the spec's order gives; "" : no metadata anywhere.
    metadata_url: str | None = None
    metadata_issuer: str | None = None
    metadata_extra: dict[str, Any] = field(default_factory=dict)
    iss_in_response: bool = False
    expires_in: int | None = 3600
    refresh_tokens: bool = True
    required_scopes: set[str] = field(default_factory=set)
    withheld: set[str] = field(default_factory=set)  # scopes this server never grants
    # Refuse (invalid_scope) scopes the client's registration did not name.
    scopes_bound_to_registration: bool = False
    registered_scopes: dict[str, set[str]] = field(default_factory=dict)
    registration: bool = True
    auth_methods: list[str] = field(
        default_factory=lambda: ["none", "client_secret_basic", "client_secret_post"]
    )
    # Recorded.
    requests: list[tuple[str, str]] = field(default_factory=list)
    registrations: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[dict[str, str]] = field(default_factory=list)
    token_requests: list[dict[str, Any]] = field(default_factory=list)
    mcp_tokens: list[str | None] = field(default_factory=list)
    # State.
    codes: dict[str, Grant] = field(default_factory=dict)
    access: dict[str, Issued] = field(default_factory=dict)
    refresh: dict[str, Issued] = field(default_factory=dict)
    clients: dict[str, str | None] = field(default_factory=dict)
    tamper: dict[str, str | None] = field(default_factory=dict)
    _counter: itertools.count[int] = field(default_factory=itertools.count)

    # -- helpers -------------------------------------------------------------------------------
    @property
    def origin(self) -> str:
        parts = urlsplit(self.issuer)
        return f"{parts.scheme}://{parts.netloc}"

    def _metadata_url(self) -> str:
        return (
            self.metadata_url
            if self.metadata_url is not None
            else authorization_server_metadata_urls(self.issuer)[0]
        )

    def metadata(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "issuer": self.metadata_issuer or self.issuer,
            "authorization_endpoint": f"{self.origin}/authorize",
            "token_endpoint": f"{self.origin}/token",
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": self.auth_methods,
        }
        if self.registration:
            document["registration_endpoint"] = f"{self.origin}/register"
        if self.iss_in_response:
            document["authorization_response_iss_parameter_supported"] = True
        document.update(self.metadata_extra)
        return document

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=self.transport())

    def new(self, prefix: str) -> str:
        return f"{prefix}-{next(self._counter)}"

    def revoke_access_tokens(self) -> None:
        for issued in self.access.values():
            issued.valid = False

    @property
    def token_grants(self) -> list[str]:
        return [request["form"].get("grant_type", "") for request in self.token_requests]

    # -- the user at the authorization endpoint ------------------------------------------------
    async def authorize(self, url: str) -> str:
        parts = urlsplit(url)
        assert f"{parts.scheme}://{parts.netloc}{parts.path}" == f"{self.origin}/authorize"
        params = {name: values[0] for name, values in parse_qs(parts.query).items()}
        self.authorizations.append(params)
        asked = set(params.get("scope", "").split())
        if self.scopes_bound_to_registration and not asked <= self.registered_scopes.get(
            params["client_id"], set()
        ):
            refusal = {"error": "invalid_scope", "state": params.get("state")}
            return (
                f"{params['redirect_uri']}?{urlencode({k: v for k, v in refusal.items() if v is not None})}"
            )
        code = self.new("code")
        self.codes[code] = Grant(
            params["client_id"],
            params["redirect_uri"],
            params["code_challenge"],
            params.get("resource"),
            params.get("scope"),
        )
        answer: dict[str, str | None] = {"code": code, "state": params.get("state")}
        if self.iss_in_response:
            answer["iss"] = self.issuer
        answer.update(self.tamper)
        query = urlencode({name: value for name, value in answer.items() if value is not None})
        return f"{params['redirect_uri']}?{query}"

    # -- HTTP ----------------------------------------------------------------------------------
    def handle(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url.copy_with(query=None))
        self.requests.append((request.method, url))
        if request.method == "GET" and url == self._metadata_url() and self.metadata_url != "":
            return httpx.Response(200, json=self.metadata())
        if request.method == "POST" and url == f"{self.origin}/register" and self.registration:
            return self._register(request)
        if request.method == "POST" and url == f"{self.origin}/token":
            return self._token(request)
        if request.url.host == "mcp.test":
            return self._resource(request, url)
        return httpx.Response(404, json={"error": "not_found"})

    def _resource(self, request: httpx.Request, url: str) -> httpx.Response:
        if (
            request.method == "GET"
            and self.prm_path is not None
            and url == f"https://mcp.test{self.prm_path}"
        ):
            document: dict[str, Any] = {"resource": self.prm_resource, "authorization_servers": [self.issuer]}
            if self.prm_scopes is not None:
                document["scopes_supported"] = self.prm_scopes
            return httpx.Response(200, json=document)
        if url != RESOURCE:
            return httpx.Response(404)
        header = request.headers.get("Authorization", "")
        token = header.removeprefix("Bearer ") if header.startswith("Bearer ") else None
        self.mcp_tokens.append(token)
        issued = self.access.get(token or "")
        if issued is None or not issued.valid or issued.issuer != self.issuer:
            params = []
            if self.prm_in_header and self.prm_path is not None:
                params.append(f'resource_metadata="https://mcp.test{self.prm_path}"')
            if self.challenge_scope:
                params.append(f'scope="{self.challenge_scope}"')
            challenge = "Bearer " + ", ".join(params) if params else "Bearer"
            return httpx.Response(401, headers={"WWW-Authenticate": challenge})
        if not self.required_scopes <= issued.scopes:
            scope = " ".join(sorted(self.required_scopes))
            challenge = f'Bearer error="insufficient_scope", scope="{scope}"'
            return httpx.Response(403, headers={"WWW-Authenticate": challenge})
        return httpx.Response(200, json={"ok": True})

    def _register(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.registrations.append(body)
        client_id = self.new(f"client@{self.origin}")
        method = body.get("token_endpoint_auth_method") or "client_secret_basic"
        secret = None if method == "none" else self.new("secret")
        self.clients[client_id] = secret
        self.registered_scopes[client_id] = set((body.get("scope") or "").split())
        answer = {"client_id": client_id, "token_endpoint_auth_method": method, **body}
        if secret is not None:
            answer["client_secret"] = secret
        return httpx.Response(201, json=answer)

    def _authenticate(self, request: httpx.Request, form: dict[str, str]) -> tuple[str, str | None]:
        header = request.headers.get("Authorization")
        if header is not None and header.startswith("Basic "):
            encoded_id, _, encoded_secret = base64.b64decode(header[6:]).decode().partition(":")
            client_id, secret = unquote_plus(encoded_id), unquote_plus(encoded_secret)
            return "client_secret_basic", client_id if self.clients.get(client_id) == secret else None
        if "client_secret" in form:
            ok = self.clients.get(form.get("client_id", "")) == form["client_secret"]
            return "client_secret_post", form["client_id"] if ok else None
        client_id = form.get("client_id", "")
        public = client_id in self.clients and self.clients[client_id] is None
        return "none", client_id if public or client_id.startswith("https://") else None

    def _issue(self, client_id: str, scopes: set[str], resource: str | None) -> dict[str, Any]:
        token = self.new("at")
        self.access[token] = Issued(client_id, scopes, resource, self.issuer)
        answer: dict[str, Any] = {
            "access_token": token,
            "token_type": "Bearer",
            "scope": " ".join(sorted(scopes)),
        }
        if self.expires_in is not None:
            answer["expires_in"] = self.expires_in
        if self.refresh_tokens:
            refresh = self.new("rt")
            self.refresh[refresh] = Issued(client_id, scopes, resource, self.issuer)
            answer["refresh_token"] = refresh
        return answer

    def _token(self, request: httpx.Request) -> httpx.Response:
        form = {name: values[0] for name, values in parse_qs(request.content.decode()).items()}
        method, client_id = self._authenticate(request, form)
        self.token_requests.append({"form": form, "method": method, "client_id": client_id})
        if client_id is None:
            return httpx.Response(401, json={"error": "invalid_client"})
        if form.get("grant_type") == "authorization_code":
            grant = self.codes.pop(form.get("code", ""), None)
            if (
                grant is None
                or grant.client_id != client_id
                or grant.redirect_uri != form.get("redirect_uri")
            ):
                return httpx.Response(400, json={"error": "invalid_grant"})
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != grant.challenge:
                return httpx.Response(400, json={"error": "invalid_grant", "error_description": "PKCE"})
            granted = set((grant.scope or "").split()) - self.withheld
            return httpx.Response(200, json=self._issue(client_id, granted, grant.resource))
        if form.get("grant_type") == "refresh_token":
            issued = self.refresh.get(form.get("refresh_token", ""))
            if issued is None or not issued.valid or issued.client_id != client_id:
                return httpx.Response(400, json={"error": "invalid_grant"})
            return httpx.Response(200, json=self._issue(client_id, issued.scopes, form.get("resource")))
        return httpx.Response(400, json={"error": "unsupported_grant_type"})
