"""The per-request metadata of the stateless protocol (MCP 2026-07-28): what a request carries
in ``params._meta`` in place of the ``initialize`` handshake, read and checked on its own.

Every request names its protocol version and the client's capabilities, and may name the
client and the lowest log level it wants; results name the server. The keys are the
specification's (``io.modelcontextprotocol/...``). Nothing here keeps state between requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from msgspec import UNSET

from mcpbind import types
from mcpbind.protocol.errors import INVALID_PARAMS, McpError, UnsupportedProtocolVersionError

__all__ = [
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "LOG_LEVEL",
    "MODERN_ONLY_METHODS",
    "PROTOCOL_VERSION",
    "REMOVED_METHODS",
    "SERVER_INFO",
    "SUBSCRIPTION_ID",
    "Envelope",
    "envelope_meta",
    "is_modern_meta",
    "params_meta",
    "read_envelope",
    "with_progress_token",
]

PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"

# Methods only the stateless versions have, and methods they dropped (served only to the
# sessions of a handshake version).
MODERN_ONLY_METHODS: Final = frozenset({"server/discover", "subscriptions/listen"})
REMOVED_METHODS: Final = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        # (``tasks/get`` and ``tasks/cancel`` are the tasks extension's: served where a
        # handler answers them, see mcpbind.protocol.tasks.)
        "tasks/result",
        "tasks/list",
    }
)

_NO_EXTENSIONS: Final[AbstractSet[str]] = frozenset()
_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


@dataclass(frozen=True, slots=True)
class Envelope:
    """What one stateless request says about itself.

    ``client_capabilities`` is typed with the handler-facing types (``mcpbind.types``);
    ``log_level`` is ``None`` when the request asked for no log messages (then none are sent
    for it). ``extensions``: the identifiers of the extensions the request's capabilities
    declare (``extensions`` of ``clientCapabilities``, which the handler-facing struct lacks): a
    set (the keys of that object, as received).
    ``input_responses`` and ``request_state`` are a multi round-trip retry's
    (``tools/call``, ``prompts/get``, ``resources/read``), as received: ``None`` when absent.
    """

    version: str
    client_capabilities: types.ClientCapabilities
    client_info: types.Implementation | None = None
    log_level: types.LoggingLevel | None = None
    input_responses: Mapping[str, Any] | None = None
    request_state: str | None = None
    extensions: AbstractSet[str] = frozenset()


# Where read_envelope writes an Envelope's fields: straight into its slots (a frozen dataclass's
# __init__ goes through object.__setattr__ for each, a third of the cost of reading one).
_SET_FIELDS: Final = tuple(
    getattr(Envelope, name).__set__
    for name in (
        "version",
        "client_capabilities",
        "client_info",
        "log_level",
        "input_responses",
        "request_state",
        "extensions",
    )
)


def _envelope(
    version: str,
    capabilities: types.ClientCapabilities,
    info: types.Implementation | None,
    level: types.LoggingLevel | None,
    extensions: AbstractSet[str],
) -> Envelope:
    """``Envelope(version, capabilities, info, level, extensions=extensions)``, made faster."""
    envelope: Envelope = object.__new__(Envelope)
    set_version, set_capabilities, set_info, set_level, set_responses, set_state, set_extensions = _SET_FIELDS
    set_version(envelope, version)
    set_capabilities(envelope, capabilities)
    set_info(envelope, info)
    set_level(envelope, level)
    set_responses(envelope, None)
    set_state(envelope, None)
    set_extensions(envelope, extensions)
    return envelope


class _MetaOnly(msgspec.Struct):
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


_META_ONLY = msgspec.json.Decoder(_MetaOnly)


def params_meta(params: Any) -> Any:
    """The ``_meta`` of a request's params: the member of a params struct (``UNSET`` when
    absent), or read from params kept as received (``msgspec.Raw``, a proxy's: only ``_meta``
    is decoded, the rest is skipped; ``UNSET`` when absent or not an object)."""
    if type(params) is not msgspec.Raw:
        return getattr(params, "meta", UNSET)
    try:
        meta = _META_ONLY.decode(params).meta
    except (msgspec.DecodeError, RecursionError):
        return UNSET
    return UNSET if meta is None else meta


def is_modern_meta(meta: Any) -> bool:
    """Whether a request's ``_meta`` speaks the stateless protocol (names a version or the
    client's capabilities the stateless way)."""
    return isinstance(meta, dict) and (PROTOCOL_VERSION in meta or CLIENT_CAPABILITIES in meta)


def read_envelope(
    meta: Any, supported: frozenset[str] | tuple[str, ...], advertised: tuple[str, ...]
) -> Envelope:
    """The envelope of a request whose ``_meta`` is ``meta``.

    Raises :class:`McpError` ``INVALID_PARAMS`` when a required key is missing or malformed,
    and :class:`UnsupportedProtocolVersionError` (with ``advertised``, every version the
    server speaks) for a version not in ``supported``.
    """
    if not isinstance(meta, dict):
        raise McpError(
            INVALID_PARAMS,
            f"Invalid params: `params._meta` must carry {PROTOCOL_VERSION!r} and {CLIENT_CAPABILITIES!r}",
        )
    version = meta.get(PROTOCOL_VERSION)
    if not isinstance(version, str):
        what = "is missing" if version is None else "must be a string"
        raise McpError(INVALID_PARAMS, f"Invalid params: `params._meta[{PROTOCOL_VERSION!r}]` {what}")
    if version not in supported:
        raise UnsupportedProtocolVersionError(version, advertised)
    raw_capabilities = meta.get(CLIENT_CAPABILITIES)
    if raw_capabilities is None:
        raise McpError(INVALID_PARAMS, f"Invalid params: `params._meta[{CLIENT_CAPABILITIES!r}]` is missing")
    try:
        capabilities = msgspec.convert(raw_capabilities, types.ClientCapabilities, str_keys=True)
    except msgspec.ValidationError as exc:
        raise McpError(
            INVALID_PARAMS, f"Invalid params: `params._meta[{CLIENT_CAPABILITIES!r}]`: {exc}"
        ) from None
    info: types.Implementation | None = None
    raw_info = meta.get(CLIENT_INFO)
    if raw_info is not None:
        try:
            info = msgspec.convert(raw_info, types.Implementation, str_keys=True)
        except msgspec.ValidationError as exc:
            raise McpError(
                INVALID_PARAMS, f"Invalid params: `params._meta[{CLIENT_INFO!r}]`: {exc}"
            ) from None
    level = meta.get(LOG_LEVEL)
    if level is not None and level not in _LEVELS:
        raise McpError(
            INVALID_PARAMS,
            f"Invalid params: `params._meta[{LOG_LEVEL!r}]` must be one of {', '.join(_LEVELS)}",
        )
    declared = raw_capabilities.get("extensions") if isinstance(raw_capabilities, dict) else None
    # The declared object's keys as they are (a set view: nothing built per request).
    extensions = declared.keys() if isinstance(declared, dict) else _NO_EXTENSIONS
    return _envelope(version, capabilities, info, level, extensions)


def envelope_meta(
    version: str,
    capabilities: Any,
    info: types.Implementation | None = None,
    log_level: str | None = None,
) -> dict[str, Any]:
    """The ``_meta`` entries a client puts on a stateless request (``capabilities``: its
    ``ClientCapabilities``, any version's struct)."""
    meta: dict[str, Any] = {PROTOCOL_VERSION: version, CLIENT_CAPABILITIES: capabilities}
    if info is not None:
        meta[CLIENT_INFO] = info
    if log_level is not None:
        meta[LOG_LEVEL] = log_level
    return meta


def with_progress_token(params: Any, token: int | str) -> Any:
    """``params`` with ``_meta.progressToken`` set to ``token``: a params struct, a mapping, or
    params kept as received (``msgspec.Raw``, decoded for it: a proxy's request asking for
    progress is the one it re-encodes)."""
    if type(params) is msgspec.Raw:
        params = msgspec.json.decode(params) if params else {}
    if isinstance(params, dict):
        meta = params.get("_meta")
        return {**params, "_meta": {**(meta if isinstance(meta, dict) else {}), "progressToken": token}}
    meta = params.meta if isinstance(getattr(params, "meta", UNSET), dict) else {}
    return msgspec.structs.replace(params, meta={**meta, "progressToken": token})
