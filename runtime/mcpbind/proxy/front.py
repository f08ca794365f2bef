"""The server a proxy's clients see: an ordinary :class:`~mcpbind.server.server.Server` (so every
transport and every protocol version it serves, the stateless one included, and its HTTP
options and authorization, are the proxy's too) whose handlers forward to the upstream server.

It presents the upstream's identity, instructions and capabilities (less the task ones,
which it does not forward; with ``logging`` always, since some servers log without declaring
it), and forwards what those capabilities offer; other requests get -32601. Its handlers take params as received and return results as received
(``raw_params``), so what passes through is not decoded. List changes and resource updates
the upstream tells of reach the proxy's clients as the server's own (on GET streams, and on
``subscriptions/listen`` streams for stateless clients); the resources a client subscribes to
(``resources/subscribe``, or while its listen stream names them) the upstream is subscribed to.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec
from msgspec import UNSET

from mcpbind import types
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from mcpbind.proxy.call_log import CallLog
from mcpbind.proxy.eras import as_object
from mcpbind.proxy.listening import subscribing_listen
from mcpbind.proxy.specs import FORWARDED_NOTIFICATIONS, FORWARDED_REQUESTS, raw_notification, raw_request
from mcpbind.proxy.upstream import Upstream
from mcpbind.runtime.context import RequestContext
from mcpbind.server.server import Server

__all__ = ["front_server", "offered_methods", "tell_clients"]

methods = types.methods


def offered_methods(capabilities: types.ServerCapabilities) -> frozenset[str]:
    """The requests a server with ``capabilities`` answers, of those a proxy forwards."""
    offered: set[str] = set()
    if capabilities.tools is not UNSET:
        offered |= {"tools/list", "tools/call"}
    resources = capabilities.resources
    if resources is not UNSET:
        offered |= {"resources/list", "resources/templates/list", "resources/read"}
        if resources.subscribe is True:
            offered |= {"resources/subscribe", "resources/unsubscribe"}
    if capabilities.prompts is not UNSET:
        offered |= {"prompts/list", "prompts/get"}
    if capabilities.completions is not UNSET:
        offered.add("completion/complete")
    if capabilities.logging is not UNSET:
        offered.add("logging/setLevel")
    return frozenset(offered & FORWARDED_REQUESTS)


async def tell_clients(server: Server, method: str, params: Any) -> None:
    """Tell ``server``'s clients of a change an upstream server told of (``method``, its
    notification; ``params``: a resource update's, else ``None``)."""
    if method == methods.NOTIFICATIONS_TOOLS_LIST_CHANGED.method:
        await server.tools_changed()
    elif method == methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED.method:
        await server.prompts_changed()
    elif method == methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED.method:
        await server.resources_changed()
    elif isinstance(getattr(params, "uri", None), str):
        await server.resource_updated(params.uri)


def front_server(
    upstream: Upstream, remote: RemoteServer, *, log_payloads: bool = False, **options: Any
) -> Server:
    """The server fronting ``upstream`` (connected as ``remote``); ``options`` go to
    :class:`~mcpbind.server.server.Server` (``request_timeout``, ``max_concurrent_requests``...).
    Each forwarded call is logged (:mod:`mcpbind.proxy.call_log`), its params and result too
    with ``log_payloads``."""
    info = remote.server_info
    # Logging is always declared: some servers send log messages without declaring it (the
    # level a client sets is then the proxy's filter alone).
    declared = remote.server_capabilities
    capabilities = msgspec.structs.replace(
        declared, tasks=UNSET, logging=declared.logging if declared.logging is not UNSET else {}
    )
    offered = offered_methods(capabilities)
    server = Server(
        info.name or "mcpbind-proxy",
        info.version or "0",
        title=info.title if isinstance(info.title, str) else None,
        instructions=remote.instructions,
        capabilities=capabilities,
        raw_params=offered,
        input_rounds=False,
        **options,
    )

    calls = CallLog(upstream.name, payloads=log_payloads)

    async def forward(params: msgspec.Raw, ctx: RequestContext[Any]) -> msgspec.Raw:
        started = calls.start()
        if started is None:
            return await upstream.forward(ctx.method, params, ctx)
        try:
            result = await upstream.forward(ctx.method, params, ctx)
        except McpError as exc:
            calls.done(started, ctx.method, params, f"error {exc.code}")
            raise
        except BaseException:
            calls.done(started, ctx.method, params, "cancelled")
            raise
        asked = b'"input_required"' in bytes(result)
        calls.done(started, ctx.method, params, "input_required" if asked else "ok", result)
        return result

    async def subscribe(params: msgspec.Raw, ctx: RequestContext[Any]) -> types.Result:
        uri = _uri(params)
        await upstream.subscribe_for(ctx.session, uri)
        server.restore_subscriptions(ctx.session, server.subscriptions_of(ctx.session) | {uri})
        return types.Result()

    async def unsubscribe(params: msgspec.Raw, ctx: RequestContext[Any]) -> types.Result:
        uri = _uri(params)
        mine = server.subscriptions_of(ctx.session)
        if uri in mine:
            server.restore_subscriptions(ctx.session, mine - {uri})
        await upstream.unsubscribe_for(ctx.session, uri)
        return types.Result()

    async def set_level(params: msgspec.Raw, ctx: RequestContext[Any]) -> types.Result:
        try:
            level = msgspec.convert(as_object(params), types.SetLevelRequestParams).level
        except msgspec.ValidationError as exc:
            raise McpError(INVALID_PARAMS, f"Invalid params: {exc}") from None
        await upstream.set_level(level)
        ctx.session.log_level = level
        return types.Result()

    own = {
        "resources/subscribe": subscribe,
        "resources/unsubscribe": unsubscribe,
        "logging/setLevel": set_level,
    }
    for method in sorted(offered):
        register: Any = server.on(raw_request(method))  # (raw params; a result raw or typed)
        register(own.get(method, forward))

    async def pass_on(params: msgspec.Raw, ctx: RequestContext[Any]) -> None:
        await upstream.notify(ctx.method, params)

    for method in FORWARDED_NOTIFICATIONS:
        server.on_notification(raw_notification(method))(pass_on)

    upstream.on_change = functools.partial(tell_clients, server)
    if "resources/subscribe" in offered:

        async def upstream_of(uri: str, ctx: RequestContext[Any], meta: Any) -> Upstream:
            return upstream

        subscribing_listen(server, upstream_of)
    return server


def _uri(params: msgspec.Raw) -> str:
    try:
        return msgspec.convert(as_object(params), types.SubscribeRequestParams).uri
    except msgspec.ValidationError as exc:
        raise McpError(INVALID_PARAMS, f"Invalid params: {exc}") from None
