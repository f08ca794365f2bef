"""``OAuth``: an ``httpx.Auth`` that makes an MCP client authorize itself the way MCP's
authorization specification says. It sends the access token it holds with every request; on a
401 it discovers the authorization server (:mod:`~mcpbind.client.auth.discovery`), refreshes
the token or runs the authorization code flow with PKCE (:mod:`~mcpbind.client.auth.code_flow`)
and sends the request again; on a 403 ``insufficient_scope`` it re-authorizes with the scopes the
server asks for added to those it has (a step-up), a bounded number of times.

Only the MCP requests go through the flow; the OAuth requests (metadata, registration, tokens)
go through a plain ``httpx.AsyncClient`` (``http_client``, else one made for the occasion). One
lock serializes authorizations: concurrent requests refused together authorize once."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from contextlib import asynccontextmanager, contextmanager
from urllib.parse import urlsplit

import anyio
import httpx

from mcpbind.client.auth.authorizer import Authorizer
from mcpbind.client.auth.code_flow import authorization_code_grant, refresh_grant
from mcpbind.client.auth.discovery import Discovery, discover
from mcpbind.client.auth.registration import obtain_client
from mcpbind.client.auth.scopes import select_scopes, split_scopes
from mcpbind.client.auth.stores import MemoryTokenStore, StoredTokens, TokenStore
from mcpbind.oauth.challenge import Challenge, bearer_challenge
from mcpbind.oauth.registration import ClientInformation, ClientMetadata
from mcpbind.oauth.tokens import OAuthError

__all__ = ["AuthorizationFailed", "OAuth"]


class AuthorizationFailed(OAuthError, httpx.HTTPError):
    """The :class:`~mcpbind.oauth.tokens.OAuthError` an MCP request fails with when it could not
    be authorized. It is an ``httpx.HTTPError`` too, so an HTTP transport fails that request
    (the caller gets an error naming the OAuth failure) instead of the whole connection."""

    def __init__(self, error: str, description: str | None = None, *, status: int | None = None) -> None:
        OAuthError.__init__(self, error, description, status=status)


class OAuth(httpx.Auth):
    """Authorization for the MCP server at ``server_url`` (pass it as ``auth=`` to
    ``Client.connect_url`` or an HTTP transport).

    ``client_metadata``: what the client says of itself (``redirect_uris`` needed);
    ``authorize``: takes the user through the authorization URL; ``store``: where tokens and
    registrations are kept (in memory by default); ``client_metadata_url``: the HTTPS URL of the
    client's Client ID Metadata Document; ``client_information``: credentials registered
    beforehand with the authorization server ``client_information_issuer`` (default: the first
    one they are used with; they are never offered to another); ``scopes``: what to ask for when
    the server's challenge says nothing; ``max_step_ups``: how many times one request may
    re-authorize for more scopes before it fails with ``insufficient_scope``; ``http_client``:
    the client for the OAuth requests (not one whose own ``auth`` is this flow).

    ::

        auth = OAuth(
            "https://mcp.example.com/mcp",
            client_metadata=ClientMetadata(client_name="my-app", redirect_uris=["http://127.0.0.1:8765/callback"]),
            authorize=send_the_user_there,  # async (authorization URL) -> URL redirected to
            store=FileTokenStore("~/.config/my-app/tokens.json"),
        )
        async with Client("my-app", "1.0").connect_url("https://mcp.example.com/mcp", auth=auth) as server:
            ...

    Failures come as :class:`AuthorizationFailed` (an ``OAuthError`` and an ``httpx.HTTPError``):
    the one request fails with a message naming the OAuth error. ``authorization_timeout``: how
    long the user may take to authorize; mcpbind's HTTP transports add it to the time limit of
    the request being authorized (:meth:`login` authorizes before connecting instead)."""

    requires_request_body = True  # a refused request is sent again

    def __init__(
        self,
        server_url: str,
        *,
        client_metadata: ClientMetadata,
        authorize: Authorizer,
        store: TokenStore | None = None,
        client_metadata_url: str | None = None,
        client_information: ClientInformation | None = None,
        client_information_issuer: str | None = None,
        scopes: list[str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_step_ups: int = 2,
        authorization_timeout: float = 300.0,
    ) -> None:
        if not client_metadata.redirect_uris:
            raise ValueError("client_metadata needs redirect_uris for the authorization code flow")
        if client_metadata_url is not None:
            parts = urlsplit(client_metadata_url)
            if parts.scheme != "https" or parts.path in ("", "/"):
                raise ValueError(
                    "client_metadata_url must be an https URL with a path (a Client ID Metadata Document)"
                )
        self.server_url = server_url
        self.client_metadata = client_metadata
        self.authorize = authorize
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.client_metadata_url = client_metadata_url
        self.client_information = client_information
        self.client_information_issuer = client_information_issuer
        self.scopes = scopes
        self.max_step_ups = max_step_ups
        self.authorization_timeout = authorization_timeout
        self._http_client = http_client
        self._lock = anyio.Lock()
        self._discovery: Discovery | None = None
        self._tokens: StoredTokens | None = None
        self._requested: list[str] = []
        # The authorization server the pre-registered credentials were first used with: they are
        # never offered to another one.
        self._pre_registered_issuer: str | None = None

    @property
    def tokens(self) -> StoredTokens | None:
        """The tokens in use (None before the first authorization)."""
        return self._tokens

    async def login(self) -> StoredTokens:
        """Authorize now, before any request: usable stored (or refreshed) tokens, else the
        authorization code flow. For interactive clients, so that the user's visit to the
        authorization server is not bounded by an HTTP request's timeout. Discovery here starts
        from the well-known URLs (there is no 401 yet to name the resource metadata)."""
        tokens = await self._usable_tokens()
        if tokens is not None and not tokens.expired():
            return tokens
        with _failing_the_request():
            tokens, _ = await self._reauthorize(tokens, None)
        return tokens

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("mcpbind's OAuth authorizes asynchronously: use it with httpx.AsyncClient")

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        with _failing_the_request():
            sent = await self._usable_tokens()
            _apply(request, sent)
            response = yield request
            # Tokens someone else obtained (another request, the store) get one try each; a
            # refresh or a new authorization ends the retries.
            granted = False
            tries = 0
            while response.status_code == 401 and not granted and tries < 3:
                tries += 1
                challenge = bearer_challenge(response.headers.get("WWW-Authenticate"))
                sent, granted = await self._reauthorize(sent, challenge)
                _apply(request, sent)
                response = yield request
            step_ups = 0
            while response.status_code == 403:
                challenge = bearer_challenge(response.headers.get("WWW-Authenticate"))
                if challenge is None or challenge.error != "insufficient_scope":
                    return
                if step_ups >= self.max_step_ups:
                    raise OAuthError(
                        "insufficient_scope",
                        f"the server still refuses the request for want of scope {challenge.scope!r} "
                        f"after {step_ups} step-up authorization(s); giving up",
                        status=403,
                    )
                step_ups += 1
                sent = await self._step_up(sent, challenge)
                _apply(request, sent)
                response = yield request

    @asynccontextmanager
    async def _http(self) -> AsyncIterator[httpx.AsyncClient]:
        if self._http_client is not None:
            yield self._http_client
            return
        async with httpx.AsyncClient(timeout=30.0) as http:
            yield http

    async def _usable_tokens(self) -> StoredTokens | None:
        """The tokens to send, refreshed first when they have expired and can be."""
        async with self._lock:
            tokens, discovery = self._tokens, self._discovery
            if tokens is None or discovery is None or not tokens.expired() or not tokens.refresh_token:
                return tokens
            async with self._http() as http:
                return await self._refresh_or_none(http, discovery, tokens)

    async def _discover(self, http: httpx.AsyncClient, challenge: Challenge | None) -> Discovery:
        """Discover the authorization server again (a server may have moved to another one) and
        load what the store has for it."""
        discovery = await discover(http, self.server_url, challenge)
        previous = self._discovery
        if previous is None or (previous.issuer, previous.resource) != (discovery.issuer, discovery.resource):
            self._tokens = await self.store.get_tokens(discovery.issuer, discovery.resource)
            self._requested = split_scopes(self._tokens.scope) if self._tokens is not None else []
        self._discovery = discovery
        return discovery

    async def _reauthorize(
        self, sent: StoredTokens | None, challenge: Challenge | None
    ) -> tuple[StoredTokens, bool]:
        """After a 401: the tokens another request got meanwhile, else stored ones not yet tried,
        else refreshed ones, else a new authorization; and whether they were just granted."""
        async with self._lock:
            if _differs(self._tokens, sent):
                assert self._tokens is not None
                return self._tokens, False
            async with self._http() as http:
                discovery = await self._discover(http, challenge)
                current = self._tokens
                if current is not None and _differs(current, sent) and not current.expired():
                    return current, False
                if current is not None and current.refresh_token:
                    refreshed = await self._refresh_or_none(http, discovery, current)
                    if refreshed is not None:
                        return refreshed, True
                scope = select_scopes(
                    challenge_scope=challenge.scope if challenge is not None else None,
                    configured=self.scopes,
                    prm=discovery.prm,
                    metadata=discovery.metadata,
                    previous=self._requested,
                    wants_refresh=self._wants_refresh(),
                )
                return await self._authorize(http, discovery, scope), True

    async def _step_up(self, sent: StoredTokens | None, challenge: Challenge) -> StoredTokens:
        """After a 403 ``insufficient_scope``: authorize again for the scopes held so far and
        those the challenge names (unless another request already did)."""
        async with self._lock:
            wanted = split_scopes(challenge.scope)
            current = self._tokens
            if (
                current is not None
                and _differs(current, sent)
                and set(wanted) <= set(split_scopes(current.scope))
            ):
                return current
            async with self._http() as http:
                discovery = await self._discover(http, challenge)
                held = split_scopes(current.scope) if current is not None else []
                scope = select_scopes(
                    challenge_scope=challenge.scope,
                    configured=self.scopes,
                    prm=discovery.prm,
                    metadata=discovery.metadata,
                    previous=[*self._requested, *held],
                    wants_refresh=self._wants_refresh(),
                )
                return await self._authorize(http, discovery, scope)

    def _wants_refresh(self) -> bool:
        grants = self.client_metadata.grant_types
        return grants is None or "refresh_token" in grants

    async def _client(
        self, http: httpx.AsyncClient, discovery: Discovery, scope: str | None = None
    ) -> ClientInformation:
        information = self.client_information
        if information is not None:
            bound = self.client_information_issuer or self._pre_registered_issuer
            if bound is None:
                self._pre_registered_issuer = discovery.issuer
            elif bound != discovery.issuer:
                raise OAuthError(
                    "authorization_server_changed",
                    f"the resource now names the authorization server {discovery.issuer}, and the "
                    f"pre-registered client credentials are for {bound}: they are not offered to another one",
                )
        assert self.client_metadata.redirect_uris
        return await obtain_client(
            http,
            discovery.issuer,
            discovery.metadata,
            self.store,
            client_metadata=self.client_metadata,
            client_metadata_url=self.client_metadata_url,
            client_information=information,
            redirect_uri=self.client_metadata.redirect_uris[0],
            scope=scope,
        )

    async def _authorize(
        self, http: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> StoredTokens:
        assert self.client_metadata.redirect_uris
        for attempt in (1, 2):
            client = await self._client(http, discovery, scope)
            registered = await self.store.get_client(discovery.issuer) == client  # dynamically, by us
            try:
                tokens = await authorization_code_grant(
                    http,
                    discovery,
                    client,
                    self.authorize,
                    redirect_uri=self.client_metadata.redirect_uris[0],
                    scope=scope,
                )
            except OAuthError as exc:
                if not registered or exc.error not in ("invalid_client", "invalid_scope"):
                    raise
                # The server no longer knows the registration, or it does not cover the scopes
                # asked for now (a step-up): register again, once.
                await self.store.forget_client(discovery.issuer)
                if attempt == 2:
                    raise
                continue
            await self.store.set_tokens(discovery.issuer, discovery.resource, tokens)
            self._tokens = tokens
            self._requested = split_scopes(scope)
            return tokens
        raise AssertionError("unreachable")

    async def _refresh_or_none(
        self, http: httpx.AsyncClient, discovery: Discovery, tokens: StoredTokens
    ) -> StoredTokens | None:
        """Refreshed tokens (stored), or None when the server refuses the refresh token (it is
        then forgotten: a new authorization follows)."""
        client = await self._client(http, discovery)
        try:
            refreshed = await refresh_grant(http, discovery, client, tokens)
        except OAuthError:
            await self.store.forget_tokens(discovery.issuer, discovery.resource)
            self._tokens = None
            return None
        await self.store.set_tokens(discovery.issuer, discovery.resource, refreshed)
        self._tokens = refreshed
        return refreshed


@contextmanager
def _failing_the_request() -> Iterator[None]:
    """OAuth errors leave the flow as :class:`AuthorizationFailed`."""
    try:
        yield
    except AuthorizationFailed:
        raise
    except OAuthError as exc:
        raise AuthorizationFailed(exc.error, exc.description, status=exc.status) from exc


def _differs(current: StoredTokens | None, sent: StoredTokens | None) -> bool:
    """Whether ``current`` holds another access token than the one a request was sent with."""
    if current is None:
        return False
    return sent is None or current.access_token != sent.access_token


def _apply(request: httpx.Request, tokens: StoredTokens | None) -> None:
    if tokens is not None:
        request.headers["Authorization"] = f"Bearer {tokens.access_token}"
