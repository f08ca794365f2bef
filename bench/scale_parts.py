"""The processes of ``bench/scale.py``: ``mcpbind serve --transport http`` with ``--workers`` and
``--store`` (:class:`Serve`), Redis and nginx, and what is read from them (CPU time of a
process tree, Redis's ``INFO``).

Redis and nginx are the test suite's harnesses (``tests/redis_harness.py``,
``tests/nginx_harness.py``), used as they are: Debian's ``redis-server`` and ``nginx`` on free
ports of 127.0.0.1, with nothing left behind. The benchmark runs from the repository root (``python
-m bench``), where ``tests`` is a package.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench import _proc
from bench.streamable_http import BenchError, free_port
from tests.nginx_harness import NginxBalancer, running_nginx
from tests.redis_harness import RedisServer, running_redis

__all__ = [
    "NginxBalancer",
    "RedisServer",
    "RespConnection",
    "Serve",
    "key_sizes",
    "redis_info",
    "redis_keys",
    "redis_pid",
    "running_nginx",
    "running_redis",
    "serving",
    "tree_cpu_seconds",
]

ROOT = _proc.ROOT
PATH = "/mcp"
_SERVES = re.compile(rb"^mcpbind: worker \d+ \(pid (\d+)\) serves$", re.MULTILINE)


def children(pid: int) -> list[int]:
    """The process ids of ``pid``'s children (none when it is gone)."""
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of ``pid`` and of its children (a supervisor and its workers), live processes
    only (see :func:`bench._proc.cpu_seconds`)."""
    return _proc.cpu_seconds(pid) + sum(_proc.cpu_seconds(child) for child in children(pid))


class Serve(_proc.LoggedProcess):
    """``python -m mcpbind serve TARGET --transport http --port P --workers N [--store URL]
    [--json-response]``, from this checkout, on 127.0.0.1; :meth:`close` stops it (SIGTERM, then
    SIGKILL) and reaps it. Ready once it accepts connections and, with several workers, once
    each of them said it serves."""

    def __init__(
        self,
        target: str,
        workers: int,
        store: str | None,
        *,
        json_response: bool = True,
        start_timeout: float = 60.0,
    ) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = self.base + PATH
        self.workers = workers
        command = [sys.executable, "-m", "mcpbind", "serve", target, "--transport", "http"]
        command += ["--port", str(self.port), "--workers", str(workers)]
        command += ["--store", store] if store else []
        command += ["--json-response"] if json_response else []
        self.command = command
        env = _proc.server_env()
        env["PYTHONPATH"] += ":" + str(ROOT)  # (a server file may import examples.*)
        self.start(command, env=env, start_timeout=start_timeout)

    def _serving(self) -> int:
        self.output.seek(0)
        return len(set(_SERVES.findall(self.output.read())))

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise BenchError(f"{' '.join(self.command)} exited {self.proc.returncode}:\n{self.text()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                if self.workers == 1 or self._serving() >= self.workers:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise BenchError(f"{' '.join(self.command)}: not serving after {timeout:g} s:\n{self.text()}")
            time.sleep(0.05)

    def cpu_seconds(self) -> float:
        return tree_cpu_seconds(self.pid)

    def close(self) -> str:
        """Stop it; what it printed, if anything beyond the supervisor's own lines."""
        try:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(30)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            _proc.reap(self.proc)
            text = self.text()
            self.output.close()
        # (uvicorn's and the supervisor's start and stop lines aside)
        lines = [ln for ln in text.splitlines() if not ln.startswith(("mcpbind: ", "INFO: "))]
        return "\n".join(lines).strip()


@contextmanager
def serving(
    target: str, workers: int, store: str | None, notes: list[str], *, json_response: bool = True
) -> Iterator[Serve]:
    """A started :class:`Serve`, stopped at the end; anything it printed goes to ``notes``."""
    server = Serve(target, workers, store, json_response=json_response)
    try:
        yield server
    finally:
        printed = server.close()
        if printed:
            notes.append(f"`{' '.join(server.command[2:])}` printed: {printed[:500]}")


class RespConnection:
    """A plain RESP2 connection to a :class:`RedisServer` (commands of words, answers parsed),
    for reading ``INFO`` and key sizes beside what the servers do."""

    def __init__(self, server: RedisServer) -> None:
        self.sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        self.reader = self.sock.makefile("rb")

    def __enter__(self) -> RespConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.reader.close()
        self.sock.close()

    def command(self, *words: str) -> Any:
        encoded = [w.encode() for w in words]
        self.sock.sendall(
            b"*%d\r\n" % len(encoded) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in encoded)
        )
        return self._answer()

    def _answer(self) -> Any:
        line = self.reader.readline()
        if not line.endswith(b"\r\n"):
            raise BenchError("redis-server closed the connection")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise BenchError(f"redis-server: {rest.decode()}")
        if kind == b":":
            return int(rest)
        if kind == b"$":
            size = int(rest)
            return None if size < 0 else self.reader.read(size + 2)[:-2]
        if kind == b"*":
            size = int(rest)
            return None if size < 0 else [self._answer() for _ in range(size)]
        raise BenchError(f"unexpected answer from redis-server: {line[:100]!r}")


def redis_info(server: RedisServer, *sections: str) -> dict[str, str]:
    """The ``field:value`` lines of ``INFO SECTION ...``."""
    with RespConnection(server) as conn:
        text = conn.command("INFO", *sections)
    fields: dict[str, str] = {}
    for line in bytes(text).decode().splitlines():
        name, colon, value = line.partition(":")
        if colon and not line.startswith("#"):
            fields[name] = value
    return fields


def key_sizes(server: RedisServer) -> dict[str, int]:
    """Every key of database 0 with the bytes Redis accounts to it (``MEMORY USAGE key SAMPLES
    0``: the whole value, its key and Redis's overhead for them)."""
    sizes: dict[str, int] = {}
    with RespConnection(server) as conn:
        cursor = "0"
        while True:
            cursor_bytes, keys = conn.command("SCAN", cursor, "COUNT", "1000")
            for key in keys:
                size = conn.command("MEMORY", "USAGE", key.decode(), "SAMPLES", "0")
                if size is not None:
                    sizes[key.decode()] = int(size)
            cursor = cursor_bytes.decode()
            if cursor == "0":
                return sizes


def redis_keys(server: RedisServer) -> int:
    """How many keys database 0 holds (``INFO keyspace``)."""
    db0 = redis_info(server, "keyspace").get("db0", "keys=0")
    return int(db0.split(",")[0].partition("=")[2])


def redis_pid(server: RedisServer) -> int:
    if server.process is None:
        raise BenchError("redis-server is not running")
    return server.process.pid
