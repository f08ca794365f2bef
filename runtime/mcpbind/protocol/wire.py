"""The JSON-RPC 2.0 wire codec: bytes to typed messages and typed messages to bytes.

Decoding takes two stages. :meth:`Codec.decode` reads only the envelope (``jsonrpc``, ``id``,
``method``) and keeps ``params`` / ``result`` as :class:`msgspec.Raw`, untouched bytes a proxy
can forward as they are. :meth:`Codec.request_params`, :meth:`Codec.notification_params` and
:meth:`Codec.result` then decode those bytes straight into the struct the method table names
for the negotiated version. Encoding goes from structs straight to bytes, never via dicts.

Every failure is a :class:`WireError` carrying the JSON-RPC error code to answer with, a
message that names the offending path, and the request id when it could be read. That
includes what msgspec cannot decode although it follows the JSON grammar: nesting deeper than
msgspec's recursion limit (the interpreter's: about 1,000 levels on CPython 3.11, less the
stack in use) and escaped lone UTF-16 surrogates such as ``"\\udfff"`` (not Unicode text),
both ``PARSE_ERROR``. Only then, on the error path, is the id looked for, by
:func:`salvage_id`, a bounded scan that needs no recursion.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping
from functools import cache, reduce
from types import ModuleType
from typing import Any, ClassVar, Literal, NamedTuple, TypeVar

import msgspec
from msgspec import UNSET, Raw, UnsetType

from mcpbind.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    McpError,
)
from mcpbind.protocol.methods import NotificationSpec, RequestSpec
from mcpbind.protocol.unions import dec_hook

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "SALVAGE_MAX_BYTES",
    "Codec",
    "ErrorObject",
    "ErrorResponse",
    "Incoming",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "SalvagedId",
    "TypedIncoming",
    "TypedNotification",
    "TypedRequest",
    "WireError",
    "salvage_id",
]


RequestId = int | str
T = TypeVar("T")
Role = Literal["client", "server"]


class ErrorObject(msgspec.Struct, omit_defaults=True):
    """The ``error`` member of an error response."""

    code: int
    message: str
    data: Any = UNSET


class Request(msgspec.Struct, frozen=True):
    """A request as received: ``params`` still raw (empty when absent)."""

    id: RequestId
    method: str
    params: Raw


class Notification(msgspec.Struct, frozen=True):
    """A notification as received: ``params`` still raw (empty when absent)."""

    method: str
    params: Raw


class Response(msgspec.Struct, frozen=True):
    """A successful response as received: ``result`` still raw."""

    id: RequestId
    result: Raw


class ErrorResponse(msgspec.Struct, frozen=True):
    """An error response. ``id`` is ``None`` for ``"id": null`` (the peer could not read the
    request's id) and ``UNSET`` when the member is absent, which 2025-11-25 and later allow."""

    id: RequestId | UnsetType | None
    error: ErrorObject


Incoming = Request | Notification | Response | ErrorResponse


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


class WireError(McpError):
    """A message that cannot be accepted, with the JSON-RPC error to answer it with and the
    request id when it could be read. ``response_id`` is set instead when the bad message was
    recognizably a response (it has ``result`` or ``error``): that is never answered, but the
    request it answers can be failed."""

    def __init__(
        self,
        code: int,
        message: str,
        id: RequestId | None = None,
        data: Any = UNSET,
        *,
        response_id: RequestId | None = None,
    ) -> None:
        super().__init__(code, message, data)
        self.id = id
        self.response_id = response_id

    def to_error(self) -> ErrorObject:
        return ErrorObject(self.code, self.message, self.data)

    def __repr__(self) -> str:
        return f"WireError({self.code}, {self.message!r}, id={self.id!r})"


class _Envelope(msgspec.Struct, omit_defaults=True):
    # msgspec.Raw() as a plain default (not ``Raw | None``) decodes an object, a null and an
    # absent member alike, and an absent member stays empty.
    jsonrpc: Literal["2.0"]
    id: int | str | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    params: Raw = Raw()
    result: Raw = Raw()
    error: ErrorObject | UnsetType = UNSET


class _OutRequest(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    id: RequestId
    method: str
    params: Any = UNSET


class _OutNotification(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    method: str
    params: Any = UNSET


class _OutResult(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    result: Any


class _OutError(msgspec.Struct):
    jsonrpc: str
    id: RequestId | UnsetType | None
    error: ErrorObject


_ENVELOPE = msgspec.json.Decoder(_Envelope)
_RAW_ITEMS = msgspec.json.Decoder(list[Raw])
_ENCODER = msgspec.json.Encoder()
_PATH = re.compile(r"`\$")
_WHITESPACE = b" \t\r\n"


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
    return bytes(data).lstrip(_WHITESPACE)[:1]


class SalvagedId(NamedTuple):
    """What :func:`salvage_id` could read of a message that does not decode."""

    id: RequestId | None
    """The top-level ``id`` when it is an integer or a well-formed string, else ``None``."""
    response: bool
    """The message has a top-level ``result`` or ``error`` and no ``method``: a response,
    which is never answered; the request it answers can be failed instead."""


# A JSON string (escapes skipped whole, so an escaped quote does not end it), or a lone quote
# where one starts that never ends: nothing after that can be read.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|"', re.DOTALL)
_COLON = re.compile(rb"[ \t\r\n]*:[ \t\r\n]*")
_ID_VALUE = re.compile(rb'-?(?:0|[1-9][0-9]*)(?=[ \t\r\n]*[,}])|"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_ID_DECODER = msgspec.json.Decoder(int | str)
# How much of a message salvage_id reads: it runs in Python, so a hostile message must not
# make the error path slow (16 KiB take it about 10 ms at worst, a message of only quotes).
# SDKs send the envelope members first; an id that comes after 16 KiB of params is not read.
SALVAGE_MAX_BYTES = 16 * 1024


def salvage_id(data: bytes | bytearray | memoryview | Raw, max_bytes: int = SALVAGE_MAX_BYTES) -> SalvagedId:
    """The id of a message msgspec would not decode (not JSON, not UTF-8, nested too deeply,
    holding a lone surrogate, of the wrong shape), so that the error can name the request,
    or the pending request a broken response answers can be failed at once.

    Only the error path calls this. It reads the members of the top-level object within the
    first ``max_bytes`` bytes, without recursion and without decoding the rest: strings are
    skipped with a regular expression and the brackets between them counted. The id is read
    when it is an integer (``-?[0-9]+``) or a string that decodes; anything else (``null``, a
    float, a boolean, invalid UTF-8 or a lone surrogate inside it) is no id.
    """
    raw = bytes(memoryview(data)[:max_bytes])
    start = len(raw) - len(raw.lstrip(_WHITESPACE))
    if raw[start : start + 1] != b"{":
        return SalvagedId(None, False)
    ident: RequestId | None = None
    has_method = has_outcome = False
    depth, pos = 1, start + 1
    count = raw.count
    for match in _STRING.finditer(raw, pos):
        found = match.start()
        if found != pos:
            depth += count(b"{", pos, found) + count(b"[", pos, found)
            depth -= count(b"}", pos, found) + count(b"]", pos, found)
        pos = match.end()
        if depth < 1 or pos - found == 1:
            break  # the object ended, or a string that never does (or is cut off) began
        if depth > 1:
            continue
        colon = _COLON.match(raw, pos)
        if colon is None:
            continue  # a value, not a member name
        name = match.group()
        if b"\\" in name:  # an escaped name (rare): decode it to compare
            try:
                name = b'"' + msgspec.json.decode(name, type=str).encode() + b'"'
            except (msgspec.DecodeError, msgspec.ValidationError, UnicodeEncodeError):
                continue
        if name == b'"id"':
            value = _ID_VALUE.match(raw, colon.end())
            if value is not None:
                try:
                    ident = _ID_DECODER.decode(value.group())
                except (msgspec.DecodeError, msgspec.ValidationError):
                    ident = None
        elif name == b'"method"':
            has_method = True
        elif name in (b'"result"', b'"error"'):
            has_outcome = True
    return SalvagedId(ident, has_outcome and not has_method)


def _parse_error(
    message: str, data: bytes | bytearray | memoryview | Raw, code: int = PARSE_ERROR
) -> WireError:
    """The error for a message that does not decode, naming its id when it can be read."""
    salvaged = salvage_id(data)
    if salvaged.response:
        return WireError(code, message, response_id=salvaged.id)
    return WireError(code, message, salvaged.id)


_TOO_DEEP = "JSON nested too deeply"


class Codec:
    """Encode and decode JSON-RPC messages for one MCP version and one role.

    ``role`` is the side this codec speaks for: a server's codec accepts the requests a client
    may send and answers any other method with "method not found", and the reverse.
    """

    def __init__(self, methods: ModuleType, role: Role, *, batching: bool | None = None) -> None:
        self.version: str = methods.PROTOCOL_VERSION
        # ``batching`` overrides the table's: types of one version, batches of another.
        self.batching: bool = methods.BATCHING if batching is None else batching
        self.role = role
        all_requests: Mapping[str, RequestSpec[Any, Any, Any]] = methods.REQUESTS
        all_notes: Mapping[str, NotificationSpec[Any, Any]] = methods.NOTIFICATIONS
        receives_from_client = role == "server"
        # 2026-07-28 input requests (``embedded``) only travel inside an InputRequiredResult.
        self.incoming_requests = {
            m: s
            for m, s in all_requests.items()
            if not s.embedded
            and (s.direction.sent_by_client() if receives_from_client else s.direction.sent_by_server())
        }
        self.incoming_notifications = {
            m: s
            for m, s in all_notes.items()
            if (s.direction.sent_by_client() if receives_from_client else s.direction.sent_by_server())
        }
        self.requests = all_requests
        # Built now, so the first request of a session pays nothing extra.
        self._params_fast = {
            m: (s, s.params_decoder.msgspec_decoder) for m, s in self.incoming_requests.items()
        }
        self._one_pass, self._typed_requests, self._typed_notes = _typed_messages(
            self.incoming_requests, self.incoming_notifications
        )

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

    @staticmethod
    def encode_request(id: RequestId, method: str, params: Any = UNSET) -> bytes:
        """A request; ``params`` is a struct, a mapping, ``msgspec.Raw`` or ``UNSET`` (an empty
        ``Raw``, params that were absent where they were received, is left out too)."""
        if type(params) is Raw and not params:
            params = UNSET
        return _ENCODER.encode(_OutRequest("2.0", id, method, params))

    @staticmethod
    def encode_notification(method: str, params: Any = UNSET) -> bytes:
        """A notification; ``params`` as for :meth:`encode_request`."""
        if type(params) is Raw and not params:
            params = UNSET
        return _ENCODER.encode(_OutNotification("2.0", method, params))

    @staticmethod
    def encode_result(id: RequestId, result: Any) -> bytes:
        return _ENCODER.encode(_OutResult("2.0", id, result))

    @staticmethod
    def encode_error(id: RequestId | UnsetType | None, code: int, message: str, data: Any = UNSET) -> bytes:
        """An error response. Pass ``None`` when the request's id is unknown: JSON-RPC 2.0 asks
        for ``"id": null`` and peers (rmcp among them) reject a missing id; ``UNSET`` leaves the
        member out, for forwarding a message that had none."""
        return _ENCODER.encode(_OutError("2.0", id, ErrorObject(code, message, data)))

    @staticmethod
    def encode_wire_error(error: WireError) -> bytes:
        return _ENCODER.encode(_OutError("2.0", error.id, error.to_error()))

    @staticmethod
    def encode_batch(messages: list[bytes]) -> bytes:
        """Join already-encoded messages into one JSON array (batch-capable versions only)."""
        return b"[" + b",".join(messages) + b"]"
