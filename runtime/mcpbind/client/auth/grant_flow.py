"""The ``httpx.Auth`` of a client that obtains its tokens without a user: client credentials
(:mod:`~mcpbind.client.auth.client_credentials`) and cross-app access
(:mod:`~mcpbind.client.auth.cross_app`). A request goes out with the token held, if any; a 401 (or
a token about to expire) has the authorization server discovered and a token requested anew, a
403 ``insufficient_scope`` one with the scopes the challenge names. No refresh token is needed: the
grant is simply made again."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator
from typing import TypeGuard

import anyio
import httpx

from mcpbind.client.auth.discovery import Discovery, discover, fetch_authorization_server_metadata
from mcpbind.client.auth.flow import AuthorizationFailed
from mcpbind.client.auth.scopes import select_scopes, split_scopes
from mcpbind.client.auth.stores import StoredTokens, TokenStore
from mcpbind.oauth.challenge import Challenge, bearer_challenge
from mcpbind.oauth.tokens import OAuthError, TokenResponse

__all__ = ["GrantAuth", "issuers_match"]


def issuers_match(found: str, expected: str) -> bool:
    """Whether the issuer discovery found is the one configured (a trailing slash aside)."""
    return found.rstrip("/") == expected.rstrip("/")


class GrantAuth(httpx.Auth):
    """Base of the flows that make a grant on their own whenever they need a token. Subclasses
    implement :meth:`request_grant`. ``scopes``: what to ask for when the server's challenge
    names none (else the resource metadata's ``scopes_supported``); ``issuer``: the
    authorization server these credentials belong to, when given no other is ever sent them;
    ``store``: where tokens are kept (by issuer and resource; default: in this object only);
    ``http_client``: the client for the OAuth requests (default: one per grant, closed after);
    ``max_step_ups``: how many times in a row a 403 ``insufficient_scope`` is answered with a new
    grant for one request, before the request fails with
    :class:`~mcpbind.client.auth.flow.AuthorizationFailed` (``insufficient_scope``). Every OAuth
    failure fails the request with ``AuthorizationFailed`` (an ``httpx.HTTPError``)."""

    requires_request_body = True  # a refused request is sent again

    def __init__(
        self,
        server_url: str,
        *,
        scopes: list[str] | None = None,
        issuer: str | None = None,
        store: TokenStore | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_step_ups: int = 1,
        expiry_margin: float = 30.0,
    ) -> None:
        self.server_url = server_url
        self.scopes = scopes
        self.issuer = issuer
        self.store = store
        self.http_client = http_client
        self.max_step_ups = max_step_ups
        self.expiry_margin = expiry_margin
        self._discovery: Discovery | None = None
        self._tokens: StoredTokens | None = None
        self._lock: anyio.Lock | None = None

    async def request_grant(
        self, http: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> TokenResponse:
        """Make the grant at the authorization server ``discovery`` found, asking for ``scope``
        (None: the ``scope`` parameter is left out)."""
        raise NotImplementedError

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError(f"{type(self).__name__} works with httpx.AsyncClient only")

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        try:
            tokens = await self._usable_tokens()
            if tokens is not None:
                request.headers["Authorization"] = f"Bearer {tokens.access_token}"
            response = yield request
            if response.status_code == 401:
                challenge = bearer_challenge(response.headers.get("WWW-Authenticate"))
                tokens = await self._grant(challenge, rejected=tokens, step_up=False)
                request.headers["Authorization"] = f"Bearer {tokens.access_token}"
                response = yield request
            step_ups = 0
            while response.status_code == 403:
                challenge = bearer_challenge(response.headers.get("WWW-Authenticate"))
                if challenge is None or challenge.error != "insufficient_scope":
                    return
                if step_ups >= self.max_step_ups:
                    raise OAuthError(
                        "insufficient_scope",
                        f"the server still wants scope {challenge.scope!r} after {step_ups} new grant(s)",
                        status=403,
                    )
                step_ups += 1
                tokens = await self._grant(challenge, rejected=tokens, step_up=True)
                request.headers["Authorization"] = f"Bearer {tokens.access_token}"
                response = yield request
        except AuthorizationFailed:
            raise
        except OAuthError as exc:  # the one request fails, not the connection it goes on
            raise AuthorizationFailed(exc.error, exc.description, status=exc.status) from exc

    def _get_lock(self) -> anyio.Lock:
        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock

    async def _stored(self) -> StoredTokens | None:
        if self.store is not None and self._discovery is not None:
            return await self.store.get_tokens(self._discovery.issuer, self._discovery.resource)
        return self._tokens

    async def _keep(self, tokens: StoredTokens) -> None:
        self._tokens = tokens
        if self.store is not None and self._discovery is not None:
            await self.store.set_tokens(self._discovery.issuer, self._discovery.resource, tokens)

    async def _usable_tokens(self) -> StoredTokens | None:
        """The tokens to send: those held, made anew first when they are about to expire (once
        the authorization server is known); None before the first grant."""
        async with self._get_lock():
            tokens = await self._stored()
            if tokens is None or not tokens.expired(margin=self.expiry_margin):
                return tokens
            if self._discovery is None:
                return None
            return await self._request(self._discovery, split_scopes(tokens.scope), None)

    async def _grant(
        self, challenge: Challenge | None, *, rejected: StoredTokens | None, step_up: bool
    ) -> StoredTokens:
        """Tokens to retry with after the server refused ``rejected``: those another request
        obtained meanwhile, else a new grant (after discovery, when this is no step-up)."""
        async with self._get_lock():
            held = await self._stored()
            if self._fresh(held, rejected):
                return held
            if self._discovery is None or not step_up:
                await self._discover(challenge)
                held = await self._stored()  # the store may hold tokens for this server
                if self._fresh(held, rejected):
                    return held
            assert self._discovery is not None
            previous = split_scopes(rejected.scope) if step_up and rejected is not None else []
            return await self._request(self._discovery, previous, challenge)

    def _fresh(self, held: StoredTokens | None, rejected: StoredTokens | None) -> TypeGuard[StoredTokens]:
        if held is None or held.expired(margin=self.expiry_margin):
            return False
        return rejected is None or held.access_token != rejected.access_token

    async def _discover(self, challenge: Challenge | None) -> None:
        async with self._http() as http:
            discovery = await discover(http, self.server_url, challenge)
            if self.issuer is not None and not issuers_match(discovery.issuer, self.issuer):
                discovery = await self._pinned(http, discovery)
        self._discovery = discovery

    async def _pinned(self, http: httpx.AsyncClient, found: Discovery) -> Discovery:
        """The configured issuer's discovery, when the resource metadata names it too (discovery
        took the first it names); else ``OAuthError``: the credentials are not for this server."""
        assert self.issuer is not None
        named = (found.prm.authorization_servers or []) if found.prm is not None else []
        issuer = next((server for server in named if issuers_match(server, self.issuer)), None)
        metadata = await fetch_authorization_server_metadata(http, issuer) if issuer is not None else None
        if issuer is None or metadata is None:
            raise OAuthError(
                "invalid_issuer",
                f"the server's authorization server is {found.issuer!r};"
                f" these credentials are for {self.issuer!r}",
            )
        return Discovery(found.resource, found.prm, issuer, metadata)

    async def _request(
        self, discovery: Discovery, previous: list[str], challenge: Challenge | None
    ) -> StoredTokens:
        scope = select_scopes(
            challenge_scope=challenge.scope if challenge is not None else None,
            configured=self.scopes,
            prm=discovery.prm,
            metadata=discovery.metadata,
            previous=previous,
            wants_refresh=False,
        )
        async with self._http() as http:
            response = await self.request_grant(http, discovery, scope)
        tokens = StoredTokens.from_response(response, requested_scope=scope)
        await self._keep(tokens)
        return tokens

    def _http(self) -> _Borrowed:
        return _Borrowed(self.http_client)


class _Borrowed:
    """The caller's HTTP client, left open, or one of this grant's own, closed after."""

    def __init__(self, client: httpx.AsyncClient | None) -> None:
        self._given = client
        self._own: httpx.AsyncClient | None = None

    async def __aenter__(self) -> httpx.AsyncClient:
        if self._given is not None:
            return self._given
        self._own = httpx.AsyncClient(timeout=30.0)
        return self._own

    async def __aexit__(self, *exc_info: object) -> None:
        if self._own is not None:
            await self._own.aclose()
