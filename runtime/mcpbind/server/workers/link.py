"""The link between the supervisor of ``mcpbind serve --workers N`` and each of its workers: a
Unix socket pair, one end in each process.

* Worker to supervisor: one byte, :data:`READY`, once the worker serves (its application has
  started); a worker that exits before sending it failed to start.
* Supervisor to worker: nothing. The worker watches its end for the end of the stream: the
  supervisor is gone (killed, say), and the worker stops as if interrupted (SIGINT) instead
  of serving on with nobody to stop it.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from typing import Final

__all__ = ["READY", "WorkerLink", "open_link"]

READY: Final = b"R"


def open_link() -> tuple[socket.socket, socket.socket]:
    """A new link: (the supervisor's end, the worker's end, to pass to the worker)."""
    return socket.socketpair()


class WorkerLink:
    """The worker's end of the link, on the descriptor ``fd`` it inherited (this object owns
    it from now on)."""

    def __init__(self, fd: int) -> None:
        self._sock = socket.socket(fileno=fd)
        if self._sock.family != socket.AF_UNIX:
            self._sock.detach()
            raise ValueError(f"descriptor {fd} is not the supervisor's link (a Unix socket)")

    def ready(self) -> None:
        """Tell the supervisor this worker serves."""
        try:
            self._sock.sendall(READY)
        except OSError:  # the supervisor is gone: the watch stops this process
            pass

    def watch(self) -> None:
        """Stop this process (SIGINT, which ``mcpbind serve`` takes as a quiet stop) when the
        supervisor is gone, from a daemon thread. SIGINT gets Python's default handling here
        even if this process inherited it ignored (as a child of a shell's background job
        does), since the supervisor stops its workers with it."""
        signal.signal(signal.SIGINT, signal.default_int_handler)
        threading.Thread(
            target=self._wait_for_supervisor, name="mcpbind-supervisor-watch", daemon=True
        ).start()

    def _wait_for_supervisor(self) -> None:
        try:
            while self._sock.recv(64):  # (the supervisor sends nothing; read on to the end)
                pass
        except OSError:
            pass
        os.kill(os.getpid(), signal.SIGINT)
