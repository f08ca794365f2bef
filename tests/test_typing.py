"""The generated handler protocols and method specs hold up under mypy --strict.

The classes below are checked by `nox -s typecheck` (warn_unused_ignores is on, so every
``type: ignore`` here must mark a real error); the test at the end runs mypy on a wrong handler
and checks that it is rejected with a message a user can act on.
"""

from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import assert_type

from mcpbind.methods import RequestSpec
from mcpbind.schema.v2025_06_18 import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsRequestParams,
    ListToolsResult,
    TextContent,
    methods,
)
from mcpbind.schema.v2025_06_18.stubs import HandlesToolsCall, HandlesToolsList


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
    assert_type(spec, RequestSpec[CallToolRequestParams, CallToolResult])
    assert_type(spec.decode_params(raw), CallToolRequestParams)
    assert_type(spec.decode_result(raw), CallToolResult)
    wrong: RequestSpec[ListToolsRequestParams, Any] = methods.TOOLS_CALL  # type: ignore[assignment]
    del wrong


@pytest.mark.anyio
async def test_a_typed_handler_runs() -> None:
    tools = Tools()
    params = methods.TOOLS_CALL.decode_params(b'{"name":"echo"}')
    result = await tools.on_tools_call(params, Context())
    assert result.content == [TextContent(text="echo")]


WRONG_HANDLER = """
from mcpbind.schema.v2025_06_18 import CallToolRequestParams, ListToolsResult
from mcpbind.schema.v2025_06_18.stubs import HandlesToolsCall

class Server(HandlesToolsCall[object]):
    async def on_tools_call(self, params: CallToolRequestParams, ctx: object, /) -> ListToolsResult:
        return ListToolsResult(tools=[])
"""


@pytest.mark.skipif(shutil.which("mypy") is None, reason="mypy is not installed")
def test_mypy_rejects_a_wrong_handler_signature(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mypy import api

    from tests.harness import source_roots

    # A source checkout has two roots (runtime/, generated/); an installed wheel needs nothing.
    roots = source_roots()
    if roots:
        monkeypatch.setenv("MYPYPATH", os.pathsep.join(roots))

    source = tmp_path / "wrong_handler.py"
    source.write_text(textwrap.dedent(WRONG_HANDLER))
    out, err, status = api.run(["--strict", "--no-incremental", "--config-file", "", str(source)])
    assert status == 1, out + err
    assert "error: Cannot find" not in out, out
    assert 'Return type "Coroutine[Any, Any, ListToolsResult]" of "on_tools_call" incompatible' in out
    assert "CallToolResult" in out


def server_registration_is_checked() -> None:
    from mcpbind.schema import v2025_11_25 as latest
    from mcpbind.server import Server
    from mcpbind.session import RequestContext

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
