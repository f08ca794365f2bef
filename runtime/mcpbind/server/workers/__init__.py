"""Serving with several processes on one port: ``mcpbind serve FILE --transport http
--workers N``.

A supervisor (:class:`Supervisor`) binds the listening sockets once and starts N workers that
inherit them, each a ``mcpbind serve`` of the same server on those sockets; the kernel hands
each connection to one of them. It restarts a worker that dies, with a growing delay, gives
up when workers keep failing to start, and stops them all on SIGINT or SIGTERM. Each worker
is linked to it (:mod:`.link`): it says when it serves, and stops when the supervisor is
gone. What ``mcpbind serve`` does with its options for this is in :mod:`.command`.

Requests of MCP 2026-07-28 need nothing shared between workers, but the streams of
``subscriptions/listen`` (which hear only their own worker's changes) and the key protecting
``requestState``; 2025 sessions live in one worker. Workers given the same ``--store`` share
those through it (see :mod:`mcpbind.store`).
"""

from mcpbind.server.workers.link import WorkerLink, open_link
from mcpbind.server.workers.supervisor import RestartPolicy, Supervisor

__all__ = ["RestartPolicy", "Supervisor", "WorkerLink", "open_link"]
