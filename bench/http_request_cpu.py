"""CPU time per request of mcpbind's Streamable HTTP app, in-process: no sockets, no HTTP
server, the ASGI app called directly (its lifespan running, as under uvicorn) with one
``tools/call`` of ``examples/echo_server.py``'s echo after another.

Modes: ``modern`` (a 2026-07-28 request, no session, JSON asked for), ``modern-sse`` (the same
on an app with SSE allowed) and ``json`` (a 2025-11-25 session's request, JSON responses).

The requests are timed in chunks of 100 with ``time.process_time``; the fastest chunk and the
tenth percentile are printed (in µs per request): on a shared machine the others' load only
ever adds time, so the fastest chunks say the most. To compare two trees, run this with each
tree's ``runtime``, ``generated`` and root on ``PYTHONPATH``, several times, alternating:

    PYTHONPATH=runtime:generated:. python bench/http_request_cpu.py modern 6000 [asyncio|trio]
"""

from __future__ import annotations

import gc
import json
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio

Message = MutableMapping[str, Any]

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0.1.0"},
}
BASE_HEADERS = {
    "Host": "127.0.0.1:8000",
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
}
CHUNK = 100

App = Callable[
    [Message, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]
]


def http_scope(headers: dict[str, str]) -> Message:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 5555),
        "server": ("127.0.0.1", 8000),
    }


async def post(app: App, headers: dict[str, str], body: bytes) -> list[Message]:
    """One POST; ``receive`` gives the body, then ``http.disconnect`` once the response is
    written (as an ASGI server does), not before."""
    sent: list[Message] = []
    calls = 0
    done = anyio.Event()

    async def receive() -> Message:
        nonlocal calls
        calls += 1
        if calls == 1:
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            done.set()

    await app(http_scope(headers), receive, send)
    return sent


async def main(mode: str, n: int) -> None:
    from examples.echo_server import build
    from mcpbind.transports.http.server import StreamableHTTPApp

    app = StreamableHTTPApp(build(), path="/mcp", json_response=mode != "modern-sse")
    async with app.run():
        params: dict[str, Any] = {"name": "echo", "arguments": {"text": "hello"}}
        if mode.startswith("modern"):
            headers = dict(BASE_HEADERS, **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"})
            headers["Mcp-Name"] = "echo"
            params["_meta"] = META
        else:
            client = {"name": "bench", "version": "0.1.0"}
            init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
            message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
            answer = await post(app, BASE_HEADERS, json.dumps(message).encode())
            session_id = dict(answer[0]["headers"])[b"mcp-session-id"].decode()
            headers = dict(
                BASE_HEADERS, **{"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": session_id}
            )
            await post(app, headers, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()
        answer = await post(app, headers, body)
        if answer[0]["status"] != 200 or b'"hello"' not in answer[-1]["body"]:
            raise SystemExit(f"unexpected answer: {answer}")
        for _ in range(500):
            await post(app, headers, body)
        gc.collect()
        chunks = []
        for _ in range(max(n // CHUNK, 1)):
            start = time.process_time()
            for _ in range(CHUNK):
                await post(app, headers, body)
            chunks.append((time.process_time() - start) / CHUNK * 1e6)
    chunks.sort()
    print(f"{mode} fastest {chunks[0]:.1f} p10 {chunks[len(chunks) // 10]:.1f} µs/request")


if __name__ == "__main__":
    backend = sys.argv[3] if len(sys.argv) > 3 else "asyncio"
    anyio.run(main, sys.argv[1], int(sys.argv[2]), backend=backend)
