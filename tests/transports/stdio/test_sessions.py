"""Sessions over real stdio pipes: bad input, cancellation races, peers that crash or vanish.

The server side is a child process (examples/echo_server.py, or tests/peers/session_server.py
where a test needs a slow or crashing tool or a small message limit) on both backends
(``server_backend``); this side talks to it on both backends too (``anyio_backend``), either
raw (``spawn_stdio_server`` as a line transport, bytes written by hand) or through
:class:`mcpbind.client.client.Client`. Every wait is bounded. The servers and the raw line
helpers are in children.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.errors import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_TIMEOUT,
    McpError,
)
from mcpbind.schema import v2025_11_25 as types
from mcpbind.transports.stdio import StdioClientTransport, spawn_stdio_server
from tests.transports.stdio.children import (
    ECHO_SERVER,
    INITIALIZE,
    REPLY_TIMEOUT,
    SCRIPTED_SERVER,
    SESSION_SERVER,
    TEST_TIMEOUT,
    Raw,
    call,
    cancelled,
    child_env,
    marks,
    raw_server,
    request,
    wait_for_mark,
)

pytestmark = pytest.mark.anyio


# --------------------------------------------------------------------------------------------
# Bad input to examples/echo_server.py
# --------------------------------------------------------------------------------------------

# (what, line, code, id of the error response, text its message contains). The id is None when
# the request's id cannot be read; a tuple lists the acceptable ids where JSON-RPC leaves room
# (a parse error may name an id that is still readable, or say null).
ERRORS: list[tuple[str, bytes, int, object, str]] = [
    # Not JSON, but the id can still be read: the error names it, so the caller need not wait.
    ("truncated JSON", b'{"jsonrpc":"2.0","id":1,"method":"ping"', PARSE_ERROR, 1, "Parse error"),
    ("not JSON", b"hello there", PARSE_ERROR, None, "Parse error"),
    ("trailing junk", b'{"jsonrpc":"2.0","id":1,"method":"ping"} junk', PARSE_ERROR, 1, "Parse error"),
    ("whitespace only", b" \t ", PARSE_ERROR, None, "Parse error"),
    ("invalid UTF-8 bytes", b"\xff\xfe\xfd", PARSE_ERROR, None, "Parse error"),
    (
        "invalid UTF-8 in the method",
        b'{"jsonrpc":"2.0","id":1,"method":"pi\xffng"}',
        PARSE_ERROR,
        (None, 1),
        "",
    ),
    ("binary garbage", bytes(b for b in range(256) if b != 10) * 4, PARSE_ERROR, None, "Parse error"),
    ("wrong jsonrpc", b'{"jsonrpc":"1.0","id":2,"method":"ping"}', INVALID_REQUEST, 2, "jsonrpc"),
    ("no jsonrpc", b'{"id":3,"method":"ping"}', INVALID_REQUEST, 3, "jsonrpc"),
    ("a JSON string", b'"ping"', INVALID_REQUEST, None, "Invalid request"),
    ("a JSON number", b"42", INVALID_REQUEST, None, "Invalid request"),
    (
        "a batch (2025-11-25 has none)",
        b'[{"jsonrpc":"2.0","id":4,"method":"ping"}]',
        INVALID_REQUEST,
        None,
        "batch",
    ),
    ("null id", b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, None, "id"),
    ("float id", b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST, None, "$.id"),
    ("boolean id", b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, None, "$.id"),
    ("no method, result or error", b'{"jsonrpc":"2.0","id":6}', INVALID_REQUEST, 6, "method"),
    ("unknown method", request(7, "no/such/method"), METHOD_NOT_FOUND, 7, "no/such/method"),
    ("a server-to-client method", request(8, "sampling/createMessage", {}), METHOD_NOT_FOUND, 8, ""),
    ("invalid params", request(9, "tools/call", {"name": 5}), INVALID_PARAMS, 9, "`params.name`"),
    (
        "invalid nested params",
        request(10, "tools/call", {"name": "echo", "arguments": [1]}),
        INVALID_PARAMS,
        10,
        "`params.arguments`",
    ),
    ("missing params", request(11, "tools/call"), INVALID_PARAMS, 11, "`params`"),
    ("params not an object", request(12, "tools/list", [1]), INVALID_PARAMS, 12, "object"),
    ("a second initialize", INITIALIZE.replace(b'"init"', b"13"), INVALID_REQUEST, 13, "initialized"),
    ("the handler's own error", call(14, "echo", text=5), INVALID_PARAMS, 14, "'text'"),
    ("unknown tool", call("fifteen", "nope"), INVALID_PARAMS, "fifteen", "Unknown tool"),
]

# Messages that get no answer at all.
SILENT: list[tuple[str, bytes]] = [
    ("a response with an unknown id", b'{"jsonrpc":"2.0","id":999,"result":{}}'),
    ("a response with an unknown string id", b'{"jsonrpc":"2.0","id":"who","result":{"x":1}}'),
    ("an error response with an unknown id", b'{"jsonrpc":"2.0","id":998,"error":{"code":1,"message":"x"}}'),
    (
        "an error response with a null id",
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
    ),
    ("an error response without an id", b'{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}'),
    ("an unknown notification", b'{"jsonrpc":"2.0","method":"notifications/whatever"}'),
    (
        "a notification with invalid params",
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}',
    ),
    ("a cancellation for an unknown id", cancelled(12345)),
    (
        "a progress notification for nothing",
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}',
    ),
    ("a lone carriage return", b"\r"),
]


async def test_bad_input_gets_the_right_error_and_the_server_goes_on(server_backend: str) -> None:
    async with raw_server(ECHO_SERVER, "--backend", server_backend) as raw:
        await raw.initialize()
        for what, line, code, ident, text in ERRORS:
            answer = await raw.error_for(line)
            assert answer["error"]["code"] == code, (what, answer)
            acceptable = ident if isinstance(ident, tuple) else (ident,)
            assert answer["id"] in acceptable, (what, answer)
            assert text in answer["error"]["message"], (what, answer)
        for what, line in SILENT:
            assert await raw.exchange(line) == [], what
        # Everything still works.
        [answer] = await raw.exchange(call(100, "echo", text="still here"), answers=1)
        assert answer == {
            "jsonrpc": "2.0",
            "id": 100,
            "result": {"content": [{"type": "text", "text": "still here"}]},
        }
        # Bad input interleaved with good, written back to back: each gets its own answer.
        lines = [call(200 + i, "echo", text=str(i)) if i % 2 else b"{oops" for i in range(20)]
        answers = await raw.exchange(*lines, answers=20)
        assert sorted(a["id"] for a in answers if a["id"] is not None) == list(range(201, 220, 2))
        assert [a["error"]["code"] for a in answers if a["id"] is None] == [PARSE_ERROR] * 10


async def test_before_initialize(server_backend: str) -> None:
    async with raw_server(ECHO_SERVER, "--backend", server_backend) as raw:
        # ping is fine before initialize; other requests are not.
        assert await raw.exchange() == []
        answer = await raw.error_for(request(1, "tools/list"))
        assert answer["id"] == 1
        assert answer["error"]["code"] == INVALID_REQUEST
        assert "before initialization" in answer["error"]["message"]
        answer = await raw.error_for(b"{nope")
        assert answer["error"]["code"] == PARSE_ERROR
        # Then initialize goes through as usual.
        result = (await raw.initialize())["result"]
        assert result["protocolVersion"] == "2025-11-25"
        assert result["serverInfo"]["name"] == "mcpbind-echo"
        [answer] = await raw.exchange(request(2, "tools/list"), answers=1)
        assert [tool["name"] for tool in answer["result"]["tools"]] == ["echo"]


async def test_oversized_message_with_a_small_limit(server_backend: str) -> None:
    limit = 1000
    async with raw_server(
        SESSION_SERVER, "--backend", server_backend, "--max-message-size", str(limit)
    ) as raw:
        await raw.initialize()

        def padded_ping(ident: int, size: int) -> bytes:
            head = b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"_meta":{"pad":"' % ident
            tail = b'"}}}'
            return head + b"x" * (size - len(head) - len(tail)) + tail

        # Exactly at the limit: accepted.
        at_limit = padded_ping(1, limit)
        assert len(at_limit) == limit
        assert await raw.exchange(at_limit, answers=1) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
        # One byte over: one INVALID_REQUEST with a null id (the id was never read), and on.
        for size in (limit + 1, 5000, 1_000_000):
            answer = await raw.error_for(padded_ping(2, size))
            assert answer["id"] is None
            assert answer["error"]["code"] == INVALID_REQUEST
            assert str(limit) in answer["error"]["message"]
        [answer] = await raw.exchange(call(3, "echo", text="after"), answers=1)
        assert answer["result"]["content"][0]["text"] == "after"


async def test_oversized_message_with_the_default_limit(server_backend: str) -> None:
    """examples/echo_server.py has no flag for the limit: go over the default 16 MiB."""
    from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE

    async with raw_server(ECHO_SERVER, "--backend", server_backend) as raw:
        await raw.initialize()
        huge = call(1, "echo", text="x" * DEFAULT_MAX_MESSAGE_SIZE)
        answer = await raw.error_for(huge)
        assert answer["id"] is None
        assert answer["error"]["code"] == INVALID_REQUEST
        [answer] = await raw.exchange(call(2, "echo", text="after"), answers=1)
        assert answer["id"] == 2


# Invalid UTF-8 hidden inside a member the codec decodes as a string, or one it skips unread:
# regression tests (msgspec raised DecodeError at the typed-params stage, which killed the
# session; a skipped member was never checked).


async def test_invalid_utf8_inside_request_params(server_backend: str) -> None:
    async with raw_server(ECHO_SERVER, "--backend", server_backend) as raw:
        await raw.initialize()
        line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\xff"}}}'
        answer = await raw.error_for(line)
        # Not JSON, so a parse error; naming the request in an INVALID_PARAMS would do too.
        assert answer["error"]["code"] in (PARSE_ERROR, INVALID_PARAMS)


async def test_invalid_utf8_inside_a_known_requests_string_param(server_backend: str) -> None:
    async with raw_server(ECHO_SERVER, "--backend", server_backend) as raw:
        await raw.initialize()
        answer = await raw.error_for(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"\xc3("}}'
        )
        assert answer["error"]["code"] in (PARSE_ERROR, INVALID_PARAMS)


async def test_invalid_utf8_inside_notification_params(server_backend: str) -> None:
    async with raw_server(ECHO_SERVER, "--backend", server_backend) as raw:
        await raw.initialize()
        line = (
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"\xff"}}'
        )
        # Not JSON, so the server cannot know it is a notification: either no answer or a
        # parse error with a null id will do; it must simply go on.
        answers = await raw.exchange(line, answers=None)
        assert len(answers) <= 1, answers
        assert all(a["id"] is None and a["error"]["code"] == PARSE_ERROR for a in answers), answers


async def test_invalid_utf8_inside_an_ignored_member(server_backend: str) -> None:
    async with raw_server(ECHO_SERVER, "--backend", server_backend) as raw:
        await raw.initialize()
        answer = await raw.error_for(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff"}}')
        assert answer["error"]["code"] == PARSE_ERROR


# JSON-RPC 2.0: an id that could not be read is answered as null, never as a guess.
async def test_invalid_utf8_inside_the_id(server_backend: str) -> None:
    async with raw_server(ECHO_SERVER, "--backend", server_backend) as raw:
        await raw.initialize()
        for line in (
            b'{"jsonrpc":"2.0","id":"\xc3","method":"ping"}',
            b'{"jsonrpc":"2.0","id":"a\xffb","method":"tools/list"}',
        ):
            answer = await raw.error_for(line)
            assert answer["error"]["code"] == PARSE_ERROR
            assert answer["id"] is None, answer


async def test_a_message_with_method_and_result_is_invalid(server_backend: str) -> None:
    """Regression: the one-pass decoder used to skip a ``result`` next to ``method``."""
    async with raw_server(ECHO_SERVER, "--backend", server_backend) as raw:
        await raw.initialize()
        answer = await raw.error_for(b'{"jsonrpc":"2.0","id":5,"method":"ping","result":{}}')
        assert answer["id"] == 5
        assert answer["error"]["code"] == INVALID_REQUEST


# --------------------------------------------------------------------------------------------
# A client that does not read
# --------------------------------------------------------------------------------------------


async def test_a_client_that_does_not_read_holds_back_no_broadcast(
    server_backend: str, tmp_path: Path
) -> None:
    """The client subscribes, asks the server to tell it of a change 300 times (2.4 MB) and
    reads nothing meanwhile: the handler goes through them all at once (before, it waited for
    the client to read, for good), the server keeping no more than its bound for the client
    (the oldest are dropped); once the client reads it gets the first ones, the newest ones
    in order, and the answer (which may come before the last ones), and the session goes on."""
    marker = tmp_path / "marks"
    uri = "note://board?" + "n" * 8000
    times = 300
    async with raw_server(SESSION_SERVER, "--backend", server_backend, "--marker", str(marker)) as raw:
        await raw.initialize()
        for ident, watched in enumerate((uri, "note://done"), 1):
            subscribe = request(ident, "resources/subscribe", {"uri": watched})
            assert await raw.exchange(subscribe, answers=1) == [{"jsonrpc": "2.0", "id": ident, "result": {}}]
        await raw.send(call(3, "note", uri=uri, times=times))
        await wait_for_mark(marker, "noted 3")  # with nothing read
        got: list[dict[str, Any]] = []
        while not (
            any(m.get("id") == 3 for m in got)
            and any(m.get("params", {}).get("uri") == "note://done" for m in got)
        ):
            got.append(await raw.receive())
        answers = [m for m in got if "id" in m]
        notes = [m["params"]["uri"] for m in got if m.get("method") == "notifications/resources/updated"]
        assert answers == [
            {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": f"noted {times}"}]}}
        ]
        assert len(notes) == len(got) - 1 and notes[-1] == "note://done"
        assert 0 < len(notes) - 1 < times and set(notes[:-1]) == {uri}  # the pipe's worth and 1 MiB
        assert await raw.exchange() == []


# --------------------------------------------------------------------------------------------
# Cancellation races over stdio
# --------------------------------------------------------------------------------------------


async def test_cancel_before_the_request_is_ignored(server_backend: str, tmp_path: Path) -> None:
    marker = tmp_path / "marks"
    async with raw_server(SESSION_SERVER, "--backend", server_backend, "--marker", str(marker)) as raw:
        await raw.initialize()
        # The cancellation names an id not yet in use: ignored, and not remembered for later.
        answers = await raw.exchange(cancelled(1), call(1, "slow", seconds=0.05), answers=1)
        assert answers == [
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "slept"}]}}
        ]
        assert marks(marker) == ["started 1", "finished 1"]


async def test_cancel_during_the_handler(server_backend: str, tmp_path: Path) -> None:
    marker = tmp_path / "marks"
    async with raw_server(SESSION_SERVER, "--backend", server_backend, "--marker", str(marker)) as raw:
        await raw.initialize()
        assert await raw.exchange(call(1, "slow", seconds=30)) == []
        await wait_for_mark(marker, "started 1")
        # No answer to the cancelled request, ever (a spurious one would show up in an exchange).
        assert await raw.exchange(cancelled(1)) == []
        await wait_for_mark(marker, "cancelled 1")
        assert await raw.exchange(cancelled(1)) == []  # again: nothing
        # The id is free again: nothing of the cancelled request was left behind.
        [answer] = await raw.exchange(call(1, "slow", seconds=0), answers=1)
        assert answer["id"] == 1 and answer["result"]["content"][0]["text"] == "slept"
        assert marks(marker) == ["started 1", "cancelled 1", "started 1", "finished 1"]


async def test_cancel_right_behind_the_request(server_backend: str, tmp_path: Path) -> None:
    """Each request and its cancellation written back to back, so the cancellation often arrives
    before the handler has started: no answer, no handler left running or counted as pending."""
    marker = tmp_path / "marks"
    pending = 16
    async with raw_server(
        SESSION_SERVER, "--backend", server_backend, "--max-pending", str(pending), "--marker", str(marker)
    ) as raw:
        await raw.initialize()

        async def until_every_started_handler_is_cancelled() -> None:
            with anyio.fail_after(REPLY_TIMEOUT):
                while True:
                    seen = marks(marker)
                    started = sorted(line for line in seen if line.startswith("started"))
                    stopped = sorted(
                        line.replace("cancelled", "started") for line in seen if line.startswith("cancelled")
                    )
                    if started == stopped:
                        break
                    await anyio.sleep(0.01)
            # A cancelled handler stays pending until its task has run its cancellation, a few
            # scheduler ticks after its mark: a ping's round trip gives the server those.
            assert await raw.exchange() == []

        # Five rounds of 8: far more cancelled requests than the server lets be pending at once,
        # so one left behind as pending would show as a "too many requests" error below.
        for round in range(5):
            ids = range(100 + 10 * round, 108 + 10 * round)
            lines = [line for i in ids for line in (call(i, "slow", seconds=30), cancelled(i))]
            assert await raw.exchange(*lines) == []
            await until_every_started_handler_is_cancelled()
        # Every handler that started was cancelled; none finished.
        assert not any(line.startswith("finished") for line in marks(marker))
        # As many requests as may be pending, all at once: all answered.
        ids = range(1000, 1000 + pending)
        answers = await raw.exchange(*(call(i, "slow", seconds=0.1) for i in ids), answers=pending)
        assert sorted(answer["id"] for answer in answers) == list(ids)
        assert all(answer["result"]["content"][0]["text"] == "slept" for answer in answers), answers


async def test_reusing_the_id_of_a_just_cancelled_request(server_backend: str) -> None:
    """Regression: a cancelled handler's cleanup used to remove the in-flight entry of a new
    request that reused its id (which MCP forbids, but JSON-RPC allows once the first request
    is done), and the new request was never answered."""
    with anyio.fail_after(TEST_TIMEOUT):
        process = await anyio.open_process(
            [sys.executable, str(SESSION_SERVER), "--backend", server_backend],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **child_env()},
        )
        transport = StdioClientTransport(process)
        try:
            raw = Raw(transport)  # the child's start counts here: a loaded machine takes seconds
            await raw.initialize()
            raw.reply_timeout = 2.0  # the new request 7 is answered 0.3 s after it arrives, or never
            assert process.stdin is not None
            # One write, so the server reads all three lines at once: request 7, its
            # cancellation, and a new request 7 (the first one is no longer in flight), slow
            # enough that the first one's cleanup has run when it answers.
            burst = [call(7, "slow", seconds=30), cancelled(7), call(7, "slow", seconds=0.3)]
            await process.stdin.send(b"".join(line + b"\n" for line in burst))
            answers = await raw.exchange(answers=1)
            assert answers == [
                {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "slept"}]}}
            ]
        finally:
            await transport.aclose()


async def test_cancel_after_the_response(server_backend: str, tmp_path: Path) -> None:
    marker = tmp_path / "marks"
    async with raw_server(SESSION_SERVER, "--backend", server_backend, "--marker", str(marker)) as raw:
        await raw.initialize()
        [answer] = await raw.exchange(call(1, "slow", seconds=0), answers=1)
        assert answer["id"] == 1 and "result" in answer
        # Too late: nothing to cancel, nothing sent back.
        assert await raw.exchange(cancelled(1), cancelled(1)) == []
        [answer] = await raw.exchange(call(1, "echo", text="reused"), answers=1)
        assert answer["result"]["content"][0]["text"] == "reused"
        assert marks(marker) == ["started 1", "finished 1"]


async def test_client_timeouts_racing_responses(server_backend: str) -> None:
    """Our client times out just as the server answers: either outcome, never a hang, and a
    late response is dropped quietly."""
    client = Client("race", "0")
    with anyio.fail_after(TEST_TIMEOUT):
        async with client.connect_stdio(
            sys.executable, [str(SESSION_SERVER), "--backend", server_backend], env=child_env()
        ) as session:
            outcomes = {"result": 0, "timeout": 0}
            for _ in range(30):
                try:
                    result = await session.call_tool("slow", {"seconds": 0.02}, timeout=0.02)
                except McpError as exc:
                    assert exc.code == REQUEST_TIMEOUT
                    outcomes["timeout"] += 1
                else:
                    assert isinstance(result.content[0], types.TextContent)
                    assert result.content[0].text == "slept"
                    outcomes["result"] += 1
            assert sum(outcomes.values()) == 30
            await session.ping(timeout=REPLY_TIMEOUT)
            result = await session.call_tool("echo", {"text": "fine"}, timeout=REPLY_TIMEOUT)
            assert isinstance(result.content[0], types.TextContent)
            assert result.content[0].text == "fine"


# --------------------------------------------------------------------------------------------
# A server that crashes, a client that vanishes
# --------------------------------------------------------------------------------------------


async def test_server_crash_fails_pending_calls_promptly(server_backend: str) -> None:
    client = Client("crash", "0")
    with anyio.fail_after(TEST_TIMEOUT):
        async with client.connect_stdio(
            sys.executable, [str(SESSION_SERVER), "--backend", server_backend], env=child_env()
        ) as session:
            transport = session.session.transport
            assert isinstance(transport, StdioClientTransport)
            slow_error: list[McpError] = []

            async def slow_call() -> None:
                with pytest.raises(McpError) as info:
                    await session.call_tool("slow", {"seconds": 30})
                slow_error.append(info.value)

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow_call)
                await session.ping()
                started = anyio.current_time()
                with anyio.fail_after(REPLY_TIMEOUT), pytest.raises(McpError) as info:
                    await session.call_tool("crash")
                assert info.value.code == CONNECTION_CLOSED
            # Both pending calls failed, at once (not after the slow call's 30 s), with CONNECTION_CLOSED.
            assert anyio.current_time() - started < 10.0
            assert [error.code for error in slow_error] == [CONNECTION_CLOSED]
            # The session knows it is closed: new requests fail at once.
            assert session.session.closed
            with pytest.raises(McpError) as info:
                await session.ping()
            assert info.value.code == CONNECTION_CLOSED
    assert transport.returncode == 1


async def test_client_closing_stdin_mid_call_ends_the_server(server_backend: str, tmp_path: Path) -> None:
    marker = tmp_path / "marks"
    stderr = tmp_path / "stderr"
    async with raw_server(
        SESSION_SERVER,
        "--backend",
        server_backend,
        "--marker",
        str(marker),
        "--grace",
        "0.5",
        stderr_path=stderr,
        close_timeout=10,
    ) as raw:
        await raw.initialize()
        assert await raw.exchange(call(1, "slow", seconds=30), call(2, "slow", seconds=30)) == []
        await wait_for_mark(marker, "started 2")
        closing = anyio.current_time()
    # close_timeout is 10 s: had the server not exited on its own (the running calls cancelled
    # once its grace period of 0.5 s after the end of input was over), it would have been
    # signalled.
    assert anyio.current_time() - closing < 0.5 + 5.0
    assert raw.transport.returncode == 0
    assert sorted(marks(marker)) == ["cancelled 1", "cancelled 2", "started 1", "started 2"]
    assert "Traceback" not in stderr.read_text()


async def test_client_vanishing_ends_the_server(server_backend: str, tmp_path: Path) -> None:
    """Both pipe ends dropped at once, stdout first, while a call runs (as when the client is
    killed): the server gets EOF, its answer has nowhere to go, and it exits 0 by itself, at
    once rather than after its grace period (nobody would read the answers)."""
    marker = tmp_path / "marks"
    stderr = tmp_path / "stderr"
    with anyio.fail_after(TEST_TIMEOUT), stderr.open("w") as errors:
        # Pipes of our own (on POSIX), so that closing our ends really closes them (anyio's
        # asyncio process streams do not close the descriptor).
        async with spawn_stdio_server(
            sys.executable,
            [str(SESSION_SERVER), "--backend", server_backend, "--marker", str(marker), "--grace", "10"],
            env=child_env(),
            stderr=errors,
            close_timeout=10,
        ) as transport:
            raw = Raw(transport)
            await raw.initialize()
            # One call that ends while nobody is reading, one still running at EOF.
            await raw.send(call(1, "slow", seconds=0.2), call(2, "slow", seconds=30))
            await wait_for_mark(marker, "started 2")
            await transport._receive_stream.aclose()
            await wait_for_mark(marker, "finished 1")  # and its answer meets a closed pipe
            await transport._send_stream.aclose()
            closing = anyio.current_time()
            with anyio.fail_after(REPLY_TIMEOUT):
                returncode = await transport.process.wait()
            assert anyio.current_time() - closing < 5.0  # (not the 10 s grace period)
            assert returncode == 0
    seen = marks(marker)
    assert sorted(seen) == ["cancelled 2", "finished 1", "started 1", "started 2"]
    assert seen.index("finished 1") < seen.index("cancelled 2")
    assert "Traceback" not in stderr.read_text()


# --------------------------------------------------------------------------------------------
# Our client against a server that answers badly
# --------------------------------------------------------------------------------------------


@asynccontextmanager
async def scripted(mode: str) -> AsyncIterator[Any]:
    with anyio.fail_after(TEST_TIMEOUT):
        async with Client("scripted", "0").connect_stdio(
            sys.executable, [str(SCRIPTED_SERVER), mode], env=child_env(), timeout=REPLY_TIMEOUT
        ) as session:
            yield session


async def test_client_skips_garbage_from_the_server() -> None:
    async with scripted("garbage-first") as session:
        result = await session.call_tool("anything", {}, timeout=REPLY_TIMEOUT)
        assert isinstance(result.content[0], types.TextContent)
        assert result.content[0].text == "ok"
        await session.ping(timeout=REPLY_TIMEOUT)


async def test_client_reports_a_result_of_the_wrong_shape() -> None:
    async with scripted("wrong-shape") as session:
        with pytest.raises(McpError) as info:
            await session.call_tool("anything", {}, timeout=REPLY_TIMEOUT)
        assert info.value.code == INTERNAL_ERROR
        assert "result.content" in info.value.message
        await session.ping(timeout=REPLY_TIMEOUT)


async def test_client_survives_invalid_utf8_in_a_result() -> None:
    """Regression: msgspec's DecodeError from the result used to kill the client session."""
    async with scripted("bad-utf8") as session:
        with pytest.raises(McpError) as info:
            await session.call_tool("anything", {}, timeout=REPLY_TIMEOUT)
        assert info.value.code == INTERNAL_ERROR
        await session.ping(timeout=REPLY_TIMEOUT)
