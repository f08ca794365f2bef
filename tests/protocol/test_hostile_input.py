"""Hostile input to the codec and to sessions in memory: JSON nested too deeply for msgspec,
batches that are not JSON, escaped lone surrogates, numbers too long for ``int()``.

msgspec decodes and encodes recursively and raises ``RecursionError`` (not a ``DecodeError``)
past Python's recursion limit, about 1,000 levels less the stack already in use. A message
nested that deeply is answered -32700, naming its id when it can be read; a broken response
fails the request it answers at once. Escaped lone UTF-16 surrogates (``"\\udfff"``) follow the
JSON grammar but are not Unicode text: msgspec rejects them, and so do we, with the id.
The same over stdio: tests/transports/stdio/test_hostile.py; over HTTP:
tests/transports/http/test_http_hostile.py.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
import pytest

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, PARSE_ERROR, McpError
from mcpbind.protocol.salvage import salvage_id
from mcpbind.protocol.wire import Codec, Request, Response, WireError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.pagination import decode_cursor
from mcpbind.server.server import Server
from mcpbind.transports.memory import MemoryTransport, memory_pair

methods = types.methods

SERVER = Codec.for_version("2025-11-25", "server")
CLIENT = Codec.for_version("2025-11-25", "client")
BATCHING_SERVER = Codec.for_version("2025-03-26", "server")

DEPTHS = [1_000, 10_000, 100_000]
SURROGATES = [b'"a\\udfff"', b'"\\ud800"', b'"\\ude00\\ud83d"', b'"\\ud800\\u0041"']


def nested(depth: int, inner: bytes = b"") -> bytes:
    return b"[" * depth + inner + b"]" * depth


def deep_call(ident: int, depth: int) -> bytes:
    arguments = b'{"a":' + nested(depth) + b"}"
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":%s}}' % (
        ident,
        arguments,
    )


def decode_error(codec: Codec, data: bytes) -> WireError:
    """The WireError of both decoding paths (they must agree)."""
    errors = []
    for decode in (codec.decode, codec.decode_typed):
        with pytest.raises(WireError) as info:
            decode(data)
        errors.append(info.value)
    one, two = errors
    assert (one.code, one.id, one.response_id) == (two.code, two.id, two.response_id)
    return one


# -- the codec: nesting (item 14) ---------------------------------------------------------------


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_top_level_array_is_a_parse_error(depth: int) -> None:
    for codec in (SERVER, BATCHING_SERVER, CLIENT):
        error = decode_error(codec, nested(depth))
        assert (error.code, error.id, error.response_id) == (PARSE_ERROR, None, None)
        assert "nested too deeply" in error.message


@pytest.mark.parametrize("depth", DEPTHS)
def test_deep_params_are_a_parse_error_naming_the_request(depth: int) -> None:
    error = decode_error(SERVER, deep_call(7, depth))
    assert (error.code, error.id, error.response_id) == (PARSE_ERROR, 7, None)
    assert error.message == "Parse error: JSON nested too deeply"
    # An id after the deep member is read as well, within the first 16 KiB (SALVAGE_MAX_BYTES).
    late = b'{"jsonrpc":"2.0","method":"ping","params":{"x":' + nested(depth) + b'},"id":"late"}'
    assert decode_error(SERVER, late).id == ("late" if len(late) <= 16 * 1024 else None)


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_result_names_the_request_it_answers(depth: int) -> None:
    for data in (
        b'{"jsonrpc":"2.0","id":5,"result":' + nested(depth) + b"}",
        b'{"jsonrpc":"2.0","result":{"x":' + nested(min(depth, 5_000)) + b'},"id":5}',
        b'{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"x","data":' + nested(depth) + b"}}",
    ):
        error = decode_error(CLIENT, data)
        # Never answered (it is a response); the request it answers can be failed.
        assert (error.code, error.id, error.response_id) == (PARSE_ERROR, None, 5)


def test_a_batch_with_a_deep_member_is_a_parse_error() -> None:
    # Splitting a batch decodes it all: it cannot be split, so it is answered as a whole.
    batch = b"[" + deep_call(1, 2_000) + b',{"jsonrpc":"2.0","id":2,"method":"ping"}]'
    error = decode_error(BATCHING_SERVER, batch)
    assert (error.code, error.id) == (PARSE_ERROR, None)


def test_nesting_past_the_envelope_in_the_second_stage() -> None:
    """The envelope may decode from a shallower stack than the params: the same error then."""
    message = Request(3, "tools/call", msgspec.Raw(b'{"name":"x","arguments":{"a":' + nested(5_000) + b"}}"))
    with pytest.raises(WireError) as info:
        SERVER.request_params(message)
    assert (info.value.code, info.value.id) == (PARSE_ERROR, 3)
    response = Response(4, msgspec.Raw(b'{"content":[],"structuredContent":{"a":' + nested(5_000) + b"}}"))
    with pytest.raises(WireError) as info:
        CLIENT.result(methods.TOOLS_CALL, response)
    assert (info.value.code, info.value.id) == (INTERNAL_ERROR, 4)
    assert "nested too deeply" in info.value.message


# -- the codec: a batch that is not JSON (item 15) -----------------------------------------


@pytest.mark.parametrize("data", [b"[", b"[1,", b" [ ", b'[{"jsonrpc":', b"[{]", b"[1] x"])
def test_a_line_starting_with_a_bracket_that_is_not_json_is_a_parse_error(data: bytes) -> None:
    for codec in (SERVER, BATCHING_SERVER, CLIENT):
        error = decode_error(codec, data)
        assert (error.code, error.id) == (PARSE_ERROR, None)
        assert error.message.startswith("Parse error: ")


# -- the codec: lone surrogates (item 17) ----------------------------------------------------


@pytest.mark.parametrize("string", SURROGATES)
def test_a_lone_surrogate_is_a_parse_error_naming_the_request(string: bytes) -> None:
    for data in (
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"t":%s}}}'
        % string,
        b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"x":%s}}}' % string,
        b'{"jsonrpc":"2.0","id":5,"method":%s}' % string,
        b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":%s},"id":5}' % string,
        b'{"jsonrpc":"2.0","id":5,"method":"ping",%s:1}' % string,
    ):
        error = decode_error(SERVER, data)
        assert (error.code, error.id, error.response_id) == (PARSE_ERROR, 5, None), data


@pytest.mark.parametrize("string", SURROGATES)
def test_a_lone_surrogate_in_a_response_names_the_request_it_answers(string: bytes) -> None:
    for data in (
        b'{"jsonrpc":"2.0","id":"r-1","result":{"content":[{"type":"text","text":%s}]}}' % string,
        b'{"jsonrpc":"2.0","id":"r-1","error":{"code":1,"message":%s}}' % string,
    ):
        error = decode_error(CLIENT, data)
        assert (error.code, error.id, error.response_id) == (PARSE_ERROR, None, "r-1"), data


def test_a_lone_surrogate_in_the_id_leaves_it_unread() -> None:
    error = decode_error(SERVER, b'{"jsonrpc":"2.0","id":"a\\udfff","method":"ping"}')
    assert (error.code, error.id) == (PARSE_ERROR, None)


# -- salvage_id --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "ident", "response"),
    [
        (b'{"jsonrpc":"2.0","id":5,"method":"x"', 5, False),
        (b' \r\n{ "id" : -12 , "result" : [', -12, True),
        (b'{"id":"a\\"b","error":{}}', 'a"b', True),
        (b'{"result":{},"method":"x","id":"m"}', "m", False),  # method and result: a request
        (b'{"x":{"id":1},"y":["id",2],"id":3}', 3, False),  # only a member of the top object
        (b'{"x":"}\\"{","id":4}', 4, False),  # brackets and quotes inside strings
        (b'{"\\u0069d":6}', 6, False),  # an escaped member name
        (b'{"id":1.5}', None, False),
        (b'{"id":true}', None, False),
        (b'{"id":null,"result":1}', None, True),
        (b'{"id":"\xff"}', None, False),  # not UTF-8: not read
        (b'{"id":"\\udfff"}', None, False),
        (b'{"id":' + b"1" * 5_000 + b"}", None, False),  # out of range for an id
        (b'{"id":12', None, False),  # cut off
        (b'{"x":"never ends, "id":1', None, False),
        (b"[5]", None, False),
        (b'"id"', None, False),
        (b"", None, False),
    ],
)
def test_salvage_id(data: bytes, ident: Any, response: bool) -> None:
    assert salvage_id(data) == (ident, response)


def test_salvage_id_reads_a_bounded_prefix() -> None:
    padding = b'"' + b"x" * 20_000 + b'"'
    assert salvage_id(b'{"p":' + padding + b',"id":1}').id is None
    assert salvage_id(b'{"p":' + padding + b',"id":1}', max_bytes=30_000).id == 1
    assert salvage_id(memoryview(b'{"id":2,"result":[')) == (2, True)


# -- a session in memory: a server's answers ------------------------------------------------


def deep_echo_server() -> Server:
    server = Server("deep", "1.0")

    @server.on(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
        # Echoes the arguments (so a result is as deep as what it was sent, and deeper).
        return types.CallToolResult(content=[], structured_content={"echo": params.arguments})

    return server


@asynccontextmanager
async def raw_server(server: Server) -> AsyncIterator[MemoryTransport]:
    server_end, client_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_end)
        try:
            yield client_end
        finally:
            await client_end.aclose()


async def exchange(transport: MemoryTransport, data: bytes) -> dict[str, Any]:
    await transport.send(data)
    with anyio.fail_after(5):
        answer: dict[str, Any] = json.loads(await transport.receive())
    return answer


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "r", "version": "1"},
        },
    }
).encode()
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


@pytest.mark.anyio
async def test_a_server_in_memory_answers_hostile_requests_with_their_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with raw_server(deep_echo_server()) as transport:
        assert "result" in await exchange(transport, INITIALIZE)
        await transport.send(INITIALIZED)
        for depth in DEPTHS:
            answer = await exchange(transport, deep_call(depth, depth))
            assert answer["id"] == depth and answer["error"]["code"] == PARSE_ERROR, answer
            answer = await exchange(transport, nested(depth))
            assert answer["id"] is None and answer["error"]["code"] == PARSE_ERROR, answer
        for line in (b"[", b"[1,"):
            answer = await exchange(transport, line)
            assert answer["id"] is None and answer["error"]["code"] == PARSE_ERROR, answer
        for string in SURROGATES:
            line = b'{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":%s}}' % string
            answer = await exchange(transport, line)
            assert answer["id"] == "s" and answer["error"]["code"] == PARSE_ERROR, answer
        # Arguments that decode but make a result too deep to encode: an error, not silence.
        for depth in (900, 950, 975, 990):
            answer = await exchange(transport, deep_call(depth, depth))
            assert answer["id"] == depth, answer
            assert "result" in answer or answer["error"]["code"] in (PARSE_ERROR, INTERNAL_ERROR), answer
        answer = await exchange(transport, b'{"jsonrpc":"2.0","id":"end","method":"ping"}')
        assert answer == {"jsonrpc": "2.0", "id": "end", "result": {}}
    assert "could not process a received message" not in caplog.text


@pytest.mark.anyio
async def test_a_result_too_deep_to_encode_is_answered_with_an_error() -> None:
    server = Server("deep", "1.0")

    @server.on(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
        value: Any = []
        for _ in range(5_000):
            value = [value]
        return types.CallToolResult(content=[], structured_content={"deep": value})

    async with raw_server(server) as transport:
        assert "result" in await exchange(transport, INITIALIZE)
        await transport.send(INITIALIZED)
        line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}'
        answer = await exchange(transport, line)
        assert answer["id"] == 1 and answer["error"]["code"] == INTERNAL_ERROR, answer
        answer = await exchange(transport, b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
        assert answer == {"jsonrpc": "2.0", "id": 2, "result": {}}


@pytest.mark.anyio
async def test_an_error_whose_data_cannot_be_encoded_is_answered_without_it() -> None:
    """A handler's error echoing the request (nested too deeply) crashed the session."""
    server = Server("deep", "1.0")

    @server.on(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
        data: Any = object()
        if params.name == "deep":
            data = []
            for _ in range(5_000):
                data = [data]
        raise McpError(INVALID_PARAMS, "no good\udfff", {"echo": data})

    async with raw_server(server) as transport:
        assert "result" in await exchange(transport, INITIALIZE)
        await transport.send(INITIALIZED)
        for ident, name in [(1, "deep"), (2, "object")]:
            line = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s"}}' % (
                ident,
                name.encode(),
            )
            answer = await exchange(transport, line)
            assert answer == {
                "jsonrpc": "2.0",
                "id": ident,
                "error": {"code": INVALID_PARAMS, "message": "no good?"},
            }
        answer = await exchange(transport, b'{"jsonrpc":"2.0","id":3,"method":"ping"}')
        assert answer == {"jsonrpc": "2.0", "id": 3, "result": {}}


# -- a session in memory: a client receiving broken responses ---------------------------------


INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "hostile", "version": "0"},
}


@asynccontextmanager
async def hostile_server(answer: Callable[[bytes], bytes]) -> AsyncIterator[RemoteServer]:
    """A client connected to a scripted server that answers each tools/call with
    ``answer(id as JSON)`` and everything else normally."""
    server_end, client_end = memory_pair()

    async def serve() -> None:
        while True:
            try:
                line = await server_end.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
            message = json.loads(line)
            if "id" not in message or "method" not in message:
                continue
            ident = json.dumps(message["id"]).encode()
            if message["method"] == "initialize":
                result: Any = INIT_RESULT
            elif message["method"] == "tools/call":
                await server_end.send(answer(ident))
                continue
            else:
                result = {}
            await server_end.send(
                json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            )

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        with anyio.fail_after(10):
            async with Client("tester", "0").connect(client_end) as session:
                yield session
        tg.cancel_scope.cancel()


BROKEN_RESPONSES: list[tuple[str, Callable[[bytes], bytes]]] = [
    *(
        (
            f"nested {depth}",
            lambda ident, depth=depth: b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (ident, nested(depth)),
        )
        for depth in DEPTHS
    ),
    (
        "nested, id last",
        lambda ident: b'{"jsonrpc":"2.0","result":{"content":%s},"id":%s}' % (nested(2_000), ident),
    ),
    (
        "lone surrogate",
        lambda ident: (
            b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"a\\udfff"}]}}' % ident
        ),
    ),
    (
        "lone surrogate in an error",
        lambda ident: b'{"jsonrpc":"2.0","id":%s,"error":{"code":1,"message":"\\udfff"}}' % ident,
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("what", "answer"), BROKEN_RESPONSES, ids=[what for what, _ in BROKEN_RESPONSES])
async def test_a_client_fails_a_call_at_once_on_a_broken_response(
    what: str, answer: Callable[[bytes], bytes]
) -> None:
    async with hostile_server(answer) as session:
        with anyio.fail_after(5), pytest.raises(McpError) as info:
            # (the bug: the call waited for this timeout)
            await session.call_tool("anything", {}, timeout=60)
        assert info.value.code == INTERNAL_ERROR
        assert info.value.message.startswith("Invalid response: Parse error: "), info.value.message
        await session.ping(timeout=5)


# -- int() of peer input (item 16's class of bug) -------------------------------------------------


def cursor(text: bytes) -> str:
    return base64.urlsafe_b64encode(text).decode().rstrip("=")


@pytest.mark.parametrize("digits", [b"1" * 5_000, b"9" * 19, "²".encode()])
def test_a_cursor_with_too_many_digits_is_invalid_params(digits: bytes) -> None:
    with pytest.raises(McpError) as info:
        decode_cursor(cursor(b"o:" + digits))
    assert info.value.code == INVALID_PARAMS


@pytest.mark.anyio
async def test_a_server_answers_a_hostile_cursor_with_invalid_params() -> None:
    server = Server("paged", "1.0", page_size=1)

    @server.tool()
    async def one() -> str:
        return "1"

    @server.tool()
    async def two() -> str:
        return "2"

    async with raw_server(server) as transport:
        assert "result" in await exchange(transport, INITIALIZE)
        await transport.send(INITIALIZED)
        hostile = cursor(b"o:" + b"1" * 5_000)
        line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": hostile}})
        answer = await exchange(transport, line.encode())
        assert answer["id"] == 1 and answer["error"]["code"] == INVALID_PARAMS, answer
