"""The codec each side of a connection reads with: the handler-facing method table plus what
only the stateless versions have, one codec per role and batching rule, shared by every
connection."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import ModuleType
from typing import Any, Literal

import msgspec

from mcpbind import types
from mcpbind.protocol.envelope import MODERN_ONLY_METHODS
from mcpbind.protocol.methods import RequestSpec
from mcpbind.protocol.task_listen import SUBSCRIPTIONS_ACKNOWLEDGED, subscriptions_listen
from mcpbind.protocol.tasks import NOTIFICATIONS_TASKS, TASKS_UPDATE
from mcpbind.protocol.wire import Codec, DeferredRequests
from mcpbind.versions import LATEST_VERSION, schema_for

__all__ = ["shared_codec"]

Role = Literal["client", "server"]
methods = types.methods


def shared_codec(role: Role, batching: bool | None, raw_params: frozenset[str] = frozenset()) -> Codec:
    """Codecs hold no per-connection state, and building one defines a struct per method: one
    per role, batching rule and set of ``raw_params`` is shared by every connection
    (``None``: the canonical version's rule, the same codec as when it is given).

    ``raw_params``: request methods whose params are kept as received (``msgspec.Raw``,
    checked to be JSON but not decoded): a proxy forwards them untouched."""
    return _codec_for(role, methods.BATCHING if batching is None else batching, raw_params)


@functools.cache
def _codec_for(role: Role, batching: bool, raw_params: frozenset[str]) -> Codec:
    if role == "client":
        table, deferred = _client_table(), None
    else:
        table, deferred = _server_table(), DeferredRequests(MODERN_ONLY_METHODS, _modern_only_requests)
    if raw_params:
        table = _with_raw_params(table, raw_params)
        if deferred is not None:
            load = deferred.load
            deferred = DeferredRequests(deferred.methods, lambda: _raw(load(), raw_params))
    return Codec(table, role, batching=batching, deferred=deferred)


def _with_raw_params(table: ModuleType, raw_params: frozenset[str]) -> ModuleType:
    """``table`` with the requests of ``raw_params`` taking ``msgspec.Raw`` params (their
    results keep their types)."""
    raw = ModuleType(f"{table.__name__}.raw")
    raw.PROTOCOL_VERSION = table.PROTOCOL_VERSION  # type: ignore[attr-defined]
    raw.BATCHING = table.BATCHING  # type: ignore[attr-defined]
    raw.REQUESTS = _raw(table.REQUESTS, raw_params)  # type: ignore[attr-defined]
    raw.NOTIFICATIONS = table.NOTIFICATIONS  # type: ignore[attr-defined]
    return raw


def _raw(
    specs: Mapping[str, RequestSpec[Any, Any, Any]], raw_params: frozenset[str]
) -> dict[str, RequestSpec[Any, Any, Any]]:
    requests = dict(specs)
    for method in raw_params & requests.keys():
        spec = requests[method]
        requests[method] = RequestSpec(
            method,
            spec.direction,
            msgspec.Raw,
            spec.result_type,
            params_optional=True,
            embedded=spec.embedded,
        )
    return requests


def _client_table() -> ModuleType:
    """What a client accepts: the handler-facing table, plus the notifications only the
    stateless versions have (``notifications/subscriptions/acknowledged``, in their types) and
    those of the tasks extension (``notifications/tasks``; the acknowledgement with its
    ``taskIds``, :mod:`mcpbind.protocol.task_listen`)."""
    table = ModuleType("mcpbind.protocol.codecs.client_table")
    modern = schema_for(LATEST_VERSION).methods
    table.PROTOCOL_VERSION = methods.PROTOCOL_VERSION  # type: ignore[attr-defined]
    table.BATCHING = methods.BATCHING  # type: ignore[attr-defined]
    table.REQUESTS = methods.REQUESTS  # type: ignore[attr-defined]
    table.NOTIFICATIONS = {  # type: ignore[attr-defined]
        **methods.NOTIFICATIONS,
        **{m: spec for m, spec in modern.NOTIFICATIONS.items() if m not in methods.NOTIFICATIONS},
        SUBSCRIPTIONS_ACKNOWLEDGED.method: SUBSCRIPTIONS_ACKNOWLEDGED,  # (with the extension's taskIds)
        NOTIFICATIONS_TASKS.method: NOTIFICATIONS_TASKS,
    }
    return table


def _server_table() -> ModuleType:
    """What a server accepts: the handler-facing table and ``tasks/update`` of the tasks
    extension (:mod:`mcpbind.protocol.tasks`); with :func:`_modern_only_requests`, deferred,
    one codec reads every request whatever its era;
    :class:`~mcpbind.protocol.connection.Connection` keeps each era to its own methods."""
    table = ModuleType("mcpbind.protocol.codecs.server_table")
    table.PROTOCOL_VERSION = methods.PROTOCOL_VERSION  # type: ignore[attr-defined]
    table.BATCHING = methods.BATCHING  # type: ignore[attr-defined]
    table.REQUESTS = {**methods.REQUESTS, TASKS_UPDATE.method: TASKS_UPDATE}  # type: ignore[attr-defined]
    table.NOTIFICATIONS = methods.NOTIFICATIONS  # type: ignore[attr-defined]
    return table


def _modern_only_requests() -> dict[str, RequestSpec[Any, Any, Any]]:
    """The requests a server reads that only the stateless versions have (their params are
    those versions' types; ``subscriptions/listen`` with the tasks extension's ``taskIds``,
    :mod:`mcpbind.protocol.task_listen`). Made when the first of them arrives, which is when
    the newest schema's modules are loaded: a server whose clients all use a handshake
    version never loads them."""
    modern = schema_for(LATEST_VERSION).methods
    listen = subscriptions_listen()
    specs = {m: modern.REQUESTS[m] for m in MODERN_ONLY_METHODS}
    specs[listen.method] = listen
    return specs
