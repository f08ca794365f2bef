"""The JSON-RPC 2.0 wire codec: bytes to typed messages and typed messages to bytes.

Decoding takes two stages. :meth:`Codec.decode` reads only the envelope (``jsonrpc``, ``id``,
``method``) and keeps ``params`` / ``result`` as :class:`msgspec.Raw`, untouched bytes a proxy
can forward as they are. :meth:`Codec.request_params`, :meth:`Codec.notification_params` and
:meth:`Codec.result` then decode those bytes straight into the struct the method table names
for the negotiated version. Encoding (:mod:`mcpbind.protocol.encode`) goes from structs
straight to bytes, never via dicts.

Every failure is a :class:`WireError` carrying the JSON-RPC error code to answer with, a
message that names the offending path, and the request id when it could be read. That
includes what msgspec cannot decode although it follows the JSON grammar: nesting deeper than
msgspec's recursion limit (the interpreter's: about 1,000 levels on CPython 3.11, less the
stack in use) and escaped lone UTF-16 surrogates such as ``"\\udfff"`` (not Unicode text),
both ``PARSE_ERROR``. Only then, on the error path, is the id looked for, by
:func:`mcpbind.protocol.salvage.salvage_id`, a bounded scan that needs no recursion.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from functools import cache, reduce
from types import ModuleType
from typing import Any, ClassVar, Literal, NamedTuple, TypeVar

import msgspec
from msgspec import UNSET, Raw, UnsetType

from mcpbind.protocol import encode
from mcpbind.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
)
from mcpbind.protocol.jsonrpc import (
    JSON_WHITESPACE,
    ErrorObject,
    ErrorResponse,
    Incoming,
    Notification,
    Request,
    RequestId,
    Response,
    WireError,
)
from mcpbind.protocol.methods import NotificationSpec, RequestSpec
from mcpbind.protocol.salvage import salvage_id
from mcpbind.protocol.unions import dec_hook

# The messages as received (mcpbind.protocol.jsonrpc) and the error codes are named here too:
# the codec's callers read them with it.
__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "Codec",
    "DeferredRequests",
    "ErrorObject",
    "ErrorResponse",
    "Incoming",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "TypedIncoming",
    "TypedNotification",
    "TypedRequest",
    "WireError",
]


T = TypeVar("T")
Role = Literal["client", "server"]


class TypedRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A received request with its params decoded into its method's struct.

    Each method has its own subclass (built by the codec), whose ``params`` has the method's
    params type and whose ``method`` is a class attribute, so msgspec decodes a whole request
    in one pass and nothing is copied afterwards.
    """

    id: RequestId
    params: Any
    method: ClassVar[str]


class TypedNotification(msgspec.Struct, frozen=True, kw_only=True):
    """A received notification with its params decoded into its method's struct (see
    :class:`TypedRequest`)."""

    params: Any
    method: ClassVar[str]


TypedIncoming = TypedRequest | TypedNotification | Response | ErrorResponse


class _Envelope(msgspec.Struct, omit_defaults=True):
    # msgspec.Raw() as a plain default (not ``Raw | None``) decodes an object, a null and an
    # absent member alike, and an absent member stays empty.
    jsonrpc: Literal["2.0"]
    id: int | str | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    params: Raw = Raw()
    result: Raw = Raw()
    error: ErrorObject | UnsetType = UNSET


_ENVELOPE = msgspec.json.Decoder(_Envelope)
_RAW_ITEMS = msgspec.json.Decoder(list[Raw])
_PATH = re.compile(r"`\$")


def _at(prefix: str, exc: msgspec.ValidationError) -> str:
    """msgspec names the failing path from ``$``; say which member it is inside."""
    return _PATH.sub("`" + prefix, str(exc))


def _typed_messages(
    requests: Mapping[str, RequestSpec[Any, Any, Any]],
    notifications: Mapping[str, NotificationSpec[Any, Any]],
) -> tuple[msgspec.json.Decoder[Any], dict[str, type[TypedRequest]], dict[str, type[TypedNotification]]]:
    """A subclass of TypedRequest / TypedNotification per method this side may receive, and one
    msgspec decoder for the union of them all, tagged by ``method``."""
    typed_requests: dict[str, type[TypedRequest]] = {}
    typed_notes: dict[str, type[TypedNotification]] = {}
    for method, spec in requests.items():
        typed_requests[method] = _typed_class(
            TypedRequest, method, spec.params_type, spec.params_optional, []
        )
    for method, note in notifications.items():
        # ``id`` is kept only to tell a notification from a request sent with its method name.
        extra = [("id", int | str | None | UnsetType, UNSET)]
        typed_notes[method] = _typed_class(
            TypedNotification, method, note.params_type, note.params_optional, extra
        )
    union: Any = reduce(operator.or_, [*typed_requests.values(), *typed_notes.values()])
    return msgspec.json.Decoder(union, dec_hook=dec_hook), typed_requests, typed_notes


def _typed_class(base: type[T], method: str, params_type: Any, optional: bool, extra: list[Any]) -> type[T]:
    params: tuple[str, Any] | tuple[str, Any, Any] = ("params", params_type)
    if optional:
        params = ("params", params_type, msgspec.field(default_factory=params_type))
    stray = ("_stray", Raw, msgspec.field(name="result", default=Raw()))
    stray_error = ("_stray_error", Raw, msgspec.field(name="error", default=Raw()))
    fields = [("jsonrpc", Literal["2.0"]), params, *extra, stray, stray_error]
    name = f"{base.__name__}[{method}]"
    return msgspec.defstruct(  # type: ignore[return-value]
        name,
        fields,
        bases=(base,),
        tag_field="method",
        tag=method,
        kw_only=True,
        frozen=True,
        namespace={"method": method},
        module=__name__,
    )


@cache
def _codec(version: str, role: Role) -> Codec:
    from mcpbind.versions import schema_for

    return Codec(schema_for(version).methods, role)


def _check_utf8(data: bytes | bytearray | memoryview) -> None:
    """JSON text is UTF-8 (RFC 8259 section 8.1), also inside members msgspec skips unread."""
    raw = data if not isinstance(data, memoryview) else bytes(data)
    if raw.isascii():  # the common case: no copy, no decode
        return
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _parse_error(f"Parse error: invalid UTF-8 at byte {exc.start}", raw) from None


def _first_byte(data: bytes | bytearray | memoryview | Raw) -> bytes:
    return bytes(data).lstrip(JSON_WHITESPACE)[:1]


def _parse_error(
    message: str, data: bytes | bytearray | memoryview | Raw, code: int = PARSE_ERROR
) -> WireError:
    """The error for a message that does not decode, naming its id when it can be read."""
    salvaged = salvage_id(data)
    if salvaged.response:
        return WireError(code, message, response_id=salvaged.id)
    return WireError(code, message, salvaged.id)


_TOO_DEEP = "JSON nested too deeply"


class DeferredRequests(NamedTuple):
    """Request methods a codec reads whose specs are made only when one of them first arrives
    (their types are a schema version's that a process may never need to load)."""

    methods: frozenset[str]
    load: Callable[[], Mapping[str, RequestSpec[Any, Any, Any]]]


class Codec:
    """Encode and decode JSON-RPC messages for one MCP version and one role.

    ``role`` is the side this codec speaks for: a server's codec accepts the requests a client
    may send and answers any other method with "method not found", and the reverse.

    ``deferred``: request methods read as if they were in ``methods`` but whose specs are
    loaded, and the codec's decoders rebuilt with them, when the first of them arrives; until
    then nothing of them is built or imported.
    """

    def __init__(
        self,
        methods: ModuleType,
        role: Role,
        *,
        batching: bool | None = None,
        deferred: DeferredRequests | None = None,
    ) -> None:
        # ``batching`` overrides the table's: types of one version, batches of another.
        self.batching: bool = methods.BATCHING if batching is None else batching
        self.role = role
        all_requests: Mapping[str, RequestSpec[Any, Any, Any]] = methods.REQUESTS
        all_notes: Mapping[str, NotificationSpec[Any, Any]] = methods.NOTIFICATIONS
        self.incoming_requests = self._incoming_requests(all_requests)
        self.incoming_notifications = {
            m: s
            for m, s in all_notes.items()
            if self._receives(s.direction.sent_by_client(), s.direction.sent_by_server())
        }
        self.requests = all_requests
        self._deferred = deferred
        # Built now, so the first request of a session pays nothing extra.
        self._params_fast = {
            m: (s, s.params_decoder.msgspec_decoder) for m, s in self.incoming_requests.items()
        }
        self._one_pass, self._typed_requests, self._typed_notes = _typed_messages(
            self.incoming_requests, self.incoming_notifications
        )

    def _receives(self, sent_by_client: bool, sent_by_server: bool) -> bool:
        return sent_by_client if self.role == "server" else sent_by_server

    def _incoming_requests(
        self, specs: Mapping[str, RequestSpec[Any, Any, Any]]
    ) -> dict[str, RequestSpec[Any, Any, Any]]:
        # 2026-07-28 input requests (``embedded``) only travel inside an InputRequiredResult.
        return {
            m: s
            for m, s in specs.items()
            if not s.embedded and self._receives(s.direction.sent_by_client(), s.direction.sent_by_server())
        }

    def _load_deferred(self) -> None:
        """Make the deferred methods' specs and rebuild the decoders with them (once). No lock
        (the protocol core loads no threading): two threads of a shared codec that both get
        here build the same tables, and every table only grows, in an order where a reader
        meets no half-way state (the per-method classes are in place before the params
        decoders that lead to them)."""
        deferred = self._deferred
        if deferred is None:
            return
        added = deferred.load()
        incoming = self._incoming_requests(added)
        requests = {**self.requests, **added}
        incoming_requests = {**self.incoming_requests, **incoming}
        one_pass, typed_requests, typed_notes = _typed_messages(
            incoming_requests, self.incoming_notifications
        )
        fast = {m: (s, s.params_decoder.msgspec_decoder) for m, s in incoming.items()}
        self.requests = requests
        self._typed_requests = typed_requests
        self._typed_notes = typed_notes
        self.incoming_requests = incoming_requests
        self._params_fast.update(fast)
        self._one_pass = one_pass
        self._deferred = None

    @classmethod
    def for_version(cls, version: str, role: Role) -> Codec:
        """The codec of ``version`` for ``role``; codecs hold no per-session state and are shared."""
        return _codec(version, role)

    # -- stage 1: the envelope ------------------------------------------------------------

    def decode(self, data: bytes | bytearray | memoryview) -> Incoming | list[Incoming | WireError]:
        """One message, or for a batch (where the version allows it) one entry per member.

        Raises :class:`WireError`: ``PARSE_ERROR`` for bytes that are not JSON,
        ``INVALID_REQUEST`` for JSON that is not a valid message (or a batch where batches
        are not allowed).
        """
        _check_utf8(data)
        try:
            return self._one(data)
        except WireError as error:
            if error.code == PARSE_ERROR or _first_byte(data) != b"[":
                raise
        return self._batch(data)

    def _batch(self, data: bytes | bytearray | memoryview) -> list[Incoming | WireError]:
        try:
            items = _RAW_ITEMS.decode(data)
        except msgspec.DecodeError as exc:  # ``[`` then anything: the envelope stopped at ``[``
            raise WireError(PARSE_ERROR, f"Parse error: {exc}") from None
        except RecursionError:
            raise WireError(PARSE_ERROR, f"Parse error: {_TOO_DEEP}") from None
        if not self.batching:
            raise WireError(
                INVALID_REQUEST,
                "Invalid request: JSON-RPC batches are not supported in this protocol version",
            )
        if not items:
            raise WireError(INVALID_REQUEST, "Invalid request: empty batch")
        out: list[Incoming | WireError] = []
        for item in items:
            try:
                out.append(self._one(item))
            except WireError as exc:
                out.append(exc)
        return out

    def decode_one(self, data: bytes | bytearray | memoryview) -> Incoming:
        """Like :meth:`decode`, for a transport or version where a batch is never valid."""
        message = self.decode(data)
        if isinstance(message, list):
            raise WireError(INVALID_REQUEST, "Invalid request: a batch is not allowed here")
        return message

    def _one(self, data: bytes | bytearray | memoryview | Raw) -> Incoming:
        try:
            env = _ENVELOPE.decode(data)
        except msgspec.ValidationError as exc:
            raise _parse_error(f"Invalid request: {exc}", data, INVALID_REQUEST) from None
        except msgspec.DecodeError as exc:
            raise _parse_error(f"Parse error: {exc}", data) from None
        except RecursionError:
            raise _parse_error(f"Parse error: {_TOO_DEEP}", data) from None
        ident = env.id
        if env.method is not UNSET:
            if env.result or env.error is not UNSET:
                raise WireError(
                    INVALID_REQUEST,
                    "Invalid request: a message cannot have both `method` and `result`/`error`",
                    None if isinstance(ident, UnsetType) else ident,
                )
            if isinstance(ident, UnsetType):
                return Notification(env.method, env.params)
            if ident is None:
                raise WireError(
                    INVALID_REQUEST, "Invalid request: `$.id` must be a string or an integer, not null"
                )
            return Request(ident, env.method, env.params)
        if env.result:
            if not isinstance(env.error, UnsetType):
                raise WireError(
                    INVALID_REQUEST, "Invalid request: a response cannot have both `result` and `error`"
                )
            if ident is None or isinstance(ident, UnsetType):
                raise WireError(
                    INVALID_REQUEST, "Invalid request: a result response needs a string or integer `$.id`"
                )
            return Response(ident, env.result)
        if not isinstance(env.error, UnsetType):
            return ErrorResponse(ident, env.error)
        raise WireError(
            INVALID_REQUEST,
            "Invalid request: a message needs `method` (request, notification), `result` or `error`",
            None if isinstance(ident, UnsetType) else ident,
        )

    # -- stage 2: typed params and results --------------------------------------------------

    def decode_typed(
        self, data: bytes | bytearray | memoryview
    ) -> TypedIncoming | list[TypedIncoming | WireError]:
        """:meth:`decode` and the typed params of a request or notification, in one call.

        A well-formed request or notification of a known method is decoded in a single msgspec
        pass (a union of per-method envelopes tagged by ``method``); anything else takes the
        two-stage path, so errors and their codes are exactly those of :meth:`decode`,
        :meth:`request_params` and :meth:`notification_params`.
        """
        typed: Any = None
        # Without a ``"method"`` member it is no request nor notification: a response goes
        # straight to the two-stage path instead of failing a whole pass first.
        if isinstance(data, memoryview) or b'"method"' in data:
            try:
                typed = self._one_pass.decode(data)  # a per-method TypedRequest/TypedNotification
            except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
                typed = None
        # Members msgspec skipped are not checked for UTF-8, and a message with ``method``
        # must have neither ``result`` nor ``error``: anything odd takes the slow path.
        if (
            typed is not None
            and not typed._stray
            and not typed._stray_error
            and (isinstance(typed, TypedRequest) or typed.id is UNSET)
        ):
            _check_utf8(data)
            result: TypedRequest | TypedNotification = typed
            return result
        message = self.decode(data)
        if isinstance(message, list):
            out: list[TypedIncoming | WireError] = []
            for item in message:
                try:
                    out.append(item if isinstance(item, WireError) else self._typed(item))
                except WireError as exc:
                    out.append(exc)
            return out
        return self._typed(message)

    def _typed(self, message: Incoming) -> TypedIncoming:
        if isinstance(message, Request):
            params = self.request_params(message)
            return self._typed_requests[message.method](jsonrpc="2.0", id=message.id, params=params)  # type: ignore[call-arg]
        if isinstance(message, Notification):
            params = self.notification_params(message)
            return self._typed_notes[message.method](jsonrpc="2.0", params=params)  # type: ignore[call-arg]
        return message

    def request_params(self, message: Request) -> Any:
        """The typed params of a received request; ``METHOD_NOT_FOUND`` / ``INVALID_PARAMS``."""
        entry = self._params_fast.get(message.method)
        if entry is None:
            deferred = self._deferred
            if deferred is not None and message.method in deferred.methods:
                self._load_deferred()
                return self.request_params(message)
            raise WireError(METHOD_NOT_FOUND, f"Method not found: {message.method}", message.id)
        spec, decoder = entry
        raw = message.params
        try:
            if raw:
                try:
                    return decoder.decode(raw)  # the hot path: one msgspec call
                except msgspec.ValidationError as exc:
                    return spec.params_decoder.recover(raw, exc)
            return spec.decode_params(raw)
        except msgspec.ValidationError as exc:
            raise WireError(INVALID_PARAMS, f"Invalid params: {_at('params', exc)}", message.id) from None
        except msgspec.DecodeError as exc:
            raise WireError(PARSE_ERROR, f"Parse error: {exc}", message.id) from None
        except RecursionError:  # the envelope was decoded from a shallower stack
            raise WireError(PARSE_ERROR, f"Parse error: {_TOO_DEEP}", message.id) from None

    def notification_params(self, message: Notification) -> Any:
        """The typed params of a received notification; unknown methods raise ``METHOD_NOT_FOUND``.

        JSON-RPC never answers a notification, so callers usually log and drop on error.
        """
        spec = self.incoming_notifications.get(message.method)
        if spec is None:
            raise WireError(METHOD_NOT_FOUND, f"Method not found: {message.method}")
        try:
            return spec.decode_params(message.params)
        except msgspec.ValidationError as exc:
            raise WireError(INVALID_PARAMS, f"Invalid params: {_at('params', exc)}") from None
        except msgspec.DecodeError as exc:
            raise WireError(PARSE_ERROR, f"Parse error: {exc}") from None
        except RecursionError:
            raise WireError(PARSE_ERROR, f"Parse error: {_TOO_DEEP}") from None

    def result(self, spec: RequestSpec[Any, Any, Any], message: Response) -> Any:
        """The typed result of a response to a request we sent with ``spec``.

        A result that does not fit the schema raises ``WireError`` (``INTERNAL_ERROR``): the
        peer answered, but with something this side cannot use.
        """
        try:
            return spec.result_decoder.decode(message.result)
        except msgspec.ValidationError as exc:
            raise WireError(INTERNAL_ERROR, f"Invalid result: {_at('result', exc)}", message.id) from None
        except msgspec.DecodeError as exc:
            raise WireError(INTERNAL_ERROR, f"Invalid result: {exc}", message.id) from None
        except RecursionError:
            raise WireError(INTERNAL_ERROR, f"Invalid result: {_TOO_DEEP}", message.id) from None

    # -- encoding ---------------------------------------------------------------------------
    # The functions of mcpbind.protocol.encode themselves, named on the codec: no call between.

    encode_request = staticmethod(encode.encode_request)
    encode_notification = staticmethod(encode.encode_notification)
    encode_result = staticmethod(encode.encode_result)
    encode_error = staticmethod(encode.encode_error)
    encode_wire_error = staticmethod(encode.encode_wire_error)
    encode_batch = staticmethod(encode.encode_batch)
