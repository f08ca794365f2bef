"""What a session tells its transport about each message it sends: which received request the
message answers or belongs to. The Streamable HTTP server routes by this (a POST's own stream)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.wire import RequestId
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.memory import MemoryTransport, memory_pair
from mcpbind.versions import HANDSHAKE_VERSIONS

pytestmark = pytest.mark.anyio


class Recording:
    """A transport that notes (method or kind, related, final) for each message sent: a
    :class:`~mcpbind.transports.base.RelatedSender`, so the session says which request each
    message belongs to."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.sent: list[tuple[str, RequestId | None, bool, Any]] = []

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def send(self, message: bytes) -> None:
        await self.send_related(message, None)

    async def send_related(self, message: bytes, related: RequestId | None, final: bool = False) -> None:
        decoded = json.loads(message)
        kind = decoded.get("method") or ("error" if "error" in decoded else "result")
        self.sent.append((kind, related, final, decoded.get("id")))
        await self.inner.send(message)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def sampling(
    params: types.CreateMessageRequestParams, ctx: RequestContext
) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(text="hi"), model="m")


async def test_messages_name_the_request_they_belong_to() -> None:
    server = Server("routing", "1", logging=True)

    @server.tool()
    async def busy(ctx: RequestContext) -> str:
        await ctx.report_progress(1, 2)
        await ctx.log("info", "working")
        answer = await ctx.create_message(
            types.CreateMessageRequestParams(
                messages=[types.SamplingMessage(role="user", content=types.TextContent(text="?"))],
                max_tokens=5,
            )
        )
        assert isinstance(answer, types.CreateMessageResult)
        return "done"

    @server.tool()
    def later() -> str:
        return "x"

    server_end, client_end = memory_pair()
    recording = Recording(server_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, recording)
        with anyio.fail_after(10):
            async with Client("t", "1", sampling=sampling, versions=HANDSHAKE_VERSIONS).connect(
                client_end
            ) as client:
                init = recording.sent[0]
                assert init[0] == "result" and init[1] == init[3] and init[2] is True

                await client.ping()
                assert recording.sent[-1][0] == "result" and recording.sent[-1][2] is True

                result = await client.call_tool("busy", {}, progress=lambda *_: anyio.sleep(0))
                assert result.content[0] == types.TextContent(text="done")
                call = [entry for entry in recording.sent if entry[0] == "result"][-1]
                call_id = call[3]
                kinds = [(kind, related, final) for kind, related, final, _ in recording.sent[2:]]
                assert kinds == [
                    ("notifications/progress", call_id, False),
                    ("notifications/message", call_id, False),
                    ("sampling/createMessage", call_id, False),
                    ("result", call_id, True),
                ]

                server.remove_tool("later")
                with anyio.fail_after(5):
                    while recording.sent[-1][0] != "notifications/tools/list_changed":
                        await anyio.sleep(0.01)
                assert recording.sent[-1][1:3] == (None, False)
        tg.cancel_scope.cancel()


async def test_error_answers_are_final_for_their_request() -> None:
    server_end, client_end = memory_pair()
    recording = Recording(server_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(Server("routing", "1").run, recording)
        with anyio.fail_after(10):
            async with Client("t", "1", versions=HANDSHAKE_VERSIONS).connect(client_end) as client:
                for line in (
                    b'{"jsonrpc":"2.0","id":"x1","method":"no/such"}',
                    b'{"jsonrpc":"2.0","id":"x2","method":"tools/call","params":{"name":5}}',
                ):
                    await client_end.send(line)
                with anyio.fail_after(5):
                    while len([e for e in recording.sent if e[0] == "error"]) < 2:
                        await anyio.sleep(0.01)
                errors = {entry[3]: entry for entry in recording.sent if entry[0] == "error"}
                assert errors["x1"][1:3] == ("x1", True)
                assert errors["x2"][1:3] == ("x2", True)
                del client
        tg.cancel_scope.cancel()


async def test_an_error_leaving_a_session_keeps_its_cause() -> None:
    server_end, client_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(Server("routing", "1").run, server_end)
        with pytest.raises(RuntimeError) as caught:
            async with Client("t", "1", versions=HANDSHAKE_VERSIONS).connect(client_end):
                try:
                    raise KeyError("inner")
                except KeyError as exc:
                    raise RuntimeError("outer") from exc
        assert isinstance(caught.value.__cause__, KeyError)
        tg.cancel_scope.cancel()
