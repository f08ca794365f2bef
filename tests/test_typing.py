"""The generated handler protocols and method specs hold up under mypy --strict.

The classes below are checked by `nox -s typecheck` (warn_unused_ignores is on, so every
``type: ignore`` here must mark a real error); the tests run mypy on a wrong handler and check
that it is rejected with a message a user can act on, and on registrations and sends in both
directions, checking that exactly the wrong-way ones are errors.
"""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import assert_type

from mcpbind.protocol.methods import Direction, NotificationSpec, RequestSpec, ToServer
from mcpbind.schema import VERSIONS, load
from mcpbind.schema.v2025_06_18 import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsRequestParams,
    ListToolsResult,
    TextContent,
    methods,
)
from mcpbind.schema.v2025_06_18.stubs import HandlesToolsCall, HandlesToolsList
from tests.mypy_run import run_mypy


class Context:
    """Stands in for the runtime's request context."""


class Tools(HandlesToolsCall[Context], HandlesToolsList[Context]):
    async def on_tools_call(self, params: CallToolRequestParams, ctx: Context, /) -> CallToolResult:
        return CallToolResult(content=[TextContent(text=params.name)])

    async def on_tools_list(self, params: ListToolsRequestParams, ctx: Context, /) -> ListToolsResult:
        return ListToolsResult(tools=[])


class WrongResult(HandlesToolsCall[Context]):
    async def on_tools_call(  # type: ignore[override]
        self, params: CallToolRequestParams, ctx: Context, /
    ) -> ListToolsResult:
        return ListToolsResult(tools=[])


class WrongParams(HandlesToolsCall[Context]):
    async def on_tools_call(  # type: ignore[override]
        self, params: ListToolsRequestParams, ctx: Context, /
    ) -> CallToolResult:
        return CallToolResult(content=[])


class NotAHandler:
    async def on_tools_call(self, params: CallToolRequestParams, ctx: Context, /) -> str:
        return "no"


def structural_check() -> None:
    ok: HandlesToolsCall[Context] = Tools()
    bad: HandlesToolsCall[Context] = NotAHandler()  # type: ignore[assignment]
    del ok, bad


def specs_carry_their_types(raw: bytes) -> None:
    spec = methods.TOOLS_CALL
    assert_type(spec, RequestSpec[CallToolRequestParams, CallToolResult, ToServer])
    assert_type(spec.decode_params(raw), CallToolRequestParams)
    assert_type(spec.decode_result(raw), CallToolResult)
    wrong: RequestSpec[ListToolsRequestParams, Any, Any] = methods.TOOLS_CALL  # type: ignore[assignment]
    del wrong


@pytest.mark.anyio
async def test_a_typed_handler_runs() -> None:
    tools = Tools()
    params = methods.TOOLS_CALL.decode_params(b'{"name":"echo"}')
    result = await tools.on_tools_call(params, Context())
    assert result.content == [TextContent(text="echo")]


def mypy_strict(path: Path, tmp_path: Path) -> tuple[str, str, int]:
    """``mypy --strict path`` (no configuration file): its report, its errors and its status.

    The snippets of a test session share one cache (in pytest's temporary folder of this session
    and worker, beside ``tmp_path``; every snippet is checked with these same options), so that
    mcpbind and its generated schema packages are analysed once, not once a snippet."""
    cache = tmp_path.parent / "mypy-cache-snippets"
    return run_mypy(["--strict", "--cache-dir", str(cache), "--config-file", "", str(path)])


def mypy_errors(source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[int, list[str]]:
    """``mypy --strict`` on ``source`` as a user runs it (no project config): line -> its errors.

    mypy is a test dependency (``TEST_DEPS`` in noxfile.py), imported as a module: the test does
    not depend on a ``mypy`` executable being on ``PATH``, and fails rather than skips without it.
    """
    from tests.harness import source_roots

    # A source checkout has two roots (runtime/, generated/); an installed wheel needs nothing.
    roots = source_roots()
    if roots:
        monkeypatch.setenv("MYPYPATH", os.pathsep.join(roots))
    path = tmp_path / "snippet.py"
    path.write_text(textwrap.dedent(source))
    out, err, _ = mypy_strict(path, tmp_path)
    assert not err, err
    assert "error: Cannot find" not in out, out
    errors: dict[int, list[str]] = {}
    for line in out.splitlines():
        match = re.match(rf"{re.escape(str(path))}:(\d+): error: (.*)", line)
        if match:
            errors.setdefault(int(match.group(1)), []).append(match.group(2))
    return errors


def assert_mypy_marks(source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mypy reports an error on each line of ``source`` marked ``# E: <part of the message>``,
    with that text in it, and on no other line."""
    expected = {
        number: line.split("# E: ", 1)[1].strip()
        for number, line in enumerate(textwrap.dedent(source).splitlines(), start=1)
        if "# E: " in line
    }
    errors = mypy_errors(source, tmp_path, monkeypatch)
    report = "\n".join(f"{n}: {m}" for n, ms in sorted(errors.items()) for m in ms)
    assert sorted(errors) == sorted(expected), report
    for number, wanted in expected.items():
        assert any(wanted in message for message in errors[number]), report


WRONG_HANDLER = """
from mcpbind.schema.v2025_06_18 import CallToolRequestParams, ListToolsResult
from mcpbind.schema.v2025_06_18.stubs import HandlesToolsCall

class Server(HandlesToolsCall[object]):
    async def on_tools_call(self, params: CallToolRequestParams, ctx: object, /) -> ListToolsResult:
        return ListToolsResult(tools=[])
"""


def test_mypy_rejects_a_wrong_handler_signature(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    errors = mypy_errors(WRONG_HANDLER, tmp_path, monkeypatch)
    assert list(errors) == [6], errors
    (message,) = errors[6]
    assert 'Return type "Coroutine[Any, Any, ListToolsResult]" of "on_tools_call" incompatible' in message
    assert "CallToolResult" in message


ADD_HANDLERS = """
from mcpbind.schema.v2025_11_25 import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    RequestParams,
    Result,
)
from mcpbind.schema.v2025_11_25.stubs import HandlesPing, HandlesToolsCall, HandlesToolsList
from mcpbind.server.server import Server
from mcpbind.runtime.session import RequestContext


class Tools(HandlesToolsCall[RequestContext], HandlesToolsList[RequestContext]):
    async def on_tools_call(self, params: CallToolRequestParams, ctx: RequestContext, /) -> CallToolResult:
        return CallToolResult(content=[])

    async def on_tools_list(self, params: PaginatedRequestParams, ctx: RequestContext, /) -> ListToolsResult:
        return ListToolsResult(tools=[])


class WrongResult:
    async def on_tools_call(self, params: CallToolRequestParams, ctx: RequestContext) -> ListToolsResult:
        return ListToolsResult(tools=[])


class WrongParams:
    async def on_tools_call(self, params: PaginatedRequestParams, ctx: RequestContext) -> CallToolResult:
        return CallToolResult(content=[])


class NotAsync:
    def on_tools_call(self, params: CallToolRequestParams, ctx: RequestContext) -> CallToolResult:
        return CallToolResult(content=[])


class NoContext:
    async def on_tools_call(self, params: CallToolRequestParams) -> CallToolResult:
        return CallToolResult(content=[])


class Misspelt:
    async def on_tool_call(self, params: CallToolRequestParams, ctx: RequestContext) -> CallToolResult:
        return CallToolResult(content=[])


class Pings(HandlesPing[RequestContext]):  # the session answers ping itself
    async def on_ping(self, params: RequestParams, ctx: RequestContext, /) -> Result:
        return Result()


class WrongOverride(HandlesToolsList[RequestContext]):
    async def on_tools_list(  # E: incompatible with return type "Coroutine[Any, Any, ListToolsResult | Encoded[ListToolsResult]]" in supertype
        self, params: PaginatedRequestParams, ctx: RequestContext, /
    ) -> CallToolResult:
        return CallToolResult(content=[])


server = Server("typed", "1")
server.add_handlers(Tools())
server.add_handlers(WrongResult())  # E: incompatible type "WrongResult"
server.add_handlers(WrongParams())  # E: incompatible type "WrongParams"
server.add_handlers(NotAsync())  # E: incompatible type "NotAsync"
server.add_handlers(NoContext())  # E: incompatible type "NoContext"
server.add_handlers(Misspelt())  # E: incompatible type "Misspelt"
server.add_handlers(Pings())  # E: incompatible type "Pings"
server.add_handlers(object())  # E: incompatible type "object"
"""


def test_mypy_checks_the_handlers_given_to_add_handlers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert_mypy_marks(ADD_HANDLERS, tmp_path, monkeypatch)


def test_mypy_accepts_every_handler_protocol_a_server_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """add_handlers' type lists the generated protocols by hand: it must take each one whose
    method reaches a server's handlers, and none that the session answers itself."""
    from mcpbind.runtime.session import HANDLED_BY_SESSION
    from mcpbind.server.handler_objects import role_protocols

    parts = {protocol.__name__: method for method, protocol in role_protocols()[0].values()}
    assert "HandlesToolsCall" in parts and "HandlesPing" in parts
    lines = [
        "from mcpbind.schema.v2025_11_25 import stubs",
        "from mcpbind.server.server import Server",
        "from mcpbind.runtime.session import RequestContext",
        "",
        "def register(server: Server, **handlers: object) -> None:",
    ]
    for name, method in sorted(parts.items()):
        mark = f'  # E: incompatible type "{name}[RequestContext' if method in HANDLED_BY_SESSION else ""
        lines.append(f"    def add_{name}(handler: stubs.{name}[RequestContext]) -> None:")
        lines.append(f"        server.add_handlers(handler){mark}")
    assert_mypy_marks("\n".join(lines) + "\n", tmp_path, monkeypatch)


LOG_LEVELS = """
from mcpbind.client.remote import RemoteServer
from mcpbind.runtime.session import RequestContext


async def handler(ctx: RequestContext, session: RemoteServer, level: str) -> None:
    await ctx.log("warning", {"disk": "full"})
    await ctx.log("emergency", "on fire", logger="alarm")
    await ctx.log("verbose", "hello")  # E: Argument 1 to "log" of "RequestContext" has incompatible type
    await ctx.log("WARNING", "hello")  # E: Argument 1 to "log" of "RequestContext" has incompatible type
    await ctx.log(level, "hello")  # E: Argument 1 to "log" of "RequestContext" has incompatible type "str"
    await session.set_logging_level("notice")
    await session.set_logging_level("loud")  # E: Argument 1 to "set_logging_level" of "RemoteServer"
"""


def test_mypy_checks_log_levels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_mypy_marks(LOG_LEVELS, tmp_path, monkeypatch)


def server_registration_is_checked() -> None:
    from mcpbind.runtime.session import RequestContext
    from mcpbind.schema import v2025_11_25 as latest
    from mcpbind.server.server import Server

    server = Server("typed", "1")

    @server.on(latest.methods.TOOLS_LIST)
    async def good(params: latest.PaginatedRequestParams, ctx: RequestContext) -> latest.ListToolsResult:
        return latest.ListToolsResult(tools=[])

    @server.on(latest.methods.TOOLS_LIST)  # type: ignore[arg-type]
    async def wrong_result(
        params: latest.PaginatedRequestParams, ctx: RequestContext
    ) -> latest.CallToolResult:
        return latest.CallToolResult(content=[])

    @server.on(latest.methods.TOOLS_LIST)  # type: ignore[arg-type]
    async def wrong_params(
        params: latest.CallToolRequestParams, ctx: RequestContext
    ) -> latest.ListToolsResult:
        return latest.ListToolsResult(tools=[])


@pytest.mark.parametrize("version", VERSIONS)
def test_each_spec_declares_its_run_time_direction(version: str) -> None:
    methods = load(version).methods
    declared = {
        Direction.CLIENT_TO_SERVER: "ToServer",
        Direction.SERVER_TO_CLIENT: "ToClient",
        Direction.BOTH: "Both",
    }
    specs = {
        name: spec for name, spec in vars(methods).items() if isinstance(spec, RequestSpec | NotificationSpec)
    }
    assert len(specs) == len(methods.REQUESTS) + len(methods.NOTIFICATIONS)
    for name, spec in specs.items():
        annotation = " ".join(methods.__annotations__[name].split())
        assert annotation.endswith(f", {declared[spec.direction]}]]"), (name, annotation)


# Every line marked "# E" must be a mypy error, and no other line.
DIRECTIONS = """
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.schema import v2025_11_25 as types
from mcpbind.schema.v2025_11_25 import methods
from mcpbind.server.server import Server
from mcpbind.runtime.session import ClientContext, RequestContext

server = Server("s", "1")
client = Client("c", "1")


@server.on(methods.TOOLS_CALL)
async def call(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
    await ctx.request(methods.ROOTS_LIST, types.RequestParams())
    await ctx.request(methods.PING, types.RequestParams())
    await ctx.list_roots()
    await ctx.notify(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED, types.NotificationParams())
    await ctx.request(methods.TOOLS_LIST, types.PaginatedRequestParams())  # E
    await ctx.notify(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED, types.NotificationParams())  # E
    return types.CallToolResult(content=[])


@server.on(methods.ROOTS_LIST)  # E
async def server_roots(params: types.RequestParams, ctx: RequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[])


@server.on(methods.PING)
async def server_ping(params: types.RequestParams, ctx: RequestContext) -> types.EmptyResult:
    return types.EmptyResult()


@server.on_notification(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)
async def roots_changed(params: types.NotificationParams, ctx: RequestContext) -> None: ...


@server.on_notification(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)  # E
async def server_tools_changed(params: types.NotificationParams, ctx: RequestContext) -> None: ...


@client.on(methods.ROOTS_LIST)
async def roots(params: types.RequestParams, ctx: ClientContext) -> types.ListRootsResult:
    await ctx.request(methods.TOOLS_LIST, types.PaginatedRequestParams())
    await ctx.request(methods.PING, types.RequestParams())
    await ctx.request(methods.ROOTS_LIST, types.RequestParams())  # E
    await ctx.list_roots()  # E
    return types.ListRootsResult(roots=[])


@client.on(methods.ROOTS_LIST)
async def roots_bare_context(params: types.RequestParams, ctx: RequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[])


@client.on(methods.TOOLS_CALL)  # E
async def client_call(params: types.CallToolRequestParams, ctx: ClientContext) -> types.CallToolResult:
    return types.CallToolResult(content=[])


@client.on(methods.PING)
async def client_ping(params: types.RequestParams, ctx: ClientContext) -> types.EmptyResult:
    return types.EmptyResult()


@client.on_notification(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)
async def tools_changed(params: types.NotificationParams, ctx: ClientContext) -> None: ...


@client.on_notification(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)  # E
async def client_roots_changed(params: types.NotificationParams, ctx: ClientContext) -> None: ...


@server.on(methods.TOOLS_LIST)  # E
async def server_with_client_context(
    params: types.PaginatedRequestParams, ctx: ClientContext
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[])


async def use(session: RemoteServer) -> None:
    await session.request(methods.TOOLS_CALL, types.CallToolRequestParams(name="x"))
    await session.request(methods.PING, types.RequestParams())
    await session.notify(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED, types.NotificationParams())
    await session.request(methods.ROOTS_LIST, types.RequestParams())  # E
    await session.request(methods.SAMPLING_CREATE_MESSAGE, types.CreateMessageRequestParams(messages=[], max_tokens=1))  # E
    await session.notify(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED, types.NotificationParams())  # E
"""


def test_mypy_checks_the_direction_of_registrations_and_sends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.harness import source_roots

    roots = source_roots()
    if roots:
        monkeypatch.setenv("MYPYPATH", os.pathsep.join(roots))
    source = tmp_path / "directions.py"
    source.write_text(DIRECTIONS)
    out, err, _ = mypy_strict(source, tmp_path)
    assert "error: Cannot find" not in out, out
    marked = {n for n, line in enumerate(DIRECTIONS.splitlines(), 1) if line.endswith("# E")}
    reported = {int(n) for n in re.findall(r"^[^:\n]*directions\.py:(\d+): error:", out, re.MULTILINE)}
    assert reported == marked, out + err
    assert 'expected "RequestSpec[RequestParams, ListRootsResult, ToServer]"' in out, out


ENCODED = """
from mcpbind import Context, Server, types
from mcpbind.protocol.encoded import Encoded

server = Server("s", "1")
LISTING = Encoded.of(types.ListToolsResult(tools=[]))

@server.on(types.methods.TOOLS_LIST)
async def listing(params: types.PaginatedRequestParams, ctx: Context) -> Encoded[types.ListToolsResult]:
    return LISTING

@server.on(types.methods.TOOLS_CALL)
async def call(params: types.CallToolRequestParams, ctx: Context) -> Encoded[types.CallToolResult]:
    return Encoded(b'{"content":[]}')

@server.on(types.methods.TOOLS_CALL)  # E: incompatible type
async def wrong(params: types.CallToolRequestParams, ctx: Context) -> Encoded[types.ListToolsResult]:
    return LISTING
"""


def test_mypy_accepts_an_encoded_result_only_where_its_type_is_expected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert_mypy_marks(ENCODED, tmp_path, monkeypatch)
