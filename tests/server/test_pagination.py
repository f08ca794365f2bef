"""Opaque cursors on the server side, walking every page on the client side."""

from __future__ import annotations

import anyio
import pytest
from msgspec import UNSET

from mcpbind.client.client import Client
from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.pagination import decode_cursor, encode_cursor, paginate
from mcpbind.server.server import Server
from mcpbind.transports.memory import memory_pair

methods = types.methods


def test_pages_and_cursors() -> None:
    items = list(range(25))
    first = paginate(items, None, page_size=10)
    assert first.items == list(range(10))
    assert isinstance(first.next_cursor, str)
    second = paginate(items, first.next_cursor, page_size=10)
    assert second.items == list(range(10, 20))
    assert isinstance(second.next_cursor, str)
    last = paginate(items, second.next_cursor, page_size=10)
    assert last.items == list(range(20, 25)) and last.next_cursor is UNSET
    assert paginate([], UNSET).items == [] and paginate([], None).next_cursor is UNSET
    assert decode_cursor(encode_cursor(1234)) == 1234


@pytest.mark.parametrize("cursor", ["", "not base64!", "eDoxMA", encode_cursor(26), "bzotMQ"])
def test_an_invalid_cursor_is_invalid_params(cursor: str) -> None:
    with pytest.raises(McpError) as info:
        paginate(list(range(25)), cursor, page_size=10)
    assert info.value.code == INVALID_PARAMS and "Invalid cursor" in info.value.message


@pytest.mark.anyio
async def test_the_client_walks_every_page_and_a_bad_cursor_gets_minus_32602() -> None:
    tools = [types.Tool(name=f"t{i}", input_schema={"type": "object"}) for i in range(23)]
    server = Server("paged", "1")

    @server.on(methods.TOOLS_LIST)
    async def list_tools(params: types.PaginatedRequestParams, ctx: RequestContext) -> types.ListToolsResult:
        page = paginate(tools, params.cursor, page_size=5)
        return types.ListToolsResult(tools=page.items, next_cursor=page.next_cursor)

    server_end, client_end = memory_pair()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run, server_end)
            async with Client("c", "1").connect(client_end) as session:
                assert [t.name for t in await session.all_tools()] == [f"t{i}" for i in range(23)]
                first = await session.list_tools()
                assert len(first.tools) == 5 and isinstance(first.next_cursor, str)
                with pytest.raises(McpError) as info:
                    await session.list_tools(cursor="garbage")
                assert info.value.code == INVALID_PARAMS
