"""The user's side of the authorization code flow on their own machine: a loopback redirect
(RFC 8252 section 7.3). :class:`LoopbackAuthorizer` listens on ``127.0.0.1`` before the flow
starts, so its ``redirect_uri`` can be registered; given an authorization URL it opens the browser
(or prints the URL), serves the one redirect the authorization server sends the browser to, and
returns that redirect's full URL to the flow."""

from __future__ import annotations

import html
import sys
import webbrowser
from typing import TYPE_CHECKING, TextIO
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc
import h11

from mcpbind.oauth.tokens import OAuthError

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

    from typing_extensions import Self

    _Deliver = Callable[[str], None]

__all__ = ["LoopbackAuthorizer"]

_MAX_REQUEST = 16 * 1024
_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title></head>
<body style="font-family: sans-serif; margin: 3em"><h1>{title}</h1><p>{text}</p></body></html>
"""


def _page(
    status: int, title: str, text: str, extra: list[tuple[bytes, bytes]] | None = None
) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
    body = _PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        # The page's URL carries the authorization code: no Referer may take it elsewhere.
        (b"referrer-policy", b"no-referrer"),
        (b"connection", b"close"),
        *(extra or []),
    ]
    return status, body, headers


class LoopbackAuthorizer:
    """An ``Authorizer`` for a client on the user's machine. Use it as an async context manager:
    entering binds ``host`` (127.0.0.1) on ``port`` (0: a free one), after which
    :attr:`redirect_uri` (``http://127.0.0.1:PORT/callback``) is known for the client's
    registration; leaving closes the listener. Each call serves one redirect and may be repeated
    (a step-up authorization calls it again).

    ``open_browser``: open the URL with :mod:`webbrowser`; without it, or when no browser can be
    started, the user opens it: the URL is always written to ``output`` (default: standard
    error). ``timeout``: seconds to wait for the redirect, after which the call fails with
    :class:`~mcpbind.oauth.tokens.OAuthError` ``authorization_timeout``. A request for another
    path gets 404, one on the callback path without ``code`` or ``error``, or without the
    ``state`` of the authorization URL, gets 400, and the wait goes on."""

    def __init__(
        self,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        path: str = "/callback",
        open_browser: bool = True,
        output: TextIO | None = None,
        timeout: float = 300.0,
        connection_timeout: float = 10.0,
    ) -> None:
        if not path.startswith("/"):
            raise ValueError("the callback path must start with '/'")
        self.host = host
        self.port = port
        self.path = path
        self.open_browser = open_browser
        self.output = output
        self.timeout = timeout
        self.connection_timeout = connection_timeout
        self._listener: anyio.abc.SocketListener | None = None
        self._redirect_uri: str | None = None

    @property
    def redirect_uri(self) -> str:
        """Where the authorization server sends the browser back to; known once entered."""
        if self._redirect_uri is None:
            raise RuntimeError("LoopbackAuthorizer: enter it (async with) before asking its redirect_uri")
        return self._redirect_uri

    async def __aenter__(self) -> Self:
        listeners = await anyio.create_tcp_listener(local_host=self.host, local_port=self.port)
        listener = listeners.listeners[0]
        assert isinstance(listener, anyio.abc.SocketListener)  # one host: one TCP listener
        self._listener = listener
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        host = f"[{self.host}]" if ":" in self.host else self.host
        self._redirect_uri = f"http://{host}:{self.port}{self.path}"
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            await listener.aclose()

    async def __call__(self, authorization_url: str) -> str:
        """Have the user visit ``authorization_url``; the URL the browser was redirected to."""
        listener = self._listener
        if listener is None:
            raise RuntimeError("LoopbackAuthorizer: enter it (async with) before the flow uses it")
        redirected: list[str] = []
        state = parse_qs(urlsplit(authorization_url).query).get("state", [None])[0]
        with anyio.move_on_after(self.timeout):
            async with anyio.create_task_group() as group:

                def deliver(url: str) -> None:
                    if not redirected:
                        redirected.append(url)
                    group.cancel_scope.cancel()

                self._announce(authorization_url)
                if self.open_browser:
                    group.start_soon(self._open_browser, authorization_url)
                while True:
                    # Browsers open spare connections that may never send a request: each one is
                    # served in its own task, so that an idle one holds up nothing.
                    stream = await listener.accept()
                    group.start_soon(self._serve, stream, deliver, state)
        if not redirected:
            raise OAuthError(
                "authorization_timeout",
                f"no authorization redirect reached {self.redirect_uri} within {self.timeout:g} s",
            )
        return redirected[0]

    def _announce(self, url: str) -> None:
        output = self.output if self.output is not None else sys.stderr
        if self.open_browser:
            print(f"Opening a browser to authorize; if none opens, visit:\n  {url}", file=output)
        else:
            print(f"Open this URL in a browser to authorize:\n  {url}", file=output)
        output.flush()

    @staticmethod
    async def _open_browser(url: str) -> None:
        try:
            await anyio.to_thread.run_sync(webbrowser.open, url, abandon_on_cancel=True)
        except webbrowser.Error:
            pass  # the URL was printed: the user opens it

    async def _serve(self, stream: anyio.abc.SocketStream, deliver: _Deliver, state: str | None) -> None:
        async with stream:
            with anyio.move_on_after(self.connection_timeout):
                connection = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_REQUEST)
                try:
                    request = await _read_request(stream, connection)
                except h11.RemoteProtocolError:
                    await _respond(stream, connection, _page(400, "Bad request", "This is no HTTP request."))
                    return
                if request is None:
                    return
                redirected = self._answer(request, state)
                await _respond(stream, connection, redirected[1])
                if redirected[0] is not None:
                    deliver(redirected[0])

    def _answer(
        self, request: h11.Request, state: str | None
    ) -> tuple[str | None, tuple[int, bytes, list[tuple[bytes, bytes]]]]:
        """The redirect URL (None when this request is not the redirect) and the response. With
        a ``state`` in the authorization URL, only a redirect carrying it is taken: an answer to an
        earlier authorization (a reloaded page) or one another local program made up is not."""
        target = request.target.decode("ascii", "replace")
        parts = urlsplit(target)
        if request.method != b"GET":
            return None, _page(405, "Method not allowed", "Only GET is served here.", [(b"allow", b"GET")])
        if parts.path != self.path:
            return None, _page(404, "Not found", "This is the redirect endpoint of an authorization.")
        query = parse_qs(parts.query)
        if state is not None and query.get("state") != [state]:
            text = "This redirect belongs to no authorization in progress here."
            return None, _page(400, "Bad request", text)
        if "error" in query:
            reason = query["error"][0]
            text = f"The authorization server answered {reason}. You can close this window."
            page = _page(200, "Authorization failed", text)
        elif "code" in query:
            text = "You can close this window and return to the application."
            page = _page(200, "Authorization complete", text)
        else:
            text = "The redirect carries neither an authorization code nor an error."
            return None, _page(400, "Bad request", text)
        return self.redirect_uri + (f"?{parts.query}" if parts.query else ""), page


async def _read_request(stream: anyio.abc.SocketStream, connection: h11.Connection) -> h11.Request | None:
    """The request's head (its body, if any, is not needed); None when the peer sent none."""
    while True:
        event = connection.next_event()
        if isinstance(event, h11.Request):
            return event
        if event is h11.NEED_DATA:
            try:
                data = await stream.receive(4096)
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                data = b""
            connection.receive_data(data)
            continue
        return None  # ConnectionClosed, or anything else where a request should have been


async def _respond(
    stream: anyio.abc.SocketStream,
    connection: h11.Connection,
    page: tuple[int, bytes, list[tuple[bytes, bytes]]],
) -> None:
    status, body, headers = page
    try:
        data = connection.send(h11.Response(status_code=status, headers=headers))
        data = (data or b"") + (connection.send(h11.Data(data=body)) or b"")
        data += connection.send(h11.EndOfMessage()) or b""
    except h11.LocalProtocolError:  # the request was broken beyond answering in HTTP/1.1
        data = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    try:
        await stream.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass
