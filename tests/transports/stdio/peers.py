"""Child processes for the tests of tests/transports/stdio/: ``python peers.py MODE [ARGS]``.

Modes:

* ``echo``: echo each stdin line to stdout; ``!env NAME`` answers the variable's value, ``!cwd``
  the working directory. Exits 0 at the end of stdin.
* ``exit CODE``: exit at once with CODE, reading nothing.
* ``chatty``: print ``ready``, write 2 MB to stdout (blocking until it is read), then read stdin
  to its end and exit 0.
* ``stubborn``: ignore SIGTERM, print ``ready``, then sleep without ever reading stdin.
* ``server BACKEND MAX_SIZE``: an echo server on ``mcpbind.transports.stdio.stdio_server_transport`` run by
  ``anyio.run`` on BACKEND; answers ``TOO_LARGE`` for a line over MAX_SIZE and goes on. Exits 0
  at the end of stdin.
"""

from __future__ import annotations

import os
import signal
import sys
import time


def echo() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for raw in stdin:
        line = raw.rstrip(b"\n")
        if line.startswith(b"!env "):
            line = os.environ.get(line[5:].decode(), "<unset>").encode()
        elif line == b"!cwd":
            line = os.getcwd().encode()
        stdout.write(line + b"\n")
        stdout.flush()


def chatty() -> None:
    sys.stdout.buffer.write(b"ready\n")
    sys.stdout.buffer.write(b"x" * 2_000_000 + b"\n")
    sys.stdout.buffer.flush()
    for _ in sys.stdin.buffer:
        pass


def stubborn() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    time.sleep(60)


def server(backend: str, max_message_size: int) -> None:
    import anyio

    from mcpbind.transports.base import MessageTooLarge
    from mcpbind.transports.stdio import stdio_server_transport

    async def main() -> None:
        async with stdio_server_transport(max_message_size) as transport:
            while True:
                try:
                    message = await transport.receive()
                except MessageTooLarge:
                    await transport.send(b"TOO_LARGE")
                    continue
                except anyio.EndOfStream:
                    print("server: end of stdin", file=sys.stderr)
                    return
                await transport.send(message)

    anyio.run(main, backend=backend)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "echo":
        echo()
    elif mode == "exit":
        sys.exit(int(sys.argv[2]))
    elif mode == "chatty":
        chatty()
    elif mode == "stubborn":
        stubborn()
    elif mode == "server":
        server(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(f"unknown mode {mode!r}")
