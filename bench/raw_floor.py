"""The floor of ``bench/streamable_http.py``: JSON-RPC echo over HTTP with nothing else, a raw ASGI
app of a few lines that decodes the body with msgspec and answers ``initialize`` and ``tools/call``
echo, notifications with 202: no sessions, no checks. What a Python ASGI app costs at the least.

Served by ``bench/streamable_http_servers.py raw-floor``; a module of its own so that the official
SDK's servers, run from the same script in the SDK's venv, need no msgspec. Its messages are the
stdio floor's (``bench/raw_floor_server.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import msgspec

from bench.raw_floor_server import Answer, CallParams, Incoming, ResultOut, TextOut

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def raw_floor_app() -> ASGIApp:
    """JSON-RPC echo over HTTP with nothing else: what a Python ASGI app costs at the least."""
    decode = msgspec.json.Decoder(Incoming).decode
    decode_call = msgspec.json.Decoder(CallParams).decode
    encode = msgspec.json.Encoder().encode
    init_result = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "raw-floor", "version": "0.1.0"},
    }
    content_type = (b"content-type", b"application/json")

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":  # nothing to start or stop
            while True:
                event = (await receive())["type"]
                await send({"type": event + ".complete"})
                if event == "lifespan.shutdown":
                    return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        status, out = 202, b""
        try:
            msg = decode(body)
            if msg.id is not None and msg.method == "tools/call":
                text = decode_call(msg.params).arguments.text
                status, out = 200, encode(Answer(msg.id, ResultOut([TextOut(text)])))
            elif msg.id is not None and msg.method == "initialize":
                status, out = 200, encode(Answer(msg.id, init_result))
            elif msg.id is not None:
                status = 400
        except msgspec.DecodeError:
            status = 400
        headers = [content_type, (b"content-length", str(len(out)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": out})

    return app
