"""What the Streamable HTTP server tests share: a server with tools that exercise the transport,
the app served on 127.0.0.1, and a small raw client speaking the protocol with httpx."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.http.server import StreamableHTTPApp, close_sse_stream
from tests.http_harness import ServerName, serve_asgi

ACCEPT_BOTH = "application/json, text/event-stream"

# (event loop, ASGI server): uvicorn runs on asyncio only, hypercorn on both.
COMBINATIONS = [("asyncio", "uvicorn"), ("asyncio", "hypercorn"), ("trio", "hypercorn")]


@pytest.fixture(params=COMBINATIONS, ids=["-".join(c) for c in COMBINATIONS])
def backend_and_server(request: pytest.FixtureRequest) -> tuple[str, ServerName]:
    combination: tuple[str, ServerName] = request.param
    return combination


@pytest.fixture
def anyio_backend(backend_and_server: tuple[str, ServerName]) -> str:
    """Overrides the suite's: the loop comes with the ASGI server (import it with the other two)."""
    return backend_and_server[0]


@pytest.fixture
def asgi_server(backend_and_server: tuple[str, ServerName]) -> ServerName:
    return backend_and_server[1]


LATEST = "2025-11-25"


class Probe:
    """Events the tools of :func:`make_server` set, for tests to wait on."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.cancelled = anyio.Event()
        self.release = anyio.Event()
        self.finished = anyio.Event()

    async def hold(self) -> None:
        """What a tool that waits for the test does: sets ``started``, waits for ``release``,
        and sets ``cancelled`` when it is cancelled meanwhile."""
        self.started.set()
        try:
            await self.release.wait()
        except anyio.get_cancelled_exc_class():
            self.cancelled.set()
            raise


def make_server(probe: Probe | None = None) -> Server:
    probe = probe or Probe()
    server = Server("http-test", "1.0", logging=True)

    @server.tool()
    async def echo(text: str) -> str:
        """Says the text back."""
        return text

    @server.tool()
    async def progress(steps: int, ctx: RequestContext) -> str:
        """Reports progress ``steps`` times, then answers."""
        for step in range(steps):
            await ctx.report_progress(step + 1, steps, f"step {step + 1}")
        return f"done {steps}"

    @server.tool()
    async def block(ctx: RequestContext) -> str:
        """Waits until the test releases it; records being cancelled."""
        await probe.hold()
        probe.finished.set()
        return "released"

    @server.tool()
    async def poll(ctx: RequestContext) -> str:
        """Closes its SSE connection, sends progress, waits for the test, then answers."""
        closed = await close_sse_stream(ctx)
        await ctx.report_progress(1, 2, "after close")
        probe.started.set()
        await probe.release.wait()
        return f"polled {closed}"

    @server.tool()
    async def changed(ctx: RequestContext) -> str:
        """Tells every session that the tool list changed."""
        await server.tools_changed()
        return "notified"

    @server.tool()
    async def chatter(count: int, ctx: RequestContext, size: int = 10) -> str:
        """Sends ``count`` log messages of about ``size`` bytes tied to this request."""
        for i in range(count):
            await ctx.log("info", f"{i} " + "x" * size)
        return f"said {count}"

    @server.tool()
    async def ask(ctx: RequestContext) -> str:
        """Asks the client to sample a message, and answers with what it said."""
        result = await ctx.create_message(
            types.CreateMessageRequestParams(
                max_tokens=10,
                messages=[types.SamplingMessage(role="user", content=types.TextContent(text="hi?"))],
            )
        )
        assert isinstance(result, types.CreateMessageResult)
        content = result.content
        return content.text if isinstance(content, types.TextContent) else "?"

    @server.resource("test://hello", mime_type="text/plain")
    async def hello() -> str:
        return "hello"

    return server


@asynccontextmanager
async def running(
    app: StreamableHTTPApp, server: ServerName | None = None
) -> AsyncIterator[tuple[str, httpx.AsyncClient]]:
    """The app served on 127.0.0.1; yields its MCP URL and an httpx client."""
    async with serve_asgi(app, server) as base, httpx.AsyncClient(timeout=10) as client:
        yield f"{base}{app.path}", client


def request(ident: int | str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize(version: str = LATEST, ident: int = 0) -> dict[str, Any]:
    return request(
        ident,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    )


def call(ident: int | str, tool: str, arguments: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return request(ident, "tools/call", params)


def headers(session_id: str | None = None, version: str | None = LATEST, **extra: str) -> dict[str, str]:
    out = {"content-type": "application/json", "accept": ACCEPT_BOTH}
    if session_id is not None:
        out["mcp-session-id"] = session_id
    if version is not None:
        out["mcp-protocol-version"] = version
    out.update({k.replace("_", "-"): v for k, v in extra.items()})
    return out


def sse_events(text: str) -> list[dict[str, str]]:
    """Parse an SSE body into events: each a dict of its fields (``data`` lines joined)."""
    events: list[dict[str, str]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        event: dict[str, str] = {}
        for line in block.split("\n"):
            if line.startswith(":"):
                event.setdefault("comment", line[1:].strip())
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            event[name] = event[name] + "\n" + value if name in event else value
        events.append(event)
    return events


def messages(events: list[dict[str, str]]) -> list[dict[str, Any]]:
    """The JSON-RPC messages among SSE events (priming events and comments left out)."""
    return [json.loads(e["data"]) for e in events if e.get("data")]


async def open_session(client: httpx.AsyncClient, url: str, version: str = LATEST) -> str:
    """initialize + notifications/initialized; the session id."""
    response = await client.post(url, json=initialize(version), headers=headers(version=None))
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    accepted = await client.post(url, json=note, headers=headers(session_id, version))
    assert accepted.status_code == 202, accepted.text
    return session_id


async def post(
    client: httpx.AsyncClient,
    url: str,
    message: dict[str, Any],
    session_id: str | None,
    version: str = LATEST,
) -> tuple[httpx.Response, list[dict[str, Any]]]:
    """POST one message; the response and the JSON-RPC messages it carried (JSON or SSE)."""
    response = await client.post(url, json=message, headers=headers(session_id, version))
    kind = response.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        return response, messages(sse_events(response.text))
    if kind.startswith("application/json") and response.content:
        return response, [response.json()]
    return response, []


class EventReader:
    """Reads SSE events one at a time from a streaming httpx response."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lines = response.aiter_lines()

    async def next(self, timeout: float = 5.0) -> dict[str, str]:
        """The next event (a dict of its fields; comments as ``comment``)."""
        event: dict[str, str] = {}
        with anyio.fail_after(timeout):
            async for line in self._lines:
                if line == "":
                    if event:
                        return event
                    continue
                if line.startswith(":"):
                    event["comment"] = line[1:].strip()
                    continue
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                event[name] = event[name] + "\n" + value if name in event else value
        raise EOFError("the stream ended")

    async def next_message(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next JSON-RPC message, skipping priming events and comments."""
        while True:
            event = await self.next(timeout)
            if event.get("data"):
                message: dict[str, Any] = json.loads(event["data"])
                return message

    async def rest(self, timeout: float = 5.0) -> list[dict[str, str]]:
        """Every event until the stream ends."""
        events = []
        with anyio.fail_after(timeout):
            while True:
                try:
                    events.append(await self.next(timeout))
                except EOFError:
                    return events


async def answer_sampling(
    client: httpx.AsyncClient, url: str, session_id: str, reader: EventReader, text: str
) -> dict[str, Any]:
    """Answer the sampling request that comes next on ``reader`` with ``text``, POSTed to ``url``
    (checked accepted: 202, no body, the session's header), and return the message that comes
    after it on ``reader`` (the answer of the call that asked)."""
    sampling = await reader.next_message()
    answer = {
        "jsonrpc": "2.0",
        "id": sampling["id"],
        "result": {"role": "assistant", "content": {"type": "text", "text": text}, "model": "m"},
    }
    accepted = await client.post(url, json=answer, headers=headers(session_id))
    assert (accepted.status_code, accepted.content) == (202, b"")
    assert accepted.headers["mcp-session-id"] == session_id
    return await reader.next_message()


@asynccontextmanager
async def get_stream(
    client: httpx.AsyncClient, url: str, session_id: str, **extra: str
) -> AsyncIterator[EventReader]:
    """A GET stream of the session (asserting it opened)."""
    hdrs = headers(session_id, accept="text/event-stream", **extra)
    del hdrs["content-type"]
    async with client.stream("GET", url, headers=hdrs) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"] == "text/event-stream"
        yield EventReader(response)
