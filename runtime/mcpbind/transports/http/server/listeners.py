"""The listening sockets the embedded HTTP servers accept connections on (see
:mod:`~mcpbind.transports.http.server.embedded`): bound here for one process
(:func:`bind_listeners`), or inherited from the process that bound them and shares them with
others, each accepting from the same queue (:func:`adopt_listeners`: the workers of
``mcpbind serve --workers N``).

Each is a :class:`Listener`, whose ``accept()``, when the process is out of file descriptors,
fails once per burst and then reports nothing to accept (which keeps asyncio's accept loop from
logging one error per pending connection).
"""

from __future__ import annotations

import errno
import os
import socket
import time
from collections.abc import Sequence
from typing import Any, Final

__all__ = ["ACCEPT_PAUSE", "BACKLOG", "Listener", "adopt_listeners", "bind_listeners"]

# What accept() fails with when the process or the system is out of something (asyncio's list).
_OUT_OF_RESOURCES: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
# After such a failure, accept() reports nothing to accept for this long (asyncio retries in 1 s).
ACCEPT_PAUSE: Final = 0.5
# Connections the kernel queues for a listening socket before anyone accepts them (uvicorn's
# and hypercorn's default).
BACKLOG: Final = 2048


class Listener(socket.socket):
    """A listening socket whose ``accept()``, out of descriptors, fails once and then, for
    :data:`ACCEPT_PAUSE` seconds, says there is nothing to accept (which ends the accept loop
    of asyncio's selector event loop after one error and one scheduled retry).

    ``fileno``: an open socket to take over (its family and type are read from it)."""

    __slots__ = ("_failed_at",)

    def __init__(self, family: int = -1, kind: int = -1, proto: int = -1, fileno: int | None = None) -> None:
        super().__init__(family, kind, proto, fileno)
        self._failed_at = -float("inf")

    def accept(self) -> tuple[socket.socket, Any]:
        try:
            return super().accept()
        except OSError as exc:
            if exc.errno not in _OUT_OF_RESOURCES:
                raise
            now = time.monotonic()
            if now - self._failed_at < ACCEPT_PAUSE:
                raise BlockingIOError(errno.EAGAIN, os.strerror(errno.EAGAIN)) from exc
            self._failed_at = now
            raise


def bind_listeners(host: str, port: int, *, listen: bool = False) -> list[socket.socket]:
    """Sockets bound to every address of ``host`` (as ``loop.create_server`` binds them);
    listening already (with a backlog of :data:`BACKLOG`) if ``listen``, so that connections
    queue before any server accepts them. ``OSError`` when an address cannot be bound (in use,
    say); none is left open then."""
    found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(found):
            listener = Listener(family, kind, proto)
            sockets.append(listener)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            listener.bind(address)
            if listen:
                listener.listen(BACKLOG)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def adopt_listeners(fds: Sequence[int]) -> list[socket.socket]:
    """The listening sockets open on the descriptors ``fds`` (inherited from the process that
    bound them), as :class:`Listener` objects owning them. ``ValueError`` for a descriptor that
    is not a listening stream socket."""
    sockets: list[socket.socket] = []
    try:
        for fd in fds:
            listener = Listener(fileno=fd)
            sockets.append(listener)
            if listener.type != socket.SOCK_STREAM or not listener.getsockopt(
                socket.SOL_SOCKET, socket.SO_ACCEPTCONN
            ):
                raise ValueError(f"descriptor {fd} is not a listening stream socket")
    except OSError as exc:  # (not a socket at all)
        for sock in sockets:
            sock.close()
        raise ValueError(f"no listening socket among descriptors {list(fds)}: {exc}") from exc
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets
