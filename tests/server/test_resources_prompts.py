"""Resources, resource templates, subscriptions and prompts from functions."""

from __future__ import annotations

import base64
import enum
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

import anyio
import anyio.abc
import msgspec
import pytest

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, McpError
from mcpbind.protocol.methods import NotificationSpec
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.memory import memory_pair
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.harness import connected

pytestmark = pytest.mark.anyio
methods = types.methods

server = Server("library", "1", page_size=2)


@server.resource("config://app", mime_type="application/json", title="App config")
def config() -> dict[str, int]:
    """Settings of the app."""
    return {"retries": 3}


@server.resource("file:///logo.png", mime_type="image/png")
async def logo() -> bytes:
    return b"\x89PNG"


@server.resource("note://today")
def today(ctx: RequestContext) -> str:
    return f"read by {ctx.method}"


@server.resource("users://{id}/profile", description="A user's profile")
async def profile(id: str) -> str:
    return f"profile of {id}"


@server.resource("repo://{owner}/{name}{/path*}")
def repo_file(owner: str, name: str, path: list[str]) -> str:
    return f"{owner}/{name}:{'/'.join(path)}"


@server.prompt(title="Code review")
def review(
    code: str, language: Annotated[str, msgspec.Meta(description="A language name")] = "python"
) -> str:
    """Review a piece of code.

    Args:
        code: The code to review.
        language: Overridden by the Meta description.
    """
    return f"Review this {language} code: {code}"


@server.prompt()
def repeat(word: str, times: int) -> list[object]:
    return [word * times, types.PromptMessage(role="assistant", content=types.TextContent(text="ok"))]


@asynccontextmanager
async def session() -> AsyncIterator[RemoteServer]:
    async with connected(server) as client_session:
        yield client_session


async def test_listing_with_pages_and_capabilities() -> None:
    async with session() as client:
        caps = client.server_capabilities
        assert caps.resources is not types.UNSET and caps.resources.subscribe is True
        assert caps.prompts is not types.UNSET
        first = await client.list_resources()
        assert len(first.resources) == 2 and isinstance(first.next_cursor, str)
        resources = {r.uri: r for r in await client.all_resources()}
        assert set(resources) == {"config://app", "file:///logo.png", "note://today"}
        assert resources["config://app"].title == "App config"
        assert resources["config://app"].description == "Settings of the app."
        assert resources["config://app"].mime_type == "application/json"
        templates = [t.uri_template for t in await client.all_resource_templates()]
        assert templates == ["users://{id}/profile", "repo://{owner}/{name}{/path*}"]
        prompts = {p.name: p for p in await client.all_prompts()}
        assert set(prompts) == {"review", "repeat"}
        assert prompts["review"].description == "Review a piece of code."
        assert prompts["review"].arguments == [
            types.PromptArgument(name="code", description="The code to review.", required=True),
            types.PromptArgument(name="language", description="A language name", required=False),
        ]
        assert prompts["repeat"].arguments == [
            types.PromptArgument(name="word", required=True),
            types.PromptArgument(name="times", required=True),
        ]


async def test_reading() -> None:
    async with session() as client:
        assert (await client.read_resource("config://app")).contents == [
            types.TextResourceContents(uri="config://app", text='{"retries":3}', mime_type="application/json")
        ]
        blob = (await client.read_resource("file:///logo.png")).contents[0]
        assert isinstance(blob, types.BlobResourceContents)
        assert base64.b64decode(blob.blob) == b"\x89PNG" and blob.mime_type == "image/png"
        text = (await client.read_resource("note://today")).contents[0]
        assert isinstance(text, types.TextResourceContents) and text.text == "read by resources/read"
        by_template = (await client.read_resource("users://42/profile")).contents[0]
        assert isinstance(by_template, types.TextResourceContents) and by_template.text == "profile of 42"
        assert by_template.uri == "users://42/profile"
        nested = (await client.read_resource("repo://ada/engine/src/main.py")).contents[0]
        assert isinstance(nested, types.TextResourceContents) and nested.text == "ada/engine:src/main.py"
        for missing in ("config://other", "users://42/settings", "users:///profile/x"):
            with pytest.raises(McpError) as info:
                await client.read_resource(missing)
            assert info.value.code == RESOURCE_NOT_FOUND and info.value.data == {"uri": missing}
        await client.ping()  # the server goes on


def watching(*specs: NotificationSpec[Any, Any]) -> tuple[Client, anyio.abc.ObjectReceiveStream[str]]:
    """A client that puts what each notification of ``specs`` tells (its URI, else its method)
    into the returned stream."""
    client = Client("watcher", "1", versions=HANDSHAKE_VERSIONS)
    send, receive = anyio.create_memory_object_stream[str](100)

    async def seen(params: Any, ctx: RequestContext) -> None:
        send.send_nowait(
            params.uri if isinstance(params, types.ResourceUpdatedNotificationParams) else ctx.method
        )

    for spec in specs:
        client.on_notification(spec)(seen)
    return client, receive


async def next_seen(stream: anyio.abc.ObjectReceiveStream[str]) -> str:
    with anyio.fail_after(5):
        return await stream.receive()


async def test_subscriptions_reach_only_subscribers() -> None:
    watcher, updates = watching(methods.NOTIFICATIONS_RESOURCES_UPDATED)
    bystander, other_updates = watching(methods.NOTIFICATIONS_RESOURCES_UPDATED)
    async with connected(server, watcher) as client, connected(server, bystander) as other:
        await client.subscribe_resource("config://app")
        await client.subscribe_resource("note://today")
        await other.subscribe_resource("note://today")
        await server.resource_updated("config://app")
        await server.resource_updated("file:///logo.png")  # nobody subscribed: nothing sent
        await server.resource_updated("note://today")
        # Notifications are handled in order: once the last one is seen, so is anything before it.
        assert [await next_seen(updates), await next_seen(updates)] == ["config://app", "note://today"]
        assert await next_seen(other_updates) == "note://today"

        await client.unsubscribe_resource("config://app")
        await server.resource_updated("config://app")
        await server.resource_updated("note://today")
        assert await next_seen(updates) == "note://today"
        assert await next_seen(other_updates) == "note://today"
        # Template URIs can be watched too.
        await client.subscribe_resource("users://7/profile")
        await server.resource_updated("users://7/profile")
        assert await next_seen(updates) == "users://7/profile"
    assert server._subscriptions == {}  # closed sessions leave no subscriptions behind


# A long URI, so that each notification about it is big.
BOARD = "note://board?" + "n" * 10_000


async def test_a_session_that_does_not_read_holds_back_no_broadcast(caplog: pytest.LogCaptureFixture) -> None:
    """Several clients over in-memory transports; one subscribes and stops reading. Another
    one's tool tells every subscriber about a change, again and again: it finishes at once
    (before, it waited for the stalled client for good), no more than ``max_queued_bytes``
    wait for the stalled client (the oldest are dropped, with one warning), and once it reads
    again it gets what was kept, in order, and its session goes on, as the other one's."""
    limit = 64 << 10
    noting = Server("notes", "1", max_queued_bytes=limit)
    noting.max_uri_length = 2 * len(BOARD)

    @noting.resource("note://board")
    def board() -> str:
        return "notes"

    @noting.tool()
    async def write_note(times: int) -> str:
        for n in range(times):
            await noting.resource_updated(f"{BOARD}&{n}")
        await noting.tools_changed()  # the last one, to every session
        return f"noted {times}"

    times = 300  # 3 MB
    server_end, stalled = memory_pair(max_buffered=4)

    async def ask(ident: int, method: str, params: dict[str, Any]) -> None:
        await stalled.send(
            json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()
        )

    async def answer(ident: int) -> list[Any]:
        """The messages up to the answer to request ``ident``, which comes last."""
        got: list[Any] = []
        with anyio.fail_after(5):
            while not got or got[-1].get("id") != ident:
                got.append(json.loads(await stalled.receive()))
        return got

    async with anyio.create_task_group() as tg:
        tg.start_soon(noting.run, server_end)
        client_info = {"name": "raw", "version": "1"}
        await ask(
            0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client_info}
        )
        await answer(0)
        await stalled.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        for n in range(times):
            await ask(n + 1, "resources/subscribe", {"uri": f"{BOARD}&{n}"})
            await answer(n + 1)
        # From now on it reads nothing.
        async with connected(noting) as writer:
            with caplog.at_level(logging.WARNING, "mcpbind"), anyio.fail_after(5):  # for good before
                assert (await writer.call_tool("write_note", {"times": times})).content[
                    0
                ].text == f"noted {times}"  # type: ignore[union-attr]
            assert caplog.text.count("the peer is not reading") == 1
            # It reads again: the oldest went, and the newest (up to the last one) came in order.
            await ask(-1, "ping", {})
            got = await answer(-1)
            with anyio.fail_after(5):
                while all(m.get("method") != "notifications/tools/list_changed" for m in got):
                    got.append(json.loads(await stalled.receive()))  # (if sent after the ping's answer)
            notes = [
                int(m["params"]["uri"].rpartition("&")[2])
                for m in got
                if m.get("method") == "notifications/resources/updated"
            ]
            assert notes == sorted(notes) and notes[-1] == times - 1
            assert 0 < len(notes) * len(BOARD) < limit + 6 * len(BOARD)  # what waited, and 5 on their way
            await ask(-2, "ping", {})
            assert (await answer(-2))[-1]["result"] == {}
            assert (await writer.call_tool("write_note", {"times": 1})).content[0].text == "noted 1"  # type: ignore[union-attr]
        await stalled.aclose()


def build() -> Server:
    changing = Server("changing", "1")

    @changing.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    @changing.resource("mem://a")
    def a() -> str:
        return "a"

    @changing.resource("mem://{key}")
    def by_key(key: str) -> str:
        return key

    return changing


async def test_adding_and_removing_prompts_and_resources_tells_clients() -> None:
    changing = build()
    watcher, changes = watching(
        methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED, methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED
    )
    prompts_changed = "notifications/prompts/list_changed"
    resources_changed = "notifications/resources/list_changed"
    async with connected(changing, watcher) as client:
        caps = client.server_capabilities
        assert caps.prompts is not types.UNSET and caps.prompts.list_changed is True
        assert caps.resources is not types.UNSET and caps.resources.list_changed is True
        assert caps.resources.subscribe is True
        assert [p.name for p in await client.all_prompts()] == ["greet"]

        @changing.prompt()
        def farewell(name: str) -> str:
            return f"Bye {name}"

        assert await next_seen(changes) == prompts_changed
        assert [p.name for p in await client.all_prompts()] == ["greet", "farewell"]
        changing.remove_prompt("greet")
        assert await next_seen(changes) == prompts_changed
        assert [p.name for p in await client.all_prompts()] == ["farewell"]
        with pytest.raises(McpError) as gone:
            await client.get_prompt("greet", {"name": "x"})
        assert gone.value.code == INVALID_PARAMS

        @changing.resource("mem://b")
        def b() -> str:
            return "b"

        assert await next_seen(changes) == resources_changed
        assert [r.uri for r in await client.all_resources()] == ["mem://a", "mem://b"]
        changing.remove_resource("mem://a")
        assert await next_seen(changes) == resources_changed
        assert [r.uri for r in await client.all_resources()] == ["mem://b"]
        # mem://a is now read through the template, which the next step removes.
        assert (await client.read_resource("mem://a")).contents[0] == types.TextResourceContents(
            uri="mem://a", text="a", mime_type="text/plain"
        )

        @changing.resource("mem://{key}/{part}")
        def by_part(key: str, part: str) -> str:
            return part

        assert await next_seen(changes) == resources_changed
        changing.remove_resource_template("mem://{key}")
        assert await next_seen(changes) == resources_changed
        assert [t.uri_template for t in await client.all_resource_templates()] == ["mem://{key}/{part}"]
        with pytest.raises(McpError) as unknown:
            await client.read_resource("mem://a")
        assert unknown.value.code == RESOURCE_NOT_FOUND

        with pytest.raises(KeyError):
            changing.remove_prompt("greet")
        with pytest.raises(KeyError):
            changing.remove_resource("mem://a")
        with pytest.raises(KeyError):
            changing.remove_resource_template("mem://{key}")
        await changing.prompts_changed()  # explicit ones, for changes made elsewhere
        assert await next_seen(changes) == prompts_changed
        await changing.resources_changed()
        assert await next_seen(changes) == resources_changed


async def test_registering_a_template_again_replaces_it() -> None:
    changing = build()

    @changing.resource("mem://{key}", description="newer")
    def newer(key: str) -> str:
        return key.upper()

    async with connected(changing) as client:
        templates = await client.all_resource_templates()
        assert [(t.uri_template, t.description) for t in templates] == [("mem://{key}", "newer")]
        text = (await client.read_resource("mem://x")).contents[0]
        assert isinstance(text, types.TextResourceContents) and text.text == "X"


async def test_hand_written_list_handlers_declare_no_list_changes() -> None:
    manual = Server("manual", "1")

    @manual.on(methods.PROMPTS_LIST)
    async def list_prompts(
        params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[])

    @manual.on(methods.RESOURCES_LIST)
    async def list_resources(
        params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[])

    async with connected(manual) as client:
        caps = client.server_capabilities
        assert caps.prompts == types.ServerCapabilitiesPrompts()
        assert caps.resources == types.ServerCapabilitiesResources()


async def test_prompts() -> None:
    async with session() as client:
        got = await client.get_prompt("review", {"code": "x = 1"})
        assert got.description == "Review a piece of code."
        assert got.messages == [
            types.PromptMessage(role="user", content=types.TextContent(text="Review this python code: x = 1"))
        ]
        twice = await client.get_prompt("repeat", {"word": "ab", "times": "2"})
        assert [m.role for m in twice.messages] == ["user", "assistant"]
        assert twice.messages[0].content == types.TextContent(text="abab")
        with pytest.raises(McpError) as missing:
            await client.get_prompt("review", {})
        assert missing.value.code == INVALID_PARAMS and "code" in missing.value.message
        with pytest.raises(McpError) as bad:
            await client.get_prompt("repeat", {"word": "a", "times": "many"})
        assert bad.value.code == INVALID_PARAMS and "`arguments.times`" in bad.value.message
        with pytest.raises(McpError) as unknown:
            await client.get_prompt("nope")
        assert unknown.value.code == INVALID_PARAMS


def test_templates_that_cannot_be_matched_are_refused_at_registration() -> None:
    refusing = Server("refusing", "1")
    for template in ("x://{a}{b}{c}{d}/end", "x://{+a}{+b}{+c}/end", "x://{name}-{version}/y"):
        with pytest.raises(ValueError, match="cannot be matched unambiguously") as refused:

            @refusing.resource(template)
            def read(**variables: str) -> str:
                return ""

        assert repr(template) in str(refused.value)
    assert refusing.resource_templates == []


def hostile_server(**options: Any) -> Server:
    hostile = Server("hostile", "1", **options)

    @hostile.resource("file:///{+path}{?q}")
    def file(path: str, q: str = "") -> str:
        return f"{path}?{q}"

    @hostile.resource("x://{a}/{b}/end")
    def pair(a: str, b: str) -> str:
        return a + b

    return hostile


async def test_hostile_uris_are_answered_quickly() -> None:
    # The backtracking matcher took about 2 s on the 10 KB URI and minutes on the 100 KB one.
    hostile = [
        uri
        for size in (10_000, 100_000)
        for uri in (
            "file:///" + "?q=" * (size // 3) + "#",
            "x://" + "a" * size + "!",
            "x://" + "a/" * (size // 2),
        )
    ]
    async with connected(hostile_server(max_uri_length=200_000)) as client:
        with anyio.fail_after(5):
            for uri in hostile:
                with pytest.raises(McpError) as info:
                    await client.read_resource(uri)
                assert info.value.code == RESOURCE_NOT_FOUND
        found = (await client.read_resource("file:///a/b?q=1")).contents[0]
        assert isinstance(found, types.TextResourceContents) and found.text == "a/b?1"


async def test_over_long_uris_are_invalid_params() -> None:
    async with connected(hostile_server()) as client:
        with anyio.fail_after(5):
            for uri in ("file:///" + "?q=" * 3_000 + "#", "x://" + "a" * 100_000 + "!"):
                with pytest.raises(McpError) as info:
                    await client.read_resource(uri)
                assert info.value.code == INVALID_PARAMS
                assert info.value.message == (
                    f"URI too long: {len(uri)} characters, more than the 8192 this server accepts"
                )
                with pytest.raises(McpError) as subscribing:
                    await client.subscribe_resource(uri)
                assert subscribing.value.code == INVALID_PARAMS
        at_limit = "x://" + "a" * (8192 - len("x://a//end")) + "/b/end"
        assert len(at_limit) == 8192
        text = (await client.read_resource(at_limit)).contents[0]
        assert isinstance(text, types.TextResourceContents) and text.text.endswith("ab")


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


def typed_server() -> Server:
    typed = Server("typed", "1")

    @typed.resource("items://{id}{?detailed,limit,shade,size}")
    def item(
        id: int,
        detailed: bool = False,
        limit: int | None = None,
        shade: Shade = Shade.LIGHT,
        size: Literal["s", "m", "l"] = "m",
    ) -> str:
        assert isinstance(id, int) and isinstance(detailed, bool)
        return f"{id!r} {detailed!r} {limit!r} {shade.value} {size}"

    @typed.resource("sum://{/n*}")
    def total(n: list[int]) -> str:
        return str(sum(n))

    @typed.prompt()
    def plan(steps: int, verbose: bool = False, shade: Shade = Shade.DARK) -> str:
        return f"{steps!r} {verbose!r} {shade.value}"

    return typed


async def test_template_variables_and_prompt_arguments_are_converted_to_the_annotated_types() -> None:
    async with connected(typed_server()) as client:

        async def read(uri: str) -> str:
            [contents] = (await client.read_resource(uri)).contents
            assert isinstance(contents, types.TextResourceContents)
            return contents.text

        assert await read("items://42") == "42 False None light m"
        assert await read("items://7?detailed=true&limit=3&shade=dark&size=l") == "7 True 3 dark l"
        assert await read("sum:///1/2/39") == "42"
        got = await client.get_prompt("plan", {"steps": "3", "verbose": "true", "shade": "light"})
        assert got.messages[0].content == types.TextContent(text="3 True light")

        bad = {
            "items://abc": "Invalid arguments for resource template items://{id}{?detailed,limit,shade,size}:"
            " Expected `int`, got `str` - at `arguments.id`",
            "items://1?detailed=maybe": "Expected `bool`, got `str` - at `arguments.detailed`",
            "items://1?shade=pink": "Invalid enum value 'pink' - at `arguments.shade`",
            "items://1?size=xl": "Invalid enum value 'xl' - at `arguments.size`",
            "sum:///1/x": "Expected `int`, got `str` - at `arguments.n[1]`",
        }
        for uri, message in bad.items():
            with pytest.raises(McpError) as info:
                await client.read_resource(uri)
            assert info.value.code == INVALID_PARAMS and info.value.message.endswith(message), uri
        with pytest.raises(McpError) as prompt_error:
            await client.get_prompt("plan", {"steps": "many"})
        assert prompt_error.value.code == INVALID_PARAMS
        assert prompt_error.value.message == (
            "Invalid arguments for prompt plan: Expected `int`, got `str` - at `arguments.steps`"
        )
        assert await read("items://5") == "5 False None light m"  # the server goes on


def test_resource_parameters_that_nothing_fills_are_refused_at_registration() -> None:
    strict = Server("strict", "1")
    with pytest.raises(TypeError, match=r"resource template items://\{id\}: .*\['owner'\] have no default"):

        @strict.resource("items://{id}")
        def item(id: int, owner: str) -> str:
            return owner

    with pytest.raises(TypeError, match=r"resource config://app: .*\['name'\] have no default"):

        @strict.resource("config://app")
        def config(name: str) -> str:
            return name
