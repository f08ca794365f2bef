"""What the interop tests of ``mcpbind proxy`` share: the TypeScript reference server
``@modelcontextprotocol/server-everything`` (installed with npm into the npm peers' cache
folder, ``MCPBIND_NPM_PEERS``, as tests/interop/test_http_client_peers.py does), and
``mcpbind proxy`` started in a child process.

Without node or npm the tests using them skip, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, NoReturn

import pytest

from tests.cli_harness import free_port, mcpbind_command, stop, wait_listening
from tests.harness import child_env

__all__ = [
    "EVERYTHING",
    "NPM_CACHE",
    "everything_command",
    "everything_proxy",
    "install_everything",
    "listening_child",
    "node",
    "proxy_serving",
]

NPM_CACHE = Path(os.environ.get("MCPBIND_NPM_PEERS", Path(tempfile.gettempdir()) / "mcpbind-npm-peers"))
EVERYTHING = "@modelcontextprotocol/server-everything"


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail under CI=true, when a peer cannot be run here."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (required under CI=true)")
    pytest.skip(reason)


def node() -> str:
    """The node executable (skips the test when there is none)."""
    found = shutil.which("node")
    if found is None:
        unavailable("node is needed to run the TypeScript peers")
    return found


def install_everything() -> Path:
    """The server-everything entry point (``dist/index.js``), installed with npm into
    ``NPM_CACHE`` on first use."""
    node()
    npm = shutil.which("npm")
    if npm is None:
        unavailable("npm is needed to install server-everything")
    entry = NPM_CACHE / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if not entry.is_file():
        NPM_CACHE.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "npm_config_update_notifier": "false", "npm_config_fund": "false"}
        if not (NPM_CACHE / "package.json").is_file():
            subprocess.run([npm, "init", "-y"], cwd=NPM_CACHE, env=env, check=True, capture_output=True)
        result = subprocess.run(
            [npm, "install", "--no-audit", "--silent", EVERYTHING],
            cwd=NPM_CACHE,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if result.returncode != 0 or not entry.is_file():
            unavailable(f"npm could not install {EVERYTHING}: {result.stderr.strip()[-500:]}")
    return entry


def everything_command() -> list[str]:
    """The command line of server-everything over stdio."""
    return [node(), str(install_everything()), "stdio"]


@contextmanager
def everything_proxy() -> Iterator[str]:
    """``mcpbind proxy`` serving server-everything, from when the server has asked for its
    client's roots (350 ms after its initialization, when no client of the proxy can answer:
    it says so on stderr), so that this question never lands in a test's call; its MCP URL."""
    with proxy_serving(
        *everything_command(), ready=lambda printed: "Failed to request roots" in printed
    ) as url:
        yield url


@contextmanager
def proxy_serving(
    *server: str,
    options: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    ready: Callable[[str], bool] | None = None,
) -> Iterator[str]:
    """``mcpbind proxy --port P OPTIONS -- SERVER...`` in a child process (its environment, which
    the server inherits, with ``env`` added), on a free port of 127.0.0.1, from when it listens
    (and ``ready`` holds for what it printed on stderr) until the block ends (then it is
    stopped); yields its MCP URL. What the proxy and the server print on stderr is shown when
    the block fails."""

    def command(port: int) -> list[str]:
        return mcpbind_command("proxy", "--port", str(port), *options, "--", *server)

    with listening_child(command, {**child_env(), **(env or {})}, "mcpbind proxy", ready) as url:
        yield url


@contextmanager
def listening_child(
    command: Callable[[int], list[str]],
    env: dict[str, str] | None,
    name: str,
    ready: Callable[[str], bool] | None = None,
) -> Iterator[str]:
    """``command(port)`` (a server listening on ``port``) in a child process with ``env`` (or
    this one's), from when it listens on a free port of 127.0.0.1 (and ``ready`` holds for what
    it printed on stderr, within 30 s) until the block ends (then it is stopped); yields its MCP
    URL. A port is free only until the child binds it: when another
    process took it meanwhile (the child holds no socket listening on it), another port is
    tried. What the child printed on stderr is shown when the block fails."""
    for attempt in range(_ATTEMPTS):
        port = free_port()
        with tempfile.TemporaryFile() as errors:
            process = subprocess.Popen(
                command(port), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors
            )
            try:
                try:
                    wait_listening(port, process)
                except AssertionError:
                    if attempt + 1 == _ATTEMPTS:
                        raise
                    continue  # (it could not bind the port)
                if not _listens_on(process.pid, port):
                    if attempt + 1 == _ATTEMPTS:
                        raise AssertionError(f"another process took port {port} from {name}")
                    continue
                if ready is not None:
                    _wait_printed(errors, ready, name)
                yield f"http://127.0.0.1:{port}/mcp"
                return
            except BaseException:
                errors.seek(0)
                print(f"{name} printed:\n{errors.read().decode(errors='replace')[-4000:]}")
                raise
            finally:
                stop(process)


_ATTEMPTS = 3


def _wait_printed(printed: IO[bytes], ready: Callable[[str], bool], name: str) -> None:
    """Until ``ready`` holds for what was written to ``printed`` (at most 30 s)."""
    deadline = time.monotonic() + 30
    while True:
        printed.seek(0)
        if ready(printed.read().decode(errors="replace")):
            return
        assert time.monotonic() < deadline, f"{name} was not ready within 30 s"
        time.sleep(0.02)


def _listens_on(pid: int, port: int) -> bool:
    """Whether the process ``pid`` holds the socket listening on TCP ``port`` (Linux: from
    /proc; elsewhere, whether the process still runs)."""
    try:
        tables = [Path(t).read_text().splitlines()[1:] for t in ("/proc/net/tcp", "/proc/net/tcp6")]
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return _runs(pid)
    listening = {
        f"socket:[{fields[9]}]"
        for table in tables
        for fields in (line.split() for line in table)
        if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port
    }
    for descriptor in descriptors:
        try:
            if os.readlink(f"/proc/{pid}/fd/{descriptor}") in listening:
                return True
        except OSError:
            continue
    return False


def _runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True
