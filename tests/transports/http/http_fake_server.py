"""A scripted Streamable HTTP server for testing the client transport: a raw ASGI app.

By default it behaves like a tiny MCP server: ``initialize`` starts a session (``session-1``,
``session-2``...), notifications and responses get 202, ``ping``, ``tools/list`` and
``tools/call`` (an ``echo`` tool) get JSON answers, GET gets 405 and DELETE ends the session.
Requests with an unknown session id get 404, ones without any (after initialize) 400.

Tests script exact behaviours by putting handlers in ``server.post_handlers`` (by JSON-RPC
method), ``server.get_handler`` and ``server.delete_handler``: a handler gets the request as
:class:`Seen` and returns a reply (:class:`Json`, :class:`Status`, :class:`Sse`), or ``None``
for the default. Every HTTP request is recorded in ``server.seen``; ``await server.wait_for(...)``
waits for one matching a predicate (no polling).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from tests.raw_asgi import Receive, Send, answer_lifespan, read_body

__all__ = [
    "HOLD",
    "FakeServer",
    "Json",
    "Seen",
    "Sse",
    "Status",
    "Wait",
    "event",
    "rpc_error",
    "rpc_result",
]


@dataclass
class Seen:
    """One HTTP request as the server received it."""

    method: str
    headers: dict[str, str]  # names in lower case
    body: bytes
    time: float  # anyio.current_time() when it arrived
    status: int | None = None  # what it was answered
    finished: float | None = None  # when the answer (a stream's end included) was complete

    @property
    def message(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def rpc_method(self) -> str | None:
        message = self.message
        return message.get("method") if isinstance(message, dict) else None

    @property
    def rpc_id(self) -> Any:
        message = self.message
        return message.get("id") if isinstance(message, dict) else None

    @property
    def is_response(self) -> bool:
        message = self.message
        return (
            isinstance(message, dict)
            and "method" not in message
            and ("result" in message or "error" in message)
        )


def rpc_result(ident: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def rpc_error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def event(
    data: Any = None,
    *,
    id: str | None = None,
    retry: int | None = None,
    kind: str | None = None,
    raw: bool = False,
) -> bytes:
    """One SSE event. ``data`` is JSON-encoded unless ``raw`` (bytes/str as they are); ``None``
    and ``""`` give an empty ``data:`` line (a priming event)."""
    lines: list[bytes] = []
    if id is not None:
        lines.append(b"id: " + id.encode())
    if retry is not None:
        lines.append(b"retry: " + str(retry).encode())
    if kind is not None:
        lines.append(b"event: " + kind.encode())
    if data is None or data == "":
        lines.append(b"data:")
    else:
        payload = (data.encode() if isinstance(data, str) else data) if raw else json.dumps(data).encode()
        lines.extend(b"data: " + line for line in payload.split(b"\n"))
    return b"\n".join(lines) + b"\n\n"


@dataclass
class Wait:
    """In an :class:`Sse` script: wait for this event before going on."""

    event: anyio.Event


class _Hold:
    """In an :class:`Sse` script: keep the stream open until the client goes away."""


HOLD = _Hold()


@dataclass
class Json:
    body: Any
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    raw: bool = False  # body is bytes to send as they are


@dataclass
class Status:
    status: int
    body: bytes = b""
    content_type: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Sse:
    """An SSE answer: the script's bytes are sent in order, :class:`Wait` and :data:`HOLD`
    pause it; when the script ends the server closes the stream."""

    script: Iterable[bytes | Wait | _Hold]
    headers: Mapping[str, str] = field(default_factory=dict)


Reply = Json | Status | Sse
Handler = Callable[[Seen], "Reply | Awaitable[Reply | None] | None"]

TOOLS = [{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]


class FakeServer:
    def __init__(self, *, sessions: bool = True, protocol_version: str | None = None) -> None:
        self.use_sessions = sessions
        self.protocol_version = protocol_version  # None: agree to what the client asks
        self.seen: list[Seen] = []
        self.sessions: set[str] = set()
        self.session_count = 0
        self.post_handlers: dict[str, Handler] = {}
        self.get_handler: Handler | None = None
        self.delete_handler: Handler | None = None
        self.responses: dict[Any, anyio.Event] = {}
        self._changed = anyio.Event()

    # -- for tests --------------------------------------------------------------------------

    def expire_sessions(self) -> None:
        self.sessions.clear()

    def response_arrived(self, ident: Any) -> anyio.Event:
        """Set once the client POSTs a response to the server's request ``ident``."""
        return self.responses.setdefault(ident, anyio.Event())

    def requests(self, method: str, rpc_method: str | None = None) -> list[Seen]:
        return [
            s for s in self.seen if s.method == method and (rpc_method is None or s.rpc_method == rpc_method)
        ]

    async def wait_for(self, predicate: Callable[[Seen], bool], count: int = 1) -> list[Seen]:
        while True:
            matching = [s for s in self.seen if predicate(s)]
            if len(matching) >= count:
                return matching
            changed = self._changed
            await changed.wait()

    def _note_change(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    # -- ASGI -------------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await answer_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        body = await read_body(receive)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        seen = Seen(scope["method"], headers, body, anyio.current_time())
        self.seen.append(seen)
        self._note_change()
        try:
            # A handler or stream still busy when the client goes away is cancelled.
            async with anyio.create_task_group() as tg:

                async def watch_disconnect() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    tg.cancel_scope.cancel()

                tg.start_soon(watch_disconnect)
                reply = await self._reply(seen)
                seen.status = reply.status if not isinstance(reply, Sse) else 200
                await self._send(reply, send)
                tg.cancel_scope.cancel()
        finally:
            seen.finished = anyio.current_time()
            self._note_change()

    async def _reply(self, seen: Seen) -> Reply:
        if seen.method == "POST":
            return await self._post(seen)
        if seen.method == "GET":
            if (problem := self._session_problem(seen)) is not None:
                return problem
            reply = await _call(self.get_handler, seen)
            return reply if reply is not None else Status(405)
        if seen.method == "DELETE":
            reply = await _call(self.delete_handler, seen)
            if reply is not None:
                return reply
            if (problem := self._session_problem(seen)) is not None:
                return problem
            self.sessions.discard(seen.headers.get("mcp-session-id", ""))
            return Status(200)
        return Status(405)

    def _session_problem(self, seen: Seen) -> Reply | None:
        if not self.use_sessions:
            return None
        session = seen.headers.get("mcp-session-id")
        if session is None:
            return Status(400, b"missing session id")
        if session not in self.sessions:
            return Status(404, b"unknown session")
        return None

    async def _post(self, seen: Seen) -> Reply:
        try:
            message = json.loads(seen.body)
        except ValueError:
            return Status(400, b"not JSON")
        method = message.get("method") if isinstance(message, dict) else None
        if method != "initialize" and (problem := self._session_problem(seen)) is not None:
            return problem
        if seen.is_response:
            self.response_arrived(message.get("id")).set()
        handler = self.post_handlers.get(method) if method is not None else None
        reply = await _call(handler, seen)
        if reply is not None:
            return reply
        if method is None or "id" not in message:
            return Status(202)
        ident = message["id"]
        if method == "initialize":
            return self.initialize_reply(seen)
        if method == "ping":
            return Json(rpc_result(ident, {}))
        if method == "tools/list":
            return Json(rpc_result(ident, {"tools": TOOLS}))
        if method == "tools/call":
            text = message["params"].get("arguments", {}).get("text", "")
            return Json(rpc_result(ident, {"content": [{"type": "text", "text": text}]}))
        return Json(rpc_error(ident, -32601, f"Method not found: {method}"))

    def initialize_reply(self, seen: Seen) -> Json:
        """The default answer to initialize (opens a new session)."""
        message = seen.message
        version = self.protocol_version or message["params"]["protocolVersion"]
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1.0"},
        }
        headers: dict[str, str] = {}
        if self.use_sessions:
            self.session_count += 1
            session = f"session-{self.session_count}"
            self.sessions.add(session)
            headers["mcp-session-id"] = session
        return Json(rpc_result(message["id"], result), headers=headers)

    async def _send(self, reply: Reply, send: Send) -> None:
        if isinstance(reply, Json):
            body = reply.body if reply.raw else json.dumps(reply.body).encode()
            headers = {"content-type": "application/json", **reply.headers}
            await _start(send, reply.status, headers)
            await send({"type": "http.response.body", "body": body})
        elif isinstance(reply, Status):
            headers = dict(reply.headers)
            if reply.content_type is not None:
                headers["content-type"] = reply.content_type
            await _start(send, reply.status, headers)
            await send({"type": "http.response.body", "body": reply.body})
        else:
            headers = {"content-type": "text/event-stream", "cache-control": "no-cache", **reply.headers}
            await _start(send, 200, headers)
            for item in reply.script:
                if isinstance(item, Wait):
                    await item.event.wait()
                elif isinstance(item, _Hold):
                    await anyio.sleep_forever()
                else:
                    await send({"type": "http.response.body", "body": item, "more_body": True})
            await send({"type": "http.response.body", "body": b""})


async def _start(send: Send, status: int, headers: Mapping[str, str]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
        }
    )


async def _call(handler: Handler | None, seen: Seen) -> Reply | None:
    if handler is None:
        return None
    reply = handler(seen)
    if isinstance(reply, Json | Status | Sse) or reply is None:
        return reply
    return await reply
