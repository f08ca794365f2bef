"""A deployment in miniature for the end-to-end tests and ``nox -s conformance``: one Redis
(tests/redis_harness.py), ``copies`` separate ``mcpbind serve TARGET --transport http --store
REDIS`` processes (tests/scale/serving.py), and nginx in front of them as a plain round-robin
load balancer with no affinity (tests/nginx_harness.py), all on 127.0.0.1, stopped at the end.

    with running_fleet(folder, "examples/conformance_server.py:build_server") as fleet:
        ... fleet.url ...                      # http://127.0.0.1:PORT/mcp, through nginx

As a command (what ``nox -s conformance`` runs), it starts a fleet, runs a command with every
``{url}`` in it replaced by the fleet's URL, stops the fleet and exits with the command's exit
status (printing the servers' logs when it is not 0):

    python -m tests.fleet TARGET [--copies 3] [--backend asyncio] -- COMMAND ARGS... {url} ...
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.nginx_harness import NginxBalancer, running_nginx
from tests.redis_harness import RedisServer, running_redis
from tests.scale.serving import Served, deadline_poll, gone, respawn, serve

__all__ = ["Fleet", "main", "running_fleet"]

COPIES = 3


@dataclass
class Fleet:
    """A running fleet: its Redis, its servers (in nginx's upstream order) and nginx."""

    redis: RedisServer
    servers: list[Served]
    balancer: NginxBalancer
    folder: Path

    @property
    def url(self) -> str:
        """The MCP endpoint, through nginx."""
        return f"{self.balancer.url}/mcp"

    @property
    def pids(self) -> list[int]:
        return [served.process.pid for served in self.servers]

    def kill(self, index: int) -> int:
        """SIGKILL server ``index`` (no graceful shutdown) and wait until it is gone; its pid."""
        served = self.servers[index]
        served.process.kill()
        served.process.wait(timeout=30)
        pid = served.process.pid
        deadline_poll(lambda: gone(pid) or None, f"server {index} is gone")
        return pid

    def revive(self, index: int) -> Served:
        """Start server ``index`` again on its port (when it is dead) and wait until it listens."""
        served = self.servers[index]
        if served.process.poll() is None:
            return served
        self.servers[index] = respawn(self.folder, served)
        return self.servers[index]

    def revive_all(self) -> None:
        """Start every dead server again; then nginx too, so that it forgets the failures it
        counted (it leaves a server that failed out for 10 s)."""
        dead = [index for index, served in enumerate(self.servers) if served.process.poll() is not None]
        for index in dead:
            self.revive(index)
        if dead:
            self.balancer.stop()
            self.balancer.start()

    def logs(self) -> str:
        return "\n".join(
            f"--- server {i} (pid {s.process.pid}):\n{s.log()}" for i, s in enumerate(self.servers)
        )


@contextmanager
def running_fleet(
    folder: Path,
    target: str,
    *,
    copies: int = COPIES,
    backend: str = "asyncio",
    extra: Sequence[str] = (),
) -> Iterator[Fleet]:
    """Redis, ``copies`` servers of ``target`` sharing it (``--store``; ``extra`` options to each)
    and nginx balancing over them (see the module's docstring); everything stopped at the end."""
    with running_redis() as redis:
        options = ["--store", redis.url, *extra]
        with serve(folder, target, backend=backend, extra=options, copies=copies) as servers:
            with running_nginx([served.base_url for served in servers]) as balancer:
                # (servers: the list serve() stops at the end, revived servers included)
                yield Fleet(redis, servers, balancer, folder)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if "--" not in arguments:
        print("usage: python -m tests.fleet TARGET [options] -- COMMAND ... {url} ...", file=sys.stderr)
        return 2
    split = arguments.index("--")
    parser = argparse.ArgumentParser(prog="python -m tests.fleet", description=__doc__)
    parser.add_argument("target")
    parser.add_argument("--copies", type=int, default=COPIES)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--logs", help="copy the servers' logs to this file at the end")
    options = parser.parse_args(arguments[:split])
    command = arguments[split + 1 :]
    with tempfile.TemporaryDirectory(prefix="mcpbind-fleet-") as folder:
        with running_fleet(
            Path(folder), options.target, copies=options.copies, backend=options.backend
        ) as fleet:
            print(f"fleet: {options.copies} servers of {options.target} behind {fleet.url}", file=sys.stderr)
            run = [part.replace("{url}", fleet.url) for part in command]
            status = subprocess.run(run, check=False).returncode
        logs = fleet.logs()  # (once they stopped)
    if options.logs:
        Path(options.logs).write_text(logs, encoding="utf-8")
    if status != 0:
        print(logs, file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
