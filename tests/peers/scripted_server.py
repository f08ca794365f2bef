"""A stdio "server" that answers from a script, byte for byte, for client robustness tests.

    python tests/peers/scripted_server.py MODE

It answers ``initialize`` (protocol 2025-11-25), ignores notifications, answers ``ping``, and
answers each ``tools/call`` as MODE says:

* ``bad-utf8``: a result whose text holds the byte 0xFF (not UTF-8, so not JSON).
* ``garbage-first``: a line of binary garbage, then a normal result (text ``"ok"``).
* ``wrong-shape``: a result that is not a CallToolResult (``content`` is a string).

It exits 0 at the end of stdin.
"""

from __future__ import annotations

import json
import sys

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "scripted", "version": "0"},
}


def main(mode: str) -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

    def write(line: bytes) -> None:
        stdout.write(line + b"\n")
        stdout.flush()

    for raw in stdin:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        ident = json.dumps(message["id"]).encode()
        method = message["method"]
        if method == "initialize":
            write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": INIT_RESULT}).encode())
        elif method == "tools/call" and mode == "bad-utf8":
            write(
                b'{"jsonrpc":"2.0","id":' + ident + b',"result":{"content":[{"type":"text","text":"\xff"}]}}'
            )
        elif method == "tools/call" and mode == "garbage-first":
            write(b"\x00\x01garbage\xfe\xff")
            write(b'{"jsonrpc":"2.0","id":' + ident + b',"result":{"content":[{"type":"text","text":"ok"}]}}')
        elif method == "tools/call" and mode == "wrong-shape":
            write(b'{"jsonrpc":"2.0","id":' + ident + b',"result":{"content":"not a list"}}')
        else:
            write(b'{"jsonrpc":"2.0","id":' + ident + b',"result":{}}')


if __name__ == "__main__":
    main(sys.argv[1])
