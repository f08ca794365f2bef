"""A stand-in for a worker of ``mcpbind serve --workers``, for the supervisor's own tests: it
starts in a blink and does what its first argument says.

* ``serve``: says it serves (the link's READY), then waits; exits 0 on SIGINT.
* ``fail``: exits with code 3 at once, before serving.
* ``stubborn``: ignores SIGINT and SIGTERM, says it serves, and waits (only SIGKILL ends it).
* ``fail-when PATH``: as ``fail`` if PATH exists, else as ``serve``.

It takes the options a supervisor appends (``--listen-fd``, ``--supervisor-fd``) and checks
that the listening socket it inherited is one.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["serve", "fail", "stubborn", "fail-when"])
    parser.add_argument("path", nargs="?")
    parser.add_argument("--listen-fd", type=int, action="append", required=True)
    parser.add_argument("--supervisor-fd", type=int, required=True)
    args = parser.parse_args()
    for fd in args.listen_fd:
        listener = socket.socket(fileno=fd)
        assert listener.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    if args.mode == "fail" or (args.mode == "fail-when" and os.path.exists(args.path)):
        return 3
    if args.mode == "stubborn":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    link = socket.socket(fileno=args.supervisor_fd)
    link.sendall(b"R")
    try:
        while True:
            signal.pause()
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
