"""The protocol core: lifecycle, request ids, pending requests, cancellation and progress
bookkeeping, for one side of one connection. It does no I/O and knows nothing about tasks:
bytes go in through :meth:`Connection.receive` and come out as events and as bytes to send.

Handlers see one set of types whatever version was negotiated: those of the newest version
with an ``initialize`` handshake (:data:`CANONICAL_VERSION`), a superset of the older ones.
What goes out to a peer that negotiated an older version is converted down to it first
(:mod:`mcpbind.protocol.down_convert`).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import msgspec
from msgspec import UNSET

from mcpbind import types
from mcpbind.protocol.client_capabilities import missing_client_capability
from mcpbind.protocol.codecs import shared_codec
from mcpbind.protocol.delivery import FULL_DELIVERY, Delivery
from mcpbind.protocol.down_convert import down
from mcpbind.protocol.envelope import (
    MODERN_ONLY_METHODS,
    REMOVED_METHODS,
    Envelope,
    is_modern_meta,
    params_meta,
    read_envelope,
    with_progress_token,
)
from mcpbind.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    McpError,
    UnsupportedProtocolVersionError,
    error_from_response,
)
from mcpbind.protocol.events import (
    CancelRequested,
    ErrorReceived,
    Event,
    NotificationReceived,
    ProgressReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
    SessionReady,
    UnmatchedResponse,
)
from mcpbind.protocol.jsonrpc import ErrorResponse, RequestId, Response, WireError
from mcpbind.protocol.methods import NotificationSpec, RequestSpec
from mcpbind.protocol.send_rules import send_refusal
from mcpbind.protocol.stateless import (
    MRTR_METHODS,
    NOT_CACHEABLE,
    encode_result,
    info_meta,
    is_retry,
    read_retry,
)
from mcpbind.protocol.wire import Codec, TypedNotification, TypedRequest
from mcpbind.versions import (
    HANDLER_VERSION,
    HANDSHAKE_VERSIONS,
    KNOWN_VERSIONS,
    MODERN_VERSIONS,
    SUPPORTED_VERSIONS,
    schema_for,
)

__all__ = [
    "CANONICAL_VERSION",
    "FULL_DELIVERY",
    "SUPPORTED_VERSIONS",
    "CancelRequested",
    "Connection",
    "Delivery",
    "ErrorReceived",
    "Event",
    "NotificationReceived",
    "Phase",
    "ProgressReceived",
    "Reply",
    "RequestReceived",
    "ResponseReceived",
    "SessionReady",
    "UnmatchedResponse",
    "missing_client_capability",
    "negotiate_version",
]

Role = Literal["client", "server"]

# The handler-facing version, and the versions spoken (newest first), as mcpbind.versions says.
CANONICAL_VERSION: Final = HANDLER_VERSION

methods = types.methods


class Phase(enum.Enum):
    NEW = "new"  # nothing exchanged yet
    INITIALIZING = "initializing"  # initialize sent (client) or answered (server)
    READY = "ready"  # the initialized notification went out (client) or came in (server)


def negotiate_version(requested: str, supported: tuple[str, ...] = HANDSHAKE_VERSIONS) -> str:
    """The version a server answers ``initialize`` with: the one asked for when it has it, else
    its newest handshake version (a stateless version is never negotiated by handshake)."""
    handshake = tuple(v for v in supported if v not in MODERN_VERSIONS)
    if not handshake:
        raise UnsupportedProtocolVersionError(requested, supported)
    return requested if requested in handshake else handshake[0]


def _refused(ident: RequestId, code: int, message: str, data: Any = UNSET) -> list[Event]:
    """What a received request that is refused means: the error response to send."""
    return [Reply(Codec.encode_error(ident, code, message, data), ident)]


@dataclass(slots=True)
class _Peer:
    info: types.Implementation | None = None
    capabilities: Any = None
    instructions: str | None = None


@dataclass(slots=True)
class Connection:
    """One side of one MCP connection, as a state machine.

    ``info`` and ``capabilities`` describe this side (``Implementation`` and
    ``ServerCapabilities`` or ``ClientCapabilities``); a server may add ``instructions``.
    ``delivery``: what a server's transport can carry to the client; requests it cannot send
    are refused (see :class:`Delivery`).
    """

    role: Role
    info: types.Implementation
    capabilities: Any
    instructions: str | None = None
    versions: tuple[str, ...] = SUPPORTED_VERSIONS
    phase: Phase = Phase.NEW
    protocol_version: str | None = None
    delivery: Delivery = FULL_DELIVERY
    peer: _Peer = field(default_factory=_Peer)
    # Stateless versions: the ``ttlMs``/``cacheScope`` members a server adds to the results of
    # a method (``"ttlMs":60000,"cacheScope":"private"``, encoded, without braces).
    cache_hints: Mapping[str, bytes] = field(default_factory=dict)
    # A server side served a stateless request: from then on it serves no handshake (the era is
    # the connection's first request's, as other SDKs do on stdio).
    modern: bool = False
    # Request methods whose params are kept as received (``msgspec.Raw``): a proxy's.
    raw_params: frozenset[str] = frozenset()
    _next_id: int = 0
    _pending: dict[RequestId, RequestSpec[Any, Any, Any]] = field(default_factory=dict)
    _in_flight: dict[RequestId, Envelope | None] = field(default_factory=dict)
    _codec: Codec = field(init=False)
    _modern_versions: frozenset[str] = field(init=False)
    _info_meta: bytes = field(init=False)

    def __post_init__(self) -> None:
        self._codec = shared_codec(self.role, None, self.raw_params)
        for version in self.versions:
            # Fail at construction, not mid-session, on an unknown version; its types are
            # loaded only if it is negotiated (each version's modules cost memory and time).
            if version not in KNOWN_VERSIONS:
                raise LookupError(f"unknown MCP schema version {version!r}; known: {KNOWN_VERSIONS}")
        self._modern_versions = frozenset(v for v in self.versions if v in MODERN_VERSIONS)
        self._info_meta = info_meta(self.info)

    # -- receiving ------------------------------------------------------------------------

    def receive(self, data: bytes) -> list[Event]:
        """Everything one received message means. Never raises for bad input: a message that
        needs an error answer yields a :class:`Reply`, one that needs nothing yields nothing."""
        try:
            message = self._codec.decode_typed(data)
        except WireError as error:
            return self._reject(error)
        if isinstance(message, list):
            events: list[Event] = []
            for item in message:
                events += self._reject(item) if isinstance(item, WireError) else self._one(item, None)
            return events
        return self._one(message, data)

    def _reject(self, error: WireError) -> list[Event]:
        if error.response_id is not None:
            # A broken response to one of our requests: fail that request, answer nothing.
            if self._pending.pop(error.response_id, None) is None:
                return [UnmatchedResponse(error.response_id)]
            return [
                ErrorReceived(
                    error.response_id, McpError(INTERNAL_ERROR, f"Invalid response: {error.message}")
                )
            ]
        if error.id is None and error.code not in (-32700, INVALID_REQUEST):
            return []  # a notification: JSON-RPC never answers one
        return [Reply(Codec.encode_wire_error(error), error.id)]

    def _one(
        self, message: TypedRequest | TypedNotification | Response | ErrorResponse, data: bytes | None
    ) -> list[Event]:
        if isinstance(message, TypedRequest):
            if self.role == "server" and self.phase is Phase.NEW:
                meta = params_meta(message.params)
                if self.modern or message.method in MODERN_ONLY_METHODS or is_modern_meta(meta):
                    return self._modern_request(message, meta, data)
            return self._request(message)
        if isinstance(message, TypedNotification):
            return self._notification(message)
        if isinstance(message, Response):
            return self._response(message)
        return self._error_response(message)

    def _request(self, message: TypedRequest) -> list[Event]:
        method, ident = message.method, message.id
        if method == "ping":
            return [Reply(Codec.encode_result(ident, _EMPTY), ident)]
        if ident in self._in_flight:
            return _refused(ident, INVALID_REQUEST, f"Request id {ident!r} is already in use")
        if method == "initialize":
            return self._initialize(ident, message.params)
        if self.phase is Phase.NEW:
            return _refused(ident, INVALID_REQUEST, f"Received {method} before initialization")
        if method in MODERN_ONLY_METHODS:
            text = f"Method not found: {method} is not part of protocol version {self.protocol_version}"
            return _refused(ident, METHOD_NOT_FOUND, text)
        self._in_flight[ident] = None
        return [RequestReceived(ident, method, message.params)]

    def _modern_request(self, message: TypedRequest, meta: Any, data: bytes | None) -> list[Event]:
        """A request of the stateless protocol: served on its own, on what its ``_meta`` says."""
        method, ident = message.method, message.id
        if ident in self._in_flight:
            return _refused(ident, INVALID_REQUEST, f"Request id {ident!r} is already in use")
        if method == "initialize" and not is_modern_meta(meta):
            # This connection speaks the stateless protocol already: no handshake on it. The
            # error names the versions, which tells a client probing eras what it can speak.
            requested = getattr(message.params, "protocol_version", "")
            error: McpError = UnsupportedProtocolVersionError(
                requested,
                self.versions,
                "This connection serves the stateless protocol; initialize is not accepted on it",
            )
            return _refused(ident, error.code, error.message, error.data)
        if method in REMOVED_METHODS and method != "initialize":
            text = f"Method not found: {method} is not part of the stateless protocol"
            return _refused(ident, METHOD_NOT_FOUND, text)
        try:
            envelope = read_envelope(meta, self._modern_versions, self.versions)
        except McpError as exc:
            return _refused(ident, exc.code, exc.message, exc.data)
        if method == "initialize":
            text = f"Method not found: initialize is not part of protocol version {envelope.version}"
            return _refused(ident, METHOD_NOT_FOUND, text)
        self.modern = True
        if (
            method in MRTR_METHODS
            and data is not None
            and (b'"requestState"' in data or b'"inputResponses"' in data)
        ):
            try:
                responses, state = read_retry(data)
            except msgspec.ValidationError as exc:
                return _refused(ident, INVALID_PARAMS, f"Invalid params: {exc}")
            envelope = dataclasses.replace(envelope, input_responses=responses, request_state=state)
        self._in_flight[ident] = envelope
        return [RequestReceived(ident, method, message.params, envelope)]

    def _initialize(self, ident: RequestId, params: types.InitializeRequestParams) -> list[Event]:
        # (Only a server gets here: a client's codec has no initialize to decode, and answers
        # it "method not found".)
        if self.phase is not Phase.NEW:
            return _refused(ident, INVALID_REQUEST, "The session is already initialized")
        try:
            version = negotiate_version(params.protocol_version, self.versions)
        except McpError as exc:
            return _refused(ident, exc.code, exc.message, exc.data)
        self._speak(version)
        self.peer.info = params.client_info
        self.peer.capabilities = params.capabilities
        self.phase = Phase.INITIALIZING
        result = types.InitializeResult(
            protocol_version=version,
            capabilities=self.capabilities,
            server_info=self.info,
            instructions=self.instructions if self.instructions is not None else UNSET,
        )
        return [Reply(self._encode_result(ident, methods.INITIALIZE, result), ident)]

    def _notification(self, message: TypedNotification) -> list[Event]:
        method = message.method
        if method == methods.NOTIFICATIONS_CANCELLED.method:
            params: types.CancelledNotificationParams = message.params
            if params.request_id in self._in_flight:
                reason = params.reason if isinstance(params.reason, str) else None
                return [CancelRequested(params.request_id, reason)]
            return []  # unknown or finished: nothing to do, as the spec says
        if method == methods.NOTIFICATIONS_PROGRESS.method:
            progress: types.ProgressNotificationParams = message.params
            return [ProgressReceived(progress.progress_token, progress)]
        if method == methods.NOTIFICATIONS_INITIALIZED.method:
            if self.role == "server" and self.phase is Phase.INITIALIZING:
                self.phase = Phase.READY
                return [SessionReady()]
            return []
        return [NotificationReceived(method, message.params)]

    def _response(self, message: Response) -> list[Event]:
        pending = self._pending.pop(message.id, None)
        if pending is None:
            return [UnmatchedResponse(message.id)]
        try:
            result = self._codec.result(pending, message)
        except WireError as error:
            return [ErrorReceived(message.id, McpError(INTERNAL_ERROR, error.message))]
        return [ResponseReceived(message.id, result)]

    def _error_response(self, message: ErrorResponse) -> list[Event]:
        ident = message.id
        if ident is None or isinstance(ident, msgspec.UnsetType):
            return [UnmatchedResponse(None)]
        pending = self._pending.pop(ident, None)
        if pending is None:
            return [UnmatchedResponse(ident)]
        if pending.method == "initialize" and self.role == "client":
            self.phase = Phase.NEW  # refused: a client negotiating the era may probe again
        error = message.error
        return [ErrorReceived(ident, error_from_response(error.code, error.message, error.data))]

    # -- answering ------------------------------------------------------------------------

    def spec_of(self, method: str) -> RequestSpec[Any, Any, Any]:
        """The spec of a request method this side receives."""
        return self._codec.incoming_requests[method]

    def envelope_of(self, ident: RequestId) -> Envelope | None:
        """The envelope of a received stateless request still in flight; ``None`` for a request
        of a session (or one already answered)."""
        return self._in_flight.get(ident)

    def respond(self, ident: RequestId, spec: RequestSpec[Any, Any, Any], result: Any) -> bytes | None:
        """The response to a received request; ``None`` if it was cancelled meanwhile."""
        if ident not in self._in_flight:
            return None
        # Encoded first: a result that cannot be (nested too deeply, say) leaves the request
        # in flight, so that respond_error can still answer it.
        if self._in_flight[ident] is None:
            data = self._encode_result(ident, spec, result)
        else:
            data = self._modern_result(ident, spec.method, result)
        del self._in_flight[ident]
        return data

    def respond_error(self, ident: RequestId, error: McpError) -> bytes | None:
        if ident not in self._in_flight:
            return None
        code = error.code
        if code == RESOURCE_NOT_FOUND and self._in_flight[ident] is not None:
            code = INVALID_PARAMS  # 2026-07-28 moved "resource not found" to invalid params
        try:
            data = Codec.encode_error(ident, code, error.message, error.data)
        except (msgspec.EncodeError, TypeError, ValueError, RecursionError):
            # Its data cannot be sent (nested too deeply, say, echoing the request): the error
            # still is, without it.
            message = error.message.encode("utf-8", "replace").decode("utf-8")
            data = Codec.encode_error(ident, code, message)
        del self._in_flight[ident]
        return data

    def abandon(self, ident: RequestId) -> None:
        """A received request was cancelled by the peer: no response will be sent."""
        self._in_flight.pop(ident, None)

    def _modern_result(self, ident: RequestId, method: str, result: Any) -> bytes:
        """A stateless request's result, with what every such result carries (see
        :func:`~mcpbind.protocol.stateless.encode_result`)."""
        hint = self.cache_hints.get(method)
        if hint is not None and is_retry(self._in_flight[ident]):
            hint = NOT_CACHEABLE
        return encode_result(ident, result, self.info, self._info_meta, hint)

    # -- sending --------------------------------------------------------------------------

    def start_request(
        self, spec: RequestSpec[Any, Any, Any], params: Any, *, progress: bool = False, related: bool = False
    ) -> tuple[RequestId, bytes]:
        """A new request: its id and bytes. Raises :class:`McpError` when it may not be sent.

        With ``progress`` the request asks for progress notifications, with its id as the token
        (unique while the request is pending). ``related``: it is sent by the handler of a
        request of the peer's (which decides how a server's transport carries it).
        """
        self._check_may_send(spec, params, related)
        self._next_id += 1
        ident = self._next_id
        if progress:
            params = with_progress_token(params, ident)
        self._pending[ident] = spec
        if spec.method == "initialize":
            self.phase = Phase.INITIALIZING
        return ident, Codec.encode_request(
            ident, spec.method, down(self.protocol_version, spec.method, params, "params")
        )

    def _check_may_send(self, spec: RequestSpec[Any, Any, Any], params: Any, related: bool) -> None:
        refusal = send_refusal(
            self.role,
            self.protocol_version,
            self.phase is Phase.NEW,
            spec,
            params,
            related,
            self.delivery,
            self.peer.capabilities,
        )
        if refusal is not None:
            raise McpError(INVALID_REQUEST, refusal)

    def forget(self, ident: RequestId) -> None:
        """Stop waiting for a response to ``ident`` (the caller timed out or was cancelled)."""
        self._pending.pop(ident, None)

    def cancel(self, ident: RequestId, reason: str | None = None) -> bytes | None:
        """The cancellation notification for a pending request we sent (never for initialize)."""
        pending = self._pending.pop(ident, None)
        if pending is None or pending.method == "initialize":
            return None
        params = types.CancelledNotificationParams(
            request_id=ident, reason=reason if reason is not None else UNSET
        )
        return Codec.encode_notification(methods.NOTIFICATIONS_CANCELLED.method, params)

    def notification(self, spec: NotificationSpec[Any, Any], params: Any = UNSET) -> bytes:
        return Codec.encode_notification(
            spec.method, down(self.protocol_version, spec.method, params, "notification")
        )

    def assume_ready(self, protocol_version: str) -> None:
        """Skip the handshake: this new server side is ready at ``protocol_version``, as if it
        had been negotiated (stateless HTTP, where each request comes on a connection of its
        own). Raises ``ValueError`` for a version this side does not support."""
        if self.role != "server" or self.phase is not Phase.NEW:
            raise ValueError("only a new server connection can skip the handshake")
        if protocol_version not in self.versions or protocol_version in MODERN_VERSIONS:
            # (a stateless version needs no handshake to skip: its requests say what they speak)
            raise ValueError(f"unsupported protocol version {protocol_version!r}")
        self._speak(protocol_version)
        self.phase = Phase.READY

    def resume_initialized(self, protocol_version: str, client_info: Any, client_capabilities: Any) -> None:
        """This new server side takes over a session another process (a worker sharing the
        client's sessions) initialized at ``protocol_version``, with the client's
        ``client_info`` and ``client_capabilities``: it is where that ``initialize`` left it
        (``notifications/initialized`` then makes it ready). ``ValueError`` for a version this
        side does not support."""
        if self.role != "server" or self.phase is not Phase.NEW:
            raise ValueError("only a new server connection can take a session over")
        if protocol_version not in self.versions or protocol_version in MODERN_VERSIONS:
            raise ValueError(f"unsupported protocol version {protocol_version!r}")
        self._speak(protocol_version)
        self.peer.info = client_info
        self.peer.capabilities = client_capabilities
        self.phase = Phase.INITIALIZING

    def fresh(self) -> Connection:
        """A new connection of this side in the state this one is in, with nothing exchanged on
        it: no request pending or in flight, no peer known, ids from 1. Cheaper than building
        one (nothing is checked again): stateless HTTP makes one per request from a connection
        made ready once (:meth:`assume_ready`)."""
        new: Connection = object.__new__(Connection)
        new.role = self.role
        new.info = self.info
        new.capabilities = self.capabilities
        new.instructions = self.instructions
        new.versions = self.versions
        new.phase = self.phase
        new.protocol_version = self.protocol_version
        new.delivery = self.delivery
        new.peer = _Peer()
        new.cache_hints = self.cache_hints
        new.modern = self.modern
        new.raw_params = self.raw_params
        new._next_id = 0
        new._pending = {}
        new._in_flight = {}
        new._codec = self._codec
        new._modern_versions = self._modern_versions
        new._info_meta = self._info_meta
        return new

    # -- client handshake -----------------------------------------------------------------

    def initialized(self, result: types.InitializeResult) -> bytes:
        """Check the server's answer to initialize; the ``notifications/initialized`` to send."""
        if result.protocol_version not in self.versions or result.protocol_version in MODERN_VERSIONS:
            raise McpError(
                INVALID_REQUEST,
                f"The server answered with protocol version {result.protocol_version!r}, "
                f"which this client does not support ({', '.join(self.versions)})",
            )
        self._speak(result.protocol_version)
        self.peer.info = result.server_info
        self.peer.capabilities = result.capabilities
        self.peer.instructions = result.instructions if isinstance(result.instructions, str) else None
        self.phase = Phase.READY
        return Codec.encode_notification(methods.NOTIFICATIONS_INITIALIZED.method)

    def adopt(
        self,
        version: str,
        server_info: types.Implementation | None,
        capabilities: Any,
        instructions: str | None = None,
    ) -> None:
        """A client side speaks the stateless ``version`` from now on, without a handshake:
        what the server said of itself (``server/discover``, or nothing for a client pinned
        without it) stands in for an initialize result. ``ValueError`` for a version this side
        does not speak or that is not stateless."""
        if self.role != "client":
            raise ValueError("only a client adopts a stateless version")
        if version not in self._modern_versions:
            raise ValueError(f"not a stateless protocol version this client speaks: {version!r}")
        self._speak(version)
        self.peer.info = server_info
        self.peer.capabilities = capabilities
        self.peer.instructions = instructions
        self.phase = Phase.READY

    def number_requests_from(self, first: int) -> None:
        """Number the requests this side starts from ``first`` on (workers sharing a session
        each start from a random number of their own, so that their ids do not meet)."""
        if first < 1:
            raise ValueError("request ids start from 1")
        self._next_id = first - 1

    def awaits_response(self, ident: RequestId) -> bool:
        """Whether the request ``ident`` this side sent is waiting for its response."""
        return ident in self._pending

    @property
    def next_request_id(self) -> RequestId:
        """The id the next request this side starts will get (read it just before sending,
        with no ``await`` between: a client's ``subscriptions/listen`` learns so the id its
        notifications will be tagged with)."""
        return self._next_id + 1

    # -- versions -------------------------------------------------------------------------

    def _speak(self, version: str) -> None:
        """``version`` is spoken from now on (it says, among others, whether batches are read)."""
        self.protocol_version = version
        self._codec = shared_codec(self.role, schema_for(version).methods.BATCHING, self.raw_params)

    def _encode_result(self, ident: RequestId, spec: RequestSpec[Any, Any, Any], result: Any) -> bytes:
        return Codec.encode_result(ident, down(self.protocol_version, spec.method, result, "result"))


_EMPTY = types.Result()
