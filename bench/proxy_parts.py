"""The processes of ``bench/proxy.py``: the command of each setup in each direction (the server
alone, ``mcpbind proxy``, ``mcp-proxy`` and ``supergateway``), supergateway's npm install, a
process that serves HTTP on 127.0.0.1 (:class:`Front`) and the CPU time of its process tree.

mcp-proxy (PyPI) runs in a venv of its own made by ``bench/peers.py``; supergateway (npm) is
installed with npm into ``.bench/npm/supergateway`` (never globally) and run with ``node``
directly (no ``npx`` in between), with ``bench/loopback_only.cjs`` preloaded: supergateway has no
option for its address and would listen on every interface.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench import _proc, peers
from bench.streamable_http import BenchError

ROOT = _proc.ROOT
PATH = "/mcp"
# The one upstream server of every setup: mcpbind's echo server (examples/echo_server.py), over
# stdio as it is, over HTTP through `mcpbind serve`.
UPSTREAM_FILE = ROOT / "examples" / "echo_server.py"
UPSTREAM_TARGET = "examples/echo_server.py:build"

SUPERGATEWAY = "supergateway@4.0.0"
NPM_DIR = ROOT / ".bench" / "npm" / "supergateway"
LOOPBACK_PRELOAD = ROOT / "bench" / "loopback_only.cjs"
MARKER = "bench-peer.json"

PROXIES = ("mcpbind", "mcp-proxy", "supergateway")
LABELS = {
    "direct": "direct (no proxy)",
    "direct-json": "direct (no proxy), JSON answers",
    "direct-sse": "direct (no proxy), SSE answers",
    "mcpbind": "mcpbind proxy",
    "mcp-proxy": "mcp-proxy (PyPI)",
    "supergateway": "supergateway (npm)",
}
MCPBIND_MISSING = "mcpbind proxy not available"


@dataclass(frozen=True)
class Launch:
    """How a setup is started: its command and environment."""

    command: list[str]
    env: dict[str, str]

    def shown(self) -> str:
        """The command line for the report, with this checkout's paths made relative."""
        return shlex.join(self.command).replace(f"{ROOT}/", "").replace(sys.executable, "python")


# -- the commands ----------------------------------------------------------------------------------


def upstream_stdio() -> list[str]:
    return [sys.executable, str(UPSTREAM_FILE)]


def serve_http(port: int, json_response: bool) -> Launch:
    """``mcpbind serve`` of the echo server over Streamable HTTP on 127.0.0.1:``port``."""
    command = [sys.executable, "-m", "mcpbind", "serve", UPSTREAM_TARGET, "--transport", "http"]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    command += ["--json-response"] if json_response else []
    return Launch(command, _proc.server_env())


def supergateway_entry() -> Path:
    return NPM_DIR / "node_modules" / "supergateway" / "dist" / "index.js"


def node() -> str:
    found = shutil.which("node")
    if found is None:
        raise peers.PeerError(
            "supergateway needs Node.js: no `node` on PATH (Debian: apt-get install nodejs npm)"
        )
    return found


def http_front(setup: str, port: int) -> Launch:
    """The echo server over stdio behind ``setup``'s proxy, which serves Streamable HTTP on
    127.0.0.1:``port`` at ``/mcp``; ``direct-json`` / ``direct-sse``: the server serving HTTP itself."""
    upstream = upstream_stdio()
    if setup in ("direct-json", "direct-sse"):
        return serve_http(port, json_response=setup == "direct-json")
    if setup == "mcpbind":
        command = [sys.executable, "-m", "mcpbind", "proxy", "--host", "127.0.0.1", "--port", str(port)]
        return Launch([*command, "--log-level", "warning", "--", *upstream], _proc.server_env())
    if setup == "mcp-proxy":
        # Its stdio child gets a minimal environment unless told: -e passes what the server needs.
        command = [str(peers.venv_dir("mcp-proxy") / "bin" / "mcp-proxy"), "--host", "127.0.0.1"]
        command += ["--port", str(port), "--log-level", "WARNING"]
        command += ["-e", "PYTHONPATH", _proc.server_env()["PYTHONPATH"], "--", *upstream]
        return Launch(command, peers.peer_env())
    if setup == "supergateway":
        command = [node(), "--require", str(LOOPBACK_PRELOAD), str(supergateway_entry())]
        command += ["--stdio", shlex.join(upstream), "--outputTransport", "streamableHttp", "--stateful"]
        command += ["--port", str(port), "--logLevel", "none"]
        return Launch(command, _proc.server_env())
    raise ValueError(f"unknown setup {setup!r}")


def stdio_front(setup: str, url: str) -> Launch:
    """A stdio server: the echo server itself (``direct``), or ``setup``'s proxy in front of the
    Streamable HTTP server at ``url``."""
    if setup == "direct":
        return Launch(upstream_stdio(), _proc.server_env())
    if setup == "mcpbind":
        command = [sys.executable, "-m", "mcpbind", "proxy", "--transport", "streamable-http"]
        return Launch([*command, "--log-level", "warning", url], _proc.server_env())
    if setup == "mcp-proxy":
        command = [str(peers.venv_dir("mcp-proxy") / "bin" / "mcp-proxy"), "--transport", "streamablehttp"]
        return Launch([*command, "--log-level", "WARNING", url], peers.peer_env())
    if setup == "supergateway":
        command = [node(), "--require", str(LOOPBACK_PRELOAD), str(supergateway_entry())]
        return Launch([*command, "--streamableHttp", url, "--logLevel", "none"], _proc.server_env())
    raise ValueError(f"unknown setup {setup!r}")


def mcpbind_proxy_missing() -> str | None:
    """None when this checkout has ``mcpbind proxy``; else why it is skipped."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "mcpbind", "proxy", "--help"],
            cwd=ROOT,
            env=_proc.server_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{MCPBIND_MISSING} ({exc})"
    if done.returncode == 0:
        return None
    last = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit {done.returncode}"]
    return f"{MCPBIND_MISSING} (`python -m mcpbind proxy --help`: {last[0]})"


# -- supergateway's install ------------------------------------------------------------------------


def _node_version() -> str:
    out = subprocess.run([node(), "--version"], capture_output=True, text=True, timeout=30, check=False)
    return out.stdout.strip()


def _package_version(name: str) -> str:
    try:
        data = json.loads((NPM_DIR / "node_modules" / name / "package.json").read_text())
    except (OSError, ValueError):
        return "not installed"
    return str(data.get("version", "unknown"))


def supergateway_versions() -> dict[str, str]:
    """What runs supergateway: its version, the TypeScript SDK's and Node.js's."""
    return {
        "supergateway": _package_version("supergateway"),
        "@modelcontextprotocol/sdk": _package_version("@modelcontextprotocol/sdk"),
        "express": _package_version("express"),
        "node": _node_version(),
    }


def ensure_supergateway(rebuild: bool = False) -> Path:
    """supergateway's entry script, installed with npm into ``.bench/npm/supergateway`` first when
    it is missing, was installed at another version or by another Node.js, or ``rebuild``."""
    wanted = {"package": SUPERGATEWAY, "node": _node_version()}
    marker = NPM_DIR / MARKER
    try:
        current = json.loads(marker.read_text()).get("wanted") == wanted and supergateway_entry().exists()
    except (OSError, ValueError, AttributeError):
        current = False
    if current and not rebuild:
        return supergateway_entry()
    npm = shutil.which("npm")
    if npm is None:
        raise peers.PeerError("supergateway needs npm on PATH (Debian: apt-get install npm)")
    if NPM_DIR.exists():
        shutil.rmtree(NPM_DIR)
    NPM_DIR.mkdir(parents=True)
    print(f"bench: installing {SUPERGATEWAY} with npm into {NPM_DIR} ...", file=sys.stderr, flush=True)
    command = [npm, "install", "--prefix", str(NPM_DIR), "--no-fund", "--no-audit", "--loglevel", "error"]
    try:
        done = subprocess.run(
            [*command, SUPERGATEWAY], capture_output=True, text=True, timeout=600, check=False
        )
    except subprocess.TimeoutExpired:
        raise peers.PeerError(f"npm install {SUPERGATEWAY} did not finish within 600 s") from None
    if done.returncode != 0 or not supergateway_entry().exists():
        tail = (done.stdout + done.stderr).strip()[-3000:]
        raise peers.PeerError(f"npm install {SUPERGATEWAY} failed (exit {done.returncode}):\n{tail}")
    marker.write_text(json.dumps({"wanted": wanted, "versions": supergateway_versions()}, indent=1))
    return supergateway_entry()


# -- processes -------------------------------------------------------------------------------------


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (children of any of its threads, and theirs)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                kids = [int(c) for c in Path(f"/proc/{parent}/task/{task}/children").read_text().split()]
            except (OSError, ValueError):
                continue
            found += kids
            todo += kids
    return found


def cpu_of(pids: list[int]) -> float:
    """CPU seconds of the live processes ``pids`` (all their threads)."""
    total = 0.0
    for pid in pids:
        seconds = _proc.cpu_seconds(pid)
        if seconds == seconds:  # (NaN: the process is gone)
            total += seconds
    return total


_LOOPBACK = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1 and ::1, as /proc shows them


def listening_addresses(port: int) -> set[str]:
    """The local addresses (hex, as /proc/net/tcp{,6} give them) of the sockets listening on ``port``."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, _, hex_port = fields[1].partition(":")
            if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


class Front(_proc.LoggedProcess):
    """A process that serves HTTP on 127.0.0.1:``port`` (a proxy and the stdio server it spawned,
    or a server alone), in a process group of its own; ready once it accepts connections, and
    checked to listen on the loopback interface only. :meth:`close` stops the whole tree (SIGTERM
    to the process, then SIGKILL after 10 s to its group and to any descendant left) and reaps it."""

    def __init__(self, name: str, launch: Launch, port: int, start_timeout: float) -> None:
        self.name = name
        self.launch = launch
        self.port = port
        self.url = f"http://127.0.0.1:{port}{PATH}"
        # (stdin kept open: supergateway stops when its stdin ends)
        self.start(
            launch.command,
            env=launch.env,
            start_timeout=start_timeout,
            stdin=subprocess.PIPE,
            new_session=True,
        )

    def fail(self, what: str) -> BenchError:
        printed = self.text()
        return BenchError(
            f"{self.name}: {what}" + (f"\n--- its output ---\n{printed}\n---" if printed else "")
        )

    def wait_ready(self, timeout: float) -> None:
        import socket

        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise self.fail(f"`{self.launch.shown()}` exited {self.proc.returncode} before listening")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise self.fail(f"`{self.launch.shown()}` not listening after {timeout:g} s") from None
                time.sleep(0.05)
        beyond = listening_addresses(self.port) - _LOOPBACK
        if beyond:
            raise self.fail(f"listens beyond the loopback interface (addresses {sorted(beyond)}); stopped")

    def cpu(self) -> tuple[float, float]:
        """CPU seconds so far of the process itself and of its descendants (the upstream server)."""
        return _proc.cpu_seconds(self.pid), cpu_of(descendants(self.pid))

    def close(self) -> str:
        """Stop it and everything it started; what it printed, if anything."""
        tree = descendants(self.pid)
        try:
            if self.proc.stdin is not None:
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass
            if self.proc.poll() is None:
                # The proxy first, which stops its server as it would on Ctrl-C; the group after.
                self.proc.terminate()
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            _signal_group(self.pid, signal.SIGKILL)
            for pid in tree:  # (one that left the group)
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            _proc.reap(self.proc)
            printed = self.text()
            self.output.close()
        # (uvicorn's start and stop lines aside)
        return "\n".join(ln for ln in printed.splitlines() if not ln.startswith("INFO: ")).strip()


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except OSError:
        pass
