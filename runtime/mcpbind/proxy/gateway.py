"""A gateway: several servers behind one endpoint, as one server.

Each server's tools and prompts are named ``{server}_{name}`` (``github_search``); its
resources and resource templates keep their URIs (a URI names what it names) and get the
prefix on their ``name``. Listing asks every connected server that offers the list, at once,
and answers with all of them in one page; a server that fails or does not answer within its
timeout is left out of that answer (logged), so one server's failure never fails the others.
A call, a prompt, a read and a subscription go to the server that listed the name or URI
(a URI another server did not list is matched against the servers' resource templates);
``completion/complete`` follows its reference. List changes and resource updates of any
server reach the gateway's clients, and ``logging/setLevel`` goes to every server that logs.

What passes through a call keeps its bytes: only the params of a request whose name loses its
prefix are decoded and encoded again, and the listings whose names gain one.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Final

import anyio
import msgspec

from mcpbind import types
from mcpbind.protocol.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, McpError
from mcpbind.proxy.call_log import CallLog
from mcpbind.proxy.eras import as_object
from mcpbind.proxy.front import offered_methods, tell_clients
from mcpbind.proxy.listening import subscribing_listen
from mcpbind.proxy.specs import FORWARDED_NOTIFICATIONS, raw_notification, raw_request
from mcpbind.proxy.upstream import Upstream, UpstreamUnavailable
from mcpbind.runtime.context import RequestContext
from mcpbind.server.server import Server
from mcpbind.server.uri_template import UriTemplate

__all__ = ["SEPARATOR", "gateway_server"]

log = logging.getLogger("mcpbind.proxy")

methods = types.methods
SEPARATOR: Final = "_"

# What a gateway offers: everything any server may, list changes told.
_CAPABILITIES: Final = types.ServerCapabilities(
    tools=types.ServerCapabilitiesTools(list_changed=True),
    prompts=types.ServerCapabilitiesPrompts(list_changed=True),
    resources=types.ServerCapabilitiesResources(subscribe=True, list_changed=True),
    completions={},
    logging={},
)
# Each listing: the member holding the items, and whether their names get the prefix.
_LISTS: Final = {
    "tools/list": ("tools", "name"),
    "prompts/list": ("prompts", "name"),
    "resources/list": ("resources", None),
    "resources/templates/list": ("resourceTemplates", None),
}
_LIST_TIMEOUT: Final = 10.0


class _Routes:
    """What each server listed last: where a resource URI or template goes."""

    def __init__(self) -> None:
        self.uris: dict[str, Upstream] = {}
        self.templates: list[tuple[UriTemplate, Upstream]] = []

    def server_of(self, uri: str) -> Upstream | None:
        found = self.uris.get(uri)
        if found is not None:
            return found
        for template, upstream in self.templates:
            try:
                if template.match(uri) is not None:
                    return upstream
            except ValueError:  # a template that cannot be matched
                continue
        return None


def gateway_server(
    upstreams: Iterable[Upstream],
    *,
    name: str = "mcpbind-gateway",
    version: str = "0",
    instructions: str | None = None,
    log_payloads: bool = False,
    **options: Any,
) -> Server:
    """The server in front of ``upstreams`` (each named by its ``name``, which prefixes its
    tools and prompts); ``options`` go to :class:`~mcpbind.server.server.Server`."""
    servers: dict[str, Upstream] = {}
    for upstream in upstreams:
        if upstream.name in servers:
            raise ValueError(f"two servers are named {upstream.name!r}")
        servers[upstream.name] = upstream
    by_length = sorted(servers, key=len, reverse=True)  # "a_b" before "a" when parsing names
    routes = _Routes()
    calls = {u.name: CallLog(u.name, payloads=log_payloads) for u in servers.values()}
    server = Server(
        name,
        version,
        instructions=instructions,
        capabilities=_CAPABILITIES,
        raw_params=frozenset(
            {"tools/call", "prompts/get", "resources/read", "resources/subscribe", "resources/unsubscribe"}
            | {"completion/complete", "logging/setLevel", *_LISTS}
        ),
        input_rounds=False,
        **options,
    )

    def offering(method: str) -> list[Upstream]:
        return [
            u
            for u in servers.values()
            if u.remote is not None and method in offered_methods(u.remote.server_capabilities)
        ]

    def split(prefixed: str, what: str) -> tuple[Upstream, str]:
        for key in by_length:
            head = key + SEPARATOR
            if prefixed.startswith(head) and len(prefixed) > len(head):
                return servers[key], prefixed[len(head) :]
        raise McpError(INVALID_PARAMS, f"Invalid params: unknown {what} {prefixed!r}")

    async def forward(
        upstream: Upstream, method: str, params: msgspec.Raw, ctx: RequestContext[Any]
    ) -> msgspec.Raw:
        log_call = calls[upstream.name]
        started = log_call.start()
        try:
            result = await upstream.forward(method, params, ctx)
        except McpError as exc:
            log_call.done(started, method, params, f"error {exc.code}")
            raise
        except BaseException:
            log_call.done(started, method, params, "cancelled")
            raise
        log_call.done(started, method, params, "ok", result)
        return result

    async def list_items(params: msgspec.Raw, ctx: RequestContext[Any]) -> msgspec.Raw:
        body = as_object(params)
        if body.get("cursor") is not None:
            raise McpError(INVALID_PARAMS, "Invalid params: unknown cursor (the gateway answers in one page)")
        return await gather(ctx.method, ctx, body.get("_meta"))

    async def gather(method: str, ctx: RequestContext[Any], meta: Any) -> msgspec.Raw:
        """Every server's items of the listing ``method``, renamed, in one result; ``meta``:
        the ``_meta`` of the request it is for (a stateless client's envelope, which goes on)."""
        if isinstance(meta, dict):
            meta = {k: v for k, v in meta.items() if k != "progressToken"}
        member, named = _LISTS[method]
        found: dict[str, list[Any]] = {}

        async def collect(upstream: Upstream) -> None:
            with anyio.move_on_after(upstream.request_timeout or _LIST_TIMEOUT) as scope:
                try:
                    found[upstream.name] = await _all_pages(upstream, method, member, ctx, meta)
                except McpError as exc:
                    log.warning("%s: %s failed, left out: %s", upstream.name, method, exc.message)
            if scope.cancelled_caught:
                log.warning("%s: %s did not answer in time, left out", upstream.name, method)

        async with anyio.create_task_group() as tasks:
            for upstream in offering(method):
                tasks.start_soon(collect, upstream)
        items: list[Any] = []
        for key, upstream in servers.items():  # in the configuration's order
            for item in found.get(key, ()):
                if not isinstance(item, dict):
                    continue
                if named is not None and isinstance(item.get(named), str):
                    item[named] = key + SEPARATOR + item[named]
                elif isinstance(item.get("name"), str):
                    item["name"] = key + SEPARATOR + item["name"]
                if method == "resources/list" and isinstance(item.get("uri"), str):
                    routes.uris.setdefault(item["uri"], upstream)
                items.append(item)
        if method == "resources/templates/list":
            routes.templates = [
                (UriTemplate(item["uriTemplate"]), servers[key])
                for key in servers
                for item in found.get(key, ())
                if isinstance(item, dict)
                and isinstance(item.get("uriTemplate"), str)
                and _valid(item["uriTemplate"])
            ]
        return msgspec.Raw(msgspec.json.encode({member: items}))

    async def by_name(params: msgspec.Raw, ctx: RequestContext[Any]) -> msgspec.Raw:
        body = as_object(params)
        prefixed = body.get("name")
        if not isinstance(prefixed, str):
            raise McpError(INVALID_PARAMS, "Invalid params: `params.name` must be a string")
        upstream, own = split(prefixed, "tool" if ctx.method == "tools/call" else "prompt")
        body["name"] = own
        return await forward(upstream, ctx.method, msgspec.Raw(msgspec.json.encode(body)), ctx)

    async def by_uri(params: msgspec.Raw, ctx: RequestContext[Any]) -> msgspec.Raw:
        body = as_object(params)
        uri = body.get("uri")
        if not isinstance(uri, str):
            raise McpError(INVALID_PARAMS, "Invalid params: `params.uri` must be a string")
        upstream = await _route(uri, ctx, body.get("_meta"))
        if ctx.method == "resources/subscribe":
            await upstream.subscribe_for(ctx.session, uri)
            server.restore_subscriptions(ctx.session, server.subscriptions_of(ctx.session) | {uri})
            return msgspec.Raw(b"{}")
        if ctx.method == "resources/unsubscribe":
            server.restore_subscriptions(ctx.session, server.subscriptions_of(ctx.session) - {uri})
            await upstream.unsubscribe_for(ctx.session, uri)
            return msgspec.Raw(b"{}")
        return await forward(upstream, ctx.method, params, ctx)

    async def _route(uri: str, ctx: RequestContext[Any], meta: Any) -> Upstream:
        upstream = routes.server_of(uri)
        if upstream is None:  # not listed yet (or since a change): list again, once
            await gather("resources/list", ctx, meta)
            await gather("resources/templates/list", ctx, meta)
            upstream = routes.server_of(uri)
        if upstream is None:
            raise McpError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
        return upstream

    async def complete(params: msgspec.Raw, ctx: RequestContext[Any]) -> msgspec.Raw:
        body = as_object(params)
        ref = body.get("ref")
        if not isinstance(ref, dict):
            raise McpError(INVALID_PARAMS, "Invalid params: `params.ref` must be an object")
        if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
            upstream, own = split(ref["name"], "prompt")
            body["ref"] = {**ref, "name": own}
            return await forward(upstream, ctx.method, msgspec.Raw(msgspec.json.encode(body)), ctx)
        if isinstance(ref.get("uri"), str):
            return await forward(await _route(ref["uri"], ctx, body.get("_meta")), ctx.method, params, ctx)
        raise McpError(INVALID_PARAMS, "Invalid params: `params.ref` names no prompt nor resource")

    async def set_level(params: msgspec.Raw, ctx: RequestContext[Any]) -> msgspec.Raw:
        try:
            level = msgspec.convert(as_object(params), types.SetLevelRequestParams).level
        except msgspec.ValidationError as exc:
            raise McpError(INVALID_PARAMS, f"Invalid params: {exc}") from None
        for upstream in offering("logging/setLevel"):
            try:
                await upstream.set_level(level)
            except McpError as exc:
                log.warning("%s: logging/setLevel failed: %s", upstream.name, exc.message)
        ctx.session.log_level = level
        return msgspec.Raw(b"{}")

    handlers: Mapping[str, Any] = {
        **dict.fromkeys(_LISTS, list_items),
        "tools/call": by_name,
        "prompts/get": by_name,
        "resources/read": by_uri,
        "resources/subscribe": by_uri,
        "resources/unsubscribe": by_uri,
        "completion/complete": complete,
        "logging/setLevel": set_level,
    }
    for method, handler in handlers.items():
        register: Any = server.on(raw_request(method))
        register(handler)

    async def pass_on(params: Any, ctx: RequestContext[Any]) -> None:
        for upstream in servers.values():
            await upstream.notify(ctx.method, params)

    for method in FORWARDED_NOTIFICATIONS:
        server.on_notification(raw_notification(method))(pass_on)

    for upstream in servers.values():
        upstream.on_change = functools.partial(tell_clients, server)

    async def upstream_of(uri: str, ctx: RequestContext[Any], meta: Any) -> Upstream:
        return await _route(uri, ctx, meta)

    subscribing_listen(server, upstream_of)
    return server


async def _all_pages(
    upstream: Upstream, method: str, member: str, ctx: RequestContext[Any], meta: Any
) -> list[Any]:
    """Every item of a listing of one server, page after page (``meta``: each page's ``_meta``)."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(1000):  # a server whose cursors never end is cut off
        body: dict[str, Any] = {} if meta is None else {"_meta": meta}
        if cursor is not None:
            body["cursor"] = cursor
        params = msgspec.Raw(msgspec.json.encode(body))
        try:
            page = msgspec.json.decode(await upstream.forward(method, params, ctx))
        except UpstreamUnavailable:
            return items
        if not isinstance(page, dict):
            break
        found = page.get(member)
        if isinstance(found, list):
            items += found
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return items


def _valid(template: str) -> bool:
    try:
        UriTemplate(template)
    except ValueError:
        return False
    return True
