"""A stdio "server" whose answers to ``tools/call`` msgspec cannot decode, for the client's
side of tests/test_stdio_hostile.py.

    python tests/peers/hostile_server.py MODE

It answers ``initialize`` (protocol 2025-11-25) and ``ping`` normally, ignores notifications,
and answers each ``tools/call`` as MODE says:

* ``deep-N``: a result nested N arrays deep (``[[[...]]]``).
* ``deep-id-last``: a result nested 2,000 deep, with the ``id`` member after it.
* ``surrogate``: a result whose text is an escaped lone surrogate (``"a\\udfff"``).
* ``surrogate-error``: an error response whose message is one.

It exits 0 at the end of stdin.
"""

from __future__ import annotations

import json
import sys

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "hostile", "version": "0"},
}


def answer(mode: str, ident: bytes) -> bytes:
    if mode.startswith("deep-") and mode[5:].isdecimal():
        depth = int(mode[5:])
        return b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (ident, b"[" * depth + b"]" * depth)
    if mode == "deep-id-last":
        return b'{"jsonrpc":"2.0","result":{"content":%s},"id":%s}' % (b"[" * 2000 + b"]" * 2000, ident)
    if mode == "surrogate":
        return b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"a\\udfff"}]}}' % ident
    if mode == "surrogate-error":
        return b'{"jsonrpc":"2.0","id":%s,"error":{"code":1,"message":"\\udfff"}}' % ident
    raise SystemExit(f"unknown mode {mode!r}")


def main(mode: str) -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

    def write(line: bytes) -> None:
        stdout.write(line + b"\n")
        stdout.flush()

    for raw in stdin:
        message = json.loads(raw)
        if "id" not in message or "method" not in message:
            continue
        ident = json.dumps(message["id"]).encode()
        if message["method"] == "initialize":
            write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": INIT_RESULT}).encode())
        elif message["method"] == "tools/call":
            write(answer(mode, ident))
        else:
            write(b'{"jsonrpc":"2.0","id":' + ident + b',"result":{}}')


if __name__ == "__main__":
    main(sys.argv[1])
