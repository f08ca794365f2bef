"""The ASGI middleware that makes an MCP HTTP app a protected resource (:class:`ProtectedApp`):
it serves the Protected Resource Metadata, lets through only requests with a valid bearer token
(401 otherwise; 403 when the token lacks the scopes every request needs), hands the verified
token to the handlers (``ctx.access_token``), binds each session to the principal of the token
that opened it, and has the app check each request's own scopes (:mod:`.scope_check`)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Final

from mcpbind.oauth.access_token import AccessToken
from mcpbind.runtime.access import current_access_token
from mcpbind.server.auth.bearer import MalformedRequest, bearer_token, challenge_header, send_refusal
from mcpbind.server.auth.errors import InvalidToken, VerifierUnavailable
from mcpbind.server.auth.metadata import metadata_document
from mcpbind.server.auth.scope_check import ScopeCheck
from mcpbind.server.auth.settings import ResourceServerAuth
from mcpbind.transports.http.errors import SESSION_NOT_FOUND, HttpError, send_error
from mcpbind.transports.http.server import Message, Receive, Scope, Send, StreamableHTTPApp

__all__ = ["ProtectedApp"]

log = logging.getLogger("mcpbind.auth")

ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
_METADATA_HEADERS: Final = [
    (b"content-type", b"application/json"),
    (b"access-control-allow-origin", b"*"),
    (b"cache-control", b"public, max-age=3600"),
]


class ProtectedApp:
    """``app`` (a :class:`~mcpbind.transports.http.server.StreamableHTTPApp`, or any ASGI
    app, which then gets the token checks only) protected as ``auth`` says.

    ``GET`` of the metadata paths (``auth.metadata_paths``) answers the metadata document to
    anyone; CORS preflights (``OPTIONS``) go to the app unchecked; every other request needs
    ``Authorization: Bearer <token>``:

    * none: 401 with ``WWW-Authenticate: Bearer resource_metadata="...", scope="..."``;
    * a token that does not verify: 401 with ``error="invalid_token"`` too;
    * a token in the query string, several ``Authorization`` headers: 400 ``invalid_request``;
    * a token without ``auth.required_scopes``: 403 ``error="insufficient_scope"``;
    * the authorization server unreachable (keys or introspection): 503 with ``Retry-After``;
    * a token of another principal than the one that opened the session named by
      ``Mcp-Session-Id``: 404, as for an unknown session.
    """

    def __init__(self, app: ASGIApp, auth: ResourceServerAuth) -> None:
        self.app = app
        self.auth = auth
        self.verifier = auth.verifier
        self._metadata_paths = frozenset(auth.metadata_paths)
        self._metadata_url = auth.metadata_url
        self._streamable = app if isinstance(app, StreamableHTTPApp) else None
        server: Any = self._streamable.server if self._streamable is not None else None
        self._server = server if hasattr(server, "required_scopes") else None
        if self._streamable is not None:
            self._streamable.authorize = ScopeCheck(
                self._server, auth.method_scopes, auth.required_scopes, self._metadata_url
            )

    @asynccontextmanager
    async def run(self) -> AsyncIterator[ProtectedApp]:
        """Run the wrapped app (for hosts without ASGI lifespan); on exit the verifier's own
        HTTP client is closed."""
        app: Any = self.app
        try:
            async with app.run():
                yield self
        finally:
            await self._close_verifier()

    async def _close_verifier(self) -> None:
        close = getattr(self.verifier, "aclose", None)
        if close is not None:
            await close()

    def _closing_at_shutdown(self, send: Send) -> Send:
        """``send`` of an ASGI lifespan, closing the verifier's HTTP client before shutdown
        completes."""

        async def send_closing(message: Message) -> None:
            if message["type"] == "lifespan.shutdown.complete":
                await self._close_verifier()
            await send(message)

        return send_closing

    def metadata(self) -> bytes:
        """The Protected Resource Metadata document, as served now."""
        required = self._server.required_scopes.every() if self._server is not None else ()
        extra = set(required).union(*self.auth.method_scopes.values())
        return metadata_document(self.auth, extra)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(
                scope, receive, self._closing_at_shutdown(send) if scope["type"] == "lifespan" else send
            )
            return
        path: str = scope["path"]
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        method: str = scope["method"]
        if path in self._metadata_paths:
            await self._serve_metadata(method, send)
            return
        if method == "OPTIONS":
            await self.app(scope, receive, send)
            return
        refuse = self._with_cors(scope, send)
        access = await self._authenticate(scope, refuse)
        if access is None:
            return
        if self._streamable is not None:
            session_id = _session_id(scope)
            if session_id is not None:
                if not await self._session_allowed(session_id, access, refuse):
                    return
            elif method == "POST":  # (an initialize, if anything)
                send = self._binding(send, access)
        reset = current_access_token.set(access)
        try:
            await self.app(scope, receive, send)
        finally:
            current_access_token.reset(reset)

    async def _serve_metadata(self, method: str, send: Send) -> None:
        if method not in ("GET", "HEAD"):
            headers = [(b"allow", b"GET, HEAD"), (b"content-length", b"0")]
            await send({"type": "http.response.start", "status": 405, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        body = self.metadata()
        headers = [*_METADATA_HEADERS, (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body if method == "GET" else b""})

    async def _authenticate(self, scope: Scope, send: Send) -> AccessToken | None:
        """The request's verified token, or ``None`` once a refusal was sent."""
        metadata_url = self._metadata_url
        required = self.auth.required_scopes
        try:
            token = bearer_token(scope["headers"], scope.get("query_string", b""))
        except MalformedRequest:
            header = challenge_header(metadata_url, error="invalid_request", scopes=required)
            await send_refusal(send, 400, "invalid_request", [header])
            return None
        if token is None:
            await send_refusal(send, 401, None, [challenge_header(metadata_url, scopes=required)])
            return None
        try:
            access = await self.verifier.verify(token)
        except InvalidToken as refused:
            log.debug("access token refused: %s", refused)  # (the reason only, never the token)
            header = challenge_header(metadata_url, error="invalid_token", scopes=required)
            await send_refusal(send, 401, "invalid_token", [header])
            return None
        except VerifierUnavailable as unavailable:
            log.warning("access token not checked: %s", unavailable)
            await send_refusal(send, 503, "temporarily_unavailable", [(b"retry-after", b"5")])
            return None
        if not access.scopes.issuperset(required):
            header = challenge_header(
                metadata_url, error="insufficient_scope", scopes=required | access.scopes
            )
            await send_refusal(send, 403, "insufficient_scope", [header])
            return None
        return access

    def _with_cors(self, scope: Scope, send: Send) -> Send:
        """``send``, adding the app's CORS headers to a refusal (so that a web page reads its
        ``WWW-Authenticate``) when the app speaks CORS with the request's origin."""
        security = self._streamable.security if self._streamable is not None else None
        if security is None or security.cors_origins is None:
            return send
        origin = next((value for name, value in scope["headers"] if name == b"origin"), None)
        cors = security.cors_headers(origin)
        if not cors:
            return send

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *cors]}
            await send(message)

        return send_with_cors

    async def _session_allowed(self, session_id: bytes, access: AccessToken, send: Send) -> bool:
        """Whether the session the request names is the token principal's; a 404 (as for an
        unknown session) was sent otherwise."""
        assert self._streamable is not None
        state = self._streamable.sessions.get(session_id.decode("latin-1"))
        if state is None or state.owner == access.principal:
            return True  # (an unknown session: the app answers 404 itself)
        log.warning("a request for a session opened with another principal's token was refused")
        await send_error(send, HttpError(404, SESSION_NOT_FOUND, "Session not found"))
        return False

    def _binding(self, send: Send, access: AccessToken) -> Send:
        """``send``, which binds the session an ``initialize`` answer opens to the token's
        principal before the client learns its id."""
        assert self._streamable is not None
        sessions = self._streamable.sessions

        async def bind(message: Message) -> None:
            if message["type"] == "http.response.start":
                for name, value in message.get("headers", ()):
                    if name == b"mcp-session-id":
                        state = sessions.get(value.decode("latin-1"))
                        if state is not None and state.owner is None:
                            state.owner = access.principal
                        break
            await send(message)

        return bind


def _session_id(scope: Scope) -> bytes | None:
    for name, value in scope["headers"]:
        if name == b"mcp-session-id":
            return value  # type: ignore[no-any-return]
    return None
