"""Hostile input over real stdio pipes (see tests/test_hostile_input.py for the codec): JSON
nested too deeply for msgspec, lines starting with ``[`` that are not JSON, escaped lone
surrogates. A server answers each -32700, with the id when it can be read, writes no
traceback and goes on; a client fails the call a broken response answers at once.

Servers are child processes on both backends (``server_backend``); this side runs on both too.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.errors import INTERNAL_ERROR, PARSE_ERROR, McpError
from tests.transports.stdio.children import ECHO_SERVER, ROOT, TEST_TIMEOUT, child_env, raw_server

pytestmark = pytest.mark.anyio

HOSTILE_SERVER = ROOT / "tests" / "peers" / "hostile_server.py"
DEPTHS = [1_000, 10_000, 100_000]


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def deep_call(ident: int, depth: int) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%s}}}'
        % (ident, nested(depth))
    )


async def test_deep_nesting_gets_a_parse_error_with_the_id(server_backend: str, tmp_path: Path) -> None:
    """Item 14: no answer and a traceback per line before."""
    stderr = tmp_path / "stderr"
    async with raw_server(ECHO_SERVER, "--backend", server_backend, stderr_path=stderr) as raw:
        await raw.initialize()
        for depth in DEPTHS:
            answer = await raw.error_for(deep_call(depth, depth))
            assert (answer["id"], answer["error"]["code"]) == (depth, PARSE_ERROR), answer
            assert "nested too deeply" in answer["error"]["message"]
            answer = await raw.error_for(nested(depth))
            assert (answer["id"], answer["error"]["code"]) == (None, PARSE_ERROR), answer
        [answer] = await raw.exchange(deep_call(1, 10), answers=1)  # shallow: the tool's own error
        assert answer["id"] == 1 and "must be a string" in answer["error"]["message"]
    assert "Traceback" not in stderr.read_text()


@pytest.mark.parametrize("line", [b"[", b"[1,", b' [{"jsonrpc":"2.0"', b"[]]"])
async def test_a_line_starting_with_a_bracket_that_is_not_json(
    server_backend: str, tmp_path: Path, line: bytes
) -> None:
    """Item 15: DecodeError out of the batch path before: no answer, a traceback."""
    stderr = tmp_path / "stderr"
    async with raw_server(ECHO_SERVER, "--backend", server_backend, stderr_path=stderr) as raw:
        await raw.initialize()
        answer = await raw.error_for(line)
        assert (answer["id"], answer["error"]["code"]) == (None, PARSE_ERROR), answer
    assert "Traceback" not in stderr.read_text()


async def test_a_lone_surrogate_gets_a_parse_error_with_the_id(server_backend: str) -> None:
    """Item 17: -32700 with a null id before, so the caller waited for its timeout."""
    async with raw_server(ECHO_SERVER, "--backend", server_backend) as raw:
        await raw.initialize()
        for ident, line in [
            (
                1,
                b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\\udfff"}}}',
            ),
            ("two", b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"\\ud800"},"id":"two"}'),
            (3, b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":{"k":"\\udc00\\ud800"}}}'),
        ]:
            answer = await raw.error_for(line)
            assert (answer["id"], answer["error"]["code"]) == (ident, PARSE_ERROR), answer
        # A lone surrogate inside the id itself: that id cannot be read.
        answer = await raw.error_for(b'{"jsonrpc":"2.0","id":"\\udfff","method":"ping"}')
        assert (answer["id"], answer["error"]["code"]) == (None, PARSE_ERROR), answer
        [answer] = await raw.exchange(b'{"jsonrpc":"2.0","id":4,"method":"tools/list"}', answers=1)
        assert answer["id"] == 4 and "result" in answer


@pytest.mark.parametrize(
    "mode", [*(f"deep-{depth}" for depth in DEPTHS), "deep-id-last", "surrogate", "surrogate-error"]
)
async def test_a_client_fails_the_call_a_broken_response_answers_at_once(mode: str) -> None:
    """Items 14 and 17, the client's side: the call waited for its timeout before."""
    with anyio.fail_after(TEST_TIMEOUT):
        async with Client("hostile", "0").connect_stdio(
            sys.executable, [str(HOSTILE_SERVER), mode], env=child_env(), timeout=5
        ) as session:
            with anyio.fail_after(5), pytest.raises(McpError) as info:
                await session.call_tool("anything", {}, timeout=60)
            assert info.value.code == INTERNAL_ERROR
            assert info.value.message.startswith("Invalid response: Parse error: "), info.value.message
            await session.ping(timeout=5)
