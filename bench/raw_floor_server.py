"""The floor of the stdio benchmarks: a raw msgspec JSON-RPC echo loop, no MCP framework at all.

One blocking loop: read what stdin has (up to 64 KiB at a time), decode each whole line with
msgspec, answer, and write the answers to that read in one write. It answers ``initialize``
(with the protocol version the client asked for), ``ping``, ``tools/list`` (``echo`` and, with
``--tools N``, ``tool_0`` ... ``tool_{N-1}``; the listing is encoded once at start-up and sent
as it is, the least a server whose tools do not change can do) and ``tools/call`` of any listed
tool (the ``text`` argument back as text content, whatever its size); anything else gets -32601.
It checks nothing beyond decoding. What a Python process costs at the least: the reference of
``bench/stdio.py`` (servers) and ``bench/clients.py`` (the clients run against it).

    python bench/raw_floor_server.py [--tools N] [--pin-cpu N]

``--pin-cpu`` moves the process to that CPU first (the client benchmarks start this server
through each SDK's own stdio client, so it places itself). Imports msgspec and the standard
library only, so that its start-up is the interpreter's and msgspec's. Its messages
(``Incoming`` ... ``Answer``) are those of the HTTP floor too (``bench/raw_floor.py``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import msgspec


class Incoming(msgspec.Struct):
    method: str | None = None
    id: int | str | None = None
    params: msgspec.Raw = msgspec.Raw(b"null")


class Arguments(msgspec.Struct):
    text: str


class CallParams(msgspec.Struct):
    name: str
    arguments: Arguments


class _InitParams(msgspec.Struct):
    protocolVersion: str


class TextOut(msgspec.Struct):
    text: str
    type: str = "text"


class ResultOut(msgspec.Struct):
    content: list[TextOut]


class _Property(msgspec.Struct):
    type: str
    description: str


class _InputSchema(msgspec.Struct):
    properties: dict[str, _Property]
    required: list[str]
    type: str = "object"


class _Tool(msgspec.Struct, rename="camel"):
    name: str
    description: str
    input_schema: _InputSchema


class _ToolsOut(msgspec.Struct):
    tools: list[_Tool]


class _ErrorBody(msgspec.Struct):
    code: int
    message: str


class Answer(msgspec.Struct):
    id: int | str | None
    result: Any
    jsonrpc: str = "2.0"


class _ErrorAnswer(msgspec.Struct):
    id: int | str | None
    error: _ErrorBody
    jsonrpc: str = "2.0"


SCHEMA = _InputSchema({"text": _Property("string", "What to say back")}, ["text"])


class Answerer:
    """The floor's protocol, without I/O: ``feed()`` the bytes read, get the answers to every
    whole line among them (each followed by a newline), ``b""`` if there are none."""

    def __init__(self, extra_tools: int = 0) -> None:
        self._decode = msgspec.json.Decoder(Incoming).decode
        self._decode_call = msgspec.json.Decoder(CallParams).decode
        self._decode_init = msgspec.json.Decoder(_InitParams).decode
        self._encode = msgspec.json.Encoder().encode
        names = ["echo", *(f"tool_{i}" for i in range(extra_tools))]
        self._known = frozenset(names)
        # The listing is encoded once: the least a server can do for a list that does not change.
        self._tools = msgspec.Raw(
            self._encode(_ToolsOut([_Tool(name, "Says the text back.", SCHEMA) for name in names]))
        )
        self._capabilities: dict[str, Any] = {"tools": {}}
        self._server_info = {"name": "raw-floor", "version": "0.1.0"}
        self._empty: dict[str, Any] = {}
        self._pending: list[bytes] = []  # the start of a line whose end has not arrived

    def feed(self, chunk: bytes) -> bytes:
        pending = self._pending
        if b"\n" not in chunk:
            pending.append(chunk)
            return b""
        if pending:
            pending.append(chunk)
            chunk = b"".join(pending)
            pending.clear()
        *lines, rest = chunk.split(b"\n")
        if rest:
            pending.append(rest)
        answers: list[bytes] = []
        for line in lines:
            answer: Answer | _ErrorAnswer
            try:
                msg = self._decode(line)
                if msg.id is None:
                    continue  # a notification
                method = msg.method
                if method == "tools/call":
                    params = self._decode_call(msg.params)
                    if params.name in self._known:
                        answer = Answer(msg.id, ResultOut([TextOut(params.arguments.text)]))
                    else:
                        answer = _ErrorAnswer(msg.id, _ErrorBody(-32602, f"Unknown tool: {params.name}"))
                elif method == "tools/list":
                    answer = Answer(msg.id, self._tools)
                elif method == "initialize":
                    version = self._decode_init(msg.params).protocolVersion
                    result = {
                        "protocolVersion": version,
                        "capabilities": self._capabilities,
                        "serverInfo": self._server_info,
                    }
                    answer = Answer(msg.id, result)
                elif method == "ping":
                    answer = Answer(msg.id, self._empty)
                else:
                    answer = _ErrorAnswer(msg.id, _ErrorBody(-32601, f"Method not found: {method}"))
            except msgspec.DecodeError as exc:
                answer = _ErrorAnswer(None, _ErrorBody(-32700, str(exc)))
            answers.append(self._encode(answer))
        if not answers:
            return b""
        answers.append(b"")
        return b"\n".join(answers)


def serve(extra_tools: int = 0) -> None:
    answerer = Answerer(extra_tools)
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return
        out = memoryview(answerer.feed(chunk))
        while out:
            out = out[os.write(1, out) :]


def parse_options(argv: list[str] | None, script: str) -> int:
    """The options of the floor servers: ``--tools N`` (returned) and ``--pin-cpu N`` (done)."""
    args = sys.argv[1:] if argv is None else argv
    extra_tools = 0
    while args:
        flag, value, *args = args
        if flag == "--tools":
            extra_tools = int(value)
        elif flag == "--pin-cpu":
            os.sched_setaffinity(0, {int(value)})
        else:
            raise SystemExit(f"{script}: unknown option {flag} (takes --tools N, --pin-cpu N)")
    return extra_tools


def main(argv: list[str] | None = None) -> None:
    serve(parse_options(argv, "raw_floor_server.py"))


if __name__ == "__main__":
    main()
