"""What every part of the Streamable HTTP client transport stands on: its settings and state
(the session id and protocol version learnt from the server), building and sending one HTTP
request to the endpoint, the queue that ``receive()`` reads, and the background tasks that
outlive a ``send()``.

:class:`TransportCore` is the base of :class:`~mcpbind.transports.http.client.streamable.StreamableHTTPTransport`;
its SSE streams (:mod:`.streams`) and session renewal (:mod:`.renewal`) build on it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import anyio.abc
import httpx
from anyio.streams.memory import MemoryObjectSendStream

from mcpbind.protocol.errors import CONNECTION_CLOSED, INTERNAL_ERROR, REQUEST_TIMEOUT
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.peek import Peeked
from mcpbind.protocol.wire import Codec
from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE, MessageTooLarge
from mcpbind.transports.http.client.auth_time import request_time_limit
from mcpbind.transports.http.client.errors import Failure
from mcpbind.transports.http.client.headers import ParamHeaders
from mcpbind.transports.http.client.lanes import CONTROL_CONNECTIONS, DEFAULT_MAX_REQUESTS_IN_FLIGHT
from mcpbind.transports.http.client.messages import is_response_to, negotiated_version, peek_message
from mcpbind.transports.http.client.received import QueuedReceive, Received

__all__ = ["EVENT_STREAM", "JSON", "SESSION_HEADER", "VERSION_HEADER", "TransportCore"]

log = logging.getLogger("mcpbind.http.client")

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
JSON = "application/json"
EVENT_STREAM = "text/event-stream"

# Messages waiting for receive(); the background streams wait while this many are queued.
_QUEUE_SIZE = 1024


def _valid_session_id(value: str) -> bool:
    return bool(value) and all(0x21 <= ord(c) <= 0x7E for c in value)


class TransportCore(QueuedReceive):
    """The state of a Streamable HTTP client transport and the HTTP exchanges all its parts
    make; see :class:`~mcpbind.transports.http.client.streamable.StreamableHTTPTransport`."""

    def __init__(
        self,
        url: str,
        http_client: httpx.AsyncClient,
        task_group: anyio.abc.TaskGroup,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        timeout: float = 30.0,
        sse_read_timeout: float = 300.0,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_reconnects: int = 5,
        reconnect_delay: float = 1.0,
        terminate_on_close: bool = True,
        max_requests_in_flight: int = DEFAULT_MAX_REQUESTS_IN_FLIGHT,
    ) -> None:
        if max_message_size < 1:
            raise ValueError("max_message_size must be at least 1")
        if max_requests_in_flight < 1:
            raise ValueError("max_requests_in_flight must be at least 1")
        if max_reconnects < 0:
            raise ValueError("max_reconnects must not be negative")
        self.url = url
        self.max_message_size = max_message_size
        self.max_reconnects = max_reconnects
        self.reconnect_delay = reconnect_delay
        self.terminate_on_close = terminate_on_close
        self.max_requests_in_flight = max_requests_in_flight
        # The two lanes (see .lanes): requests, and everything else.
        self._requests = anyio.Semaphore(max_requests_in_flight)
        self._control = anyio.Semaphore(CONTROL_CONNECTIONS)
        # The tasks reading the streams of requests, by request id: sending
        # notifications/cancelled for one stops its task.
        self._request_streams: dict[RequestId, anyio.CancelScope] = {}
        self._client = http_client
        self._tasks = task_group
        self._headers = dict(headers or {})
        self._auth = auth
        self._timeout = timeout
        self._request_timeout = httpx.Timeout(timeout)
        self._stream_timeout = httpx.Timeout(timeout, read=sse_read_timeout)
        self._incoming_send: MemoryObjectSendStream[bytes | MessageTooLarge]
        self._incoming_send, self._received = anyio.create_memory_object_stream[Received](_QUEUE_SIZE)
        self._closed = False
        self._scopes: set[anyio.CancelScope] = set()
        self._get_stream: anyio.CancelScope | None = None
        self._renewing = anyio.Lock()
        # The client's initialize request, sent again to start a new session after a 404.
        self._initialize_message: bytes | None = None
        self._initialize_id: RequestId | None = None
        self._initialized_message: bytes | None = None
        self._renewals = 0
        self.session_id: str | None = None
        """The ``Mcp-Session-Id`` the server assigned (``None``: it uses no sessions)."""
        self.protocol_version: str | None = None
        """The negotiated protocol version, sent as ``MCP-Protocol-Version`` once known."""
        self.initialize_status: int | None = None
        self.tool_param_headers: dict[str, ParamHeaders] = {}
        """Stateless versions: the ``Mcp-Param-*`` headers of each tool's calls (its
        ``x-mcp-header`` arguments), kept up to date by the client from ``tools/list``."""
        # Stateless requests in flight: their streams are not resumed, and cancelling one
        # closes its stream instead of sending notifications/cancelled.
        self._stateless_requests: set[RequestId] = set()

    # -- HTTP requests ----------------------------------------------------------------------

    def _request_headers(self, accept: str, *, initialize: bool = False) -> dict[str, str]:
        headers = dict(self._headers)
        headers["accept"] = accept
        if not initialize:
            if self.session_id is not None:
                headers[SESSION_HEADER] = self.session_id
            if self.protocol_version is not None:
                headers[VERSION_HEADER] = self.protocol_version
        return headers

    async def _open(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``; the response with its body still unread (close it)."""
        what = f"{request.method} {request.url}"
        limit = request_time_limit(self._timeout, self._auth)
        try:
            with anyio.fail_after(limit):
                return await self._client.send(
                    request,
                    stream=True,
                    auth=self._auth if self._auth is not None else httpx.USE_CLIENT_DEFAULT,
                )
        except TimeoutError:
            raise Failure(REQUEST_TIMEOUT, f"{what}: no response within {limit} s") from None
        except httpx.TimeoutException as exc:
            raise Failure(REQUEST_TIMEOUT, f"{what} timed out: {exc!r}") from None
        except httpx.HTTPError as exc:
            raise Failure(CONNECTION_CLOSED, f"{what} failed: {exc!r}") from None

    def _learn_session(self, response: httpx.Response) -> None:
        value = response.headers.get(SESSION_HEADER)
        if value is None:
            self.session_id = None
            return
        if not _valid_session_id(value):
            raise Failure(
                INTERNAL_ERROR, f"The server sent an invalid {SESSION_HEADER} header: {value[:100]!r}"
            )
        self.session_id = value

    def _learn_version(self, message: bytes) -> None:
        version = negotiated_version(message)
        if version is not None:
            self.protocol_version = version

    # -- what receive() gets ----------------------------------------------------------------

    async def _deliver(self, message: bytes, envelope: Peeked | None = None) -> None:
        """Queue one message for ``receive()``, noting the negotiated version on the way."""
        if self._initialize_id is not None and self.protocol_version is None:
            envelope = envelope or peek_message(message)
            if is_response_to(envelope, self._initialize_id):
                self._learn_version(message)
        try:
            await self._incoming_send.send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def _fail_request(self, ident: RequestId, failure: Failure) -> None:
        log.debug("request %r failed: %s", ident, failure.message)
        error = Codec.encode_error(ident, failure.code, failure.message, failure.data())
        try:
            await self._incoming_send.send(error)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    # -- background tasks -------------------------------------------------------------------

    async def _background(
        self,
        run: Callable[..., Awaitable[None]],
        *args: Any,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Run ``run(*args)`` until it ends or the transport closes; never raises."""
        scope = anyio.CancelScope()
        self._scopes.add(scope)
        if self._closed:
            scope.cancel()
        try:
            with scope:
                task_status.started()
                await run(*args)
        except Exception:
            log.exception("a background HTTP stream failed")
        finally:
            self._scopes.discard(scope)
