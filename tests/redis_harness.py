"""A real Redis server for the tests: Debian's ``redis-server`` (``.ci/run`` installs it), started
on 127.0.0.1 on a port of its own, with nothing written to disk, and stopped when the block
ends.

``RedisServer.stop()`` and ``start()`` let a test take Redis away and bring it back on the same
port (a restart, or Redis unreachable for a while). Tests that need Redis use the session-wide
fixture ``redis_server`` (tests/conftest.py), or ``running_redis()`` for one of their own.
The scale benchmark (``bench/scale.py``) starts its Redis with ``running_redis()`` too.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["RedisServer", "free_port", "redis_server_binary", "running_redis"]

START_TIMEOUT = 10.0

# The timeout of the stores the tests open on a Redis that stays up: a busy 2-core machine may
# take a second or more to answer; a stopped Redis refuses connections at once whatever it is.
STORE_TIMEOUT = 10.0


def free_port() -> int:
    """A port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def redis_server_binary() -> str | None:
    """Where ``redis-server`` is, or None."""
    return shutil.which("redis-server") or next(
        (path for path in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if Path(path).exists()), None
    )


class RedisServer:
    """One ``redis-server`` process on ``127.0.0.1:port``; :attr:`url` is ``redis://127.0.0.1:PORT/0``."""

    def __init__(self, binary: str, folder: Path, port: int | None = None) -> None:
        self.binary = binary
        self.folder = folder
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start it (again, on the same port) and wait until it answers PING."""
        if self.process is not None and self.process.poll() is None:
            return
        log = (self.folder / "redis.log").open("ab")
        self.process = subprocess.Popen(
            [
                self.binary,
                "--bind", "127.0.0.1",
                "--port", str(self.port),
                "--save", "",
                "--appendonly", "no",
                "--dir", str(self.folder),
                "--protected-mode", "yes",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited at start: {self.log_tail()}")
            if self.ping():
                return
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"redis-server did not answer within {START_TIMEOUT} s: {self.log_tail()}")

    def stop(self) -> None:
        """Stop it at once (SIGKILL: whatever it held is gone, as after a crash)."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def ping(self) -> bool:
        """Whether it answers ``PING`` now (plain RESP over a socket)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def flush(self) -> None:
        """Empty every database (between tests sharing one server)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=2.0) as conn:
            conn.sendall(b"FLUSHALL\r\n")
            if not conn.recv(64).startswith(b"+OK"):
                raise RuntimeError("FLUSHALL refused")

    def channels(self, pattern: str = "*") -> set[str]:
        """The publish/subscribe channels matching ``pattern`` that some client subscribes to
        now (``PUBSUB CHANNELS``)."""
        words = [b"PUBSUB", b"CHANNELS", pattern.encode()]
        request = b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in words)
        with socket.create_connection(("127.0.0.1", self.port), timeout=2.0) as conn:
            conn.sendall(request)
            reply = conn.makefile("rb")
            head = reply.readline()
            if not head.startswith(b"*"):
                raise RuntimeError(f"PUBSUB CHANNELS refused: {head!r}")
            found = set()
            for _ in range(int(head[1:])):
                size = int(reply.readline()[1:])
                found.add(reply.read(size + 2)[:size].decode())
            return found

    def log_tail(self) -> str:
        path = self.folder / "redis.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""


@contextmanager
def running_redis() -> Iterator[RedisServer]:
    """A started :class:`RedisServer` in a folder of its own, stopped and removed at the end."""
    binary = redis_server_binary()
    if binary is None:
        raise RuntimeError(
            "redis-server is not installed (Debian: apt-get install redis-server; .ci/run does)"
        )
    with tempfile.TemporaryDirectory(prefix="mcpbind-redis-") as folder:
        server = RedisServer(binary, Path(folder))
        server.start()
        try:
            yield server
        finally:
            server.stop()
