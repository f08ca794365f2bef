"""``tools/call`` echo over Streamable HTTP: mcpbind beside the official SDK, FastMCP and a raw ASGI floor.

Every server is one of ``bench/streamable_http_servers.py``'s apps (mcpbind's
``StreamableHTTPApp``, the official SDK's low-level ``Server`` and its decorator ``MCPServer``,
each in JSON-response, SSE and stateless mode for 2025-11-25 requests and in the 2026-07-28
modes, and a raw msgspec ASGI app as the floor), or FastMCP's app (2026-07-28 modes only, in its
venv, by ``bench/fastmcp_echo_server.py``), run by uvicorn (one worker, no access log) in a
process of its own on 127.0.0.1.

Each server runs as a user installs it (``--install user``, the default): the official SDK's in
its venv (``.bench/venvs/official``, made by ``bench/peers.py``: what ``pip install mcp`` brings),
FastMCP's in its venv, mcpbind's and the floor's with this interpreter (what ``pip install
"mcpbind[http]"`` brings), each under uvicorn's defaults there (``--http auto --loop auto``:
httptools and uvloop when that environment has them, else h11 and the asyncio loop). With
``--install shared``, every server but FastMCP's runs with this interpreter (which then needs
``mcp``), on the asyncio loop, with httptools when installed: like for like, what the install
brings left out. ``--http`` and ``--loop`` force a parser or a loop on every server.

For each server, in each round: spawn it, open a session with httpx (``initialize``, then
``notifications/initialized``), check that one ``tools/call`` through httpx returns the echoed
text, warm up, then load it with ``wrk`` at each concurrency (1, 16, 64 connections, one wrk
thread, one session shared by all connections: every request carries the session's
``Mcp-Session-Id`` and ``MCP-Protocol-Version``, and an id of its own). wrk's Lua script checks
every answer (status 200, the echoed text in the body, no ``"error"``); any socket error, non-2xx
status or wrong body fails the run. In the 2026-07-28 modes (``modern``: JSON responses asked
for, ``modern-sse``: each app's defaults) there is no session: every request is a ``tools/call``
whose ``_meta`` carries the version and the client's capabilities and info, with the
``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers, and every answer must also say
``"resultType":"complete"``. calls/s is wrk's completed requests over its run time; p50
and p99 come from wrk's latency histogram; server CPU µs/call is the server process's CPU time
over the phase (all threads, /proc schedstat) per call.

Then, once per stateful server: RSS (``VmRSS``) after one session was opened, used and deleted;
with ``--sessions`` (1,000) more open, each having made one call; and after all of them were
deleted. Per-session memory is the difference over the number of sessions.

Servers are always killed and reaped, on error too. Tables give medians over the rounds with the
min-max range; ratios use medians. The load generator and the server share the machine's CPUs
(``--cpus free``, the default: nothing is pinned), or ``--cpus split`` pins wrk to one CPU and the
server to another.

    PYTHONPATH=runtime:generated python bench/streamable_http.py [--quick] [--rounds N]
        [--impls mcpbind,official-lowlevel,...] [--modes json,sse,stateless,modern,modern-sse]
        [--install user|shared] [--cpus free|split] [--http auto|h11|httptools] [--loop auto|asyncio|uvloop]

Needs ``wrk`` (``apt-get install wrk``; the script offers to install it when it runs as root),
uvicorn and httpx; the official SDK's and FastMCP's venvs are made by ``bench/peers.py`` on first
use.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import platform
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: bench._proc is imported from the repository root
    sys.path.insert(0, str(ROOT))

from bench import _proc, peers  # noqa: E402
from bench._proc import fmt_ratio, med, ratio, version_of  # noqa: E402

# -- small helpers (bench/_proc.py has those shared with bench/stdio.py) -------------------------


def fmt_num(value: float) -> str:
    return _proc.fmt_num(value, decimals=1)


def fmt_range(values: Sequence[float]) -> str:
    return _proc.fmt_range(values, decimals=1)


def commit() -> str:
    """This checkout's commit, and whether the code the servers run has uncommitted changes."""
    return _proc.commit(("runtime", "generated", "examples", "bench"))


PROTOCOL_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
PATH = "/mcp"
ECHO_TEXT = "hello from wrk"
ACCEPT = "application/json, text/event-stream"
CLIENT_NAME = "bench-streamable-http"
# What a 2026-07-28 request carries in its params' _meta in place of a session (no initialize).
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": CLIENT_NAME, "version": "0.1.0"},
}

IMPLEMENTATIONS = {
    "mcpbind": "mcpbind",
    "official-lowlevel": "official SDK low-level Server",
    "official-mcpserver": "official SDK MCPServer (decorators)",
    "fastmcp": "FastMCP",
    "raw-floor": "raw msgspec ASGI app (floor)",
}
MODES = {
    "json": "JSON",
    "sse": "SSE",
    "stateless": "stateless (JSON)",
    "modern": "2026-07-28 (JSON)",
    "modern-sse": "2026-07-28, SSE allowed (defaults)",
}
# The modes whose requests are 2026-07-28 ones (no initialize, no session, _meta in each request).
MODERN_MODES = ("modern", "modern-sse")
# The modes run when --modes is not given: modern-sse is run only when named.
DEFAULT_MODES = ("json", "sse", "stateless", "modern")
OFFICIAL = ("official-lowlevel", "official-mcpserver")
# Implementations run in the 2026-07-28 modes only (FastMCP's 2025 path is the official SDK's
# session manager, measured above; leaving it out keeps the suite's time).
MODERN_ONLY = ("fastmcp",)


# How the servers are installed (--install).
INSTALLS = {
    "user": "each server as a user installs it: the official SDK's in its venv, mcpbind's with this "
    "interpreter, each with uvicorn's defaults there (below)",
    "shared": "every server but FastMCP's with this interpreter, like for like (below)",
}


class BenchError(Exception):
    """A wrong answer, an error status, a server that died or never came up: the run stops."""


@dataclass(frozen=True)
class Config:
    implementation: str
    mode: str

    @property
    def name(self) -> str:
        return (
            self.implementation
            if self.implementation == "raw-floor"
            else f"{self.implementation}/{self.mode}"
        )

    @property
    def label(self) -> str:
        return IMPLEMENTATIONS[self.implementation]

    @property
    def mode_label(self) -> str:
        return "no sessions" if self.implementation == "raw-floor" else MODES[self.mode]

    @property
    def modern(self) -> bool:
        """Whether its requests are 2026-07-28 ones (the floor's never are)."""
        return self.mode in MODERN_MODES and self.implementation != "raw-floor"


# -- wrk -------------------------------------------------------------------------------------------

LUA = r"""
-- Generated by bench/streamable_http.py: POST tools/call echo, each request with an id of its own.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = %(accept)s
wrk.headers["MCP-Protocol-Version"] = %(version)s
%(more_headers)s
local body = %(body)s
local expect = %(expect)s
local expect_also = %(expect_also)s
local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  next_id = tid * 1000000000
  bad = 0
  first_bad = ""
end

function request()
  next_id = next_id + 1
  return wrk.format(nil, nil, nil, string.format(body, next_id))
end

function response(status, headers, answer)
  if status ~= 200 or not string.find(answer, expect, 1, true) or not string.find(answer, expect_also, 1, true)
      or string.find(answer, '"error"', 1, true) then
    bad = bad + 1
    if first_bad == "" then
      first_bad = status .. " " .. string.sub(answer, 1, 400)
    end
  end
end

function done(summary, latency, requests)
  local nbad = 0
  local sample = ""
  for _, t in ipairs(threads) do
    nbad = nbad + t:get("bad")
    if sample == "" then sample = t:get("first_bad") end
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH {"requests":%%d,"duration_us":%%d,"p50_us":%%d,"p99_us":%%d,"max_us":%%d,'
    .. '"connect":%%d,"read":%%d,"write":%%d,"status":%%d,"timeout":%%d,"bad":%%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout, nbad))
  io.write("BENCH_SAMPLE " .. string.gsub(sample, "\n", "\\n") .. "\n")
end
"""


def lua_string(value: str) -> str:
    return json.dumps(value)  # a JSON string literal is a valid Lua string literal for ASCII text


def call_params(text: str, modern: bool) -> dict[str, Any]:
    """The params of a tools/call of echo; a 2026-07-28 one carries the version and the client's
    capabilities and info in its _meta."""
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": text}}
    if modern:
        params["_meta"] = MODERN_META
    return params


def request_headers(session_id: str | None, modern: bool, method: str | None) -> dict[str, str]:
    """The headers of a POST: 2026-07-28 requests name the method (and tools/call the tool) in
    ``Mcp-Method`` and ``Mcp-Name``, and have no session."""
    headers = {
        "Accept": ACCEPT,
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN_VERSION if modern else PROTOCOL_VERSION,
    }
    if modern and method is not None:
        headers["Mcp-Method"] = method
        if method == "tools/call":
            headers["Mcp-Name"] = "echo"
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    return headers


def lua_script(session_id: str | None, modern: bool = False) -> str:
    params = json.dumps(call_params(ECHO_TEXT, modern), separators=(",", ":"))
    # The id is formatted in by the script (string.format): no other % may be in the body.
    body = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":' + params.replace("%", "%%") + "}"
    headers = request_headers(session_id, modern, "tools/call")
    more = "\n".join(
        f"wrk.headers[{lua_string(k)}] = {lua_string(v)}"
        for k, v in headers.items()
        if k not in ("Accept", "Content-Type", "MCP-Protocol-Version")
    )
    return LUA % {
        "accept": lua_string(ACCEPT),
        "version": lua_string(headers["MCP-Protocol-Version"]),
        "more_headers": more,
        "body": lua_string(body),
        "expect": lua_string(f'"text":"{ECHO_TEXT}"'),
        # Every 2026-07-28 answer must say it is the final one.
        "expect_also": lua_string('"resultType":"complete"' if modern else ""),
    }


@dataclass(frozen=True)
class WrkResult:
    calls: int
    seconds: float
    p50_us: float
    p99_us: float

    @property
    def rate(self) -> float:
        return self.calls / self.seconds


def ensure_wrk() -> str:
    """The path of wrk; installed with apt-get when missing and this process is root."""
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        log("wrk is missing: installing the Debian package (apt-get install -y wrk)")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        install = ["apt-get", "install", "-y", "-q", "wrk"]
        if subprocess.run(install, env=env, stdout=subprocess.DEVNULL, check=False).returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], env=env, stdout=subprocess.DEVNULL, check=False)
            subprocess.run(install, env=env, stdout=subprocess.DEVNULL, check=False)
        found = shutil.which("wrk")
        if found:
            return found
    raise BenchError(
        "wrk (the HTTP load generator) is not installed: install it, e.g. `apt-get install wrk` "
        "on Debian or Ubuntu, `brew install wrk` on macOS"
    )


def wrk_version(wrk: str) -> str:
    try:
        out = subprocess.run([wrk, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    words = out.split()
    return words[1] if len(words) > 1 else "unknown"


def run_wrk(
    wrk: str,
    url: str,
    script: Path,
    connections: int,
    seconds: float,
    threads: int,
    what: str,
    cpus: frozenset[int] = frozenset(),
) -> WrkResult:
    threads = max(1, min(threads, connections))
    cmd = [
        *pinned(cpus),
        wrk,
        f"-t{threads}",
        f"-c{connections}",
        f"-d{max(1, round(seconds))}s",
        "--timeout",
        "10s",
        "--latency",
        "-s",
        str(script),
        url,
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    except subprocess.TimeoutExpired:
        raise BenchError(f"{what}: wrk did not finish: {shlex.join(cmd)}") from None
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("BENCH ")), None)
    if proc.returncode != 0 or line is None:
        raise BenchError(
            f"{what}: wrk failed (exit {proc.returncode}): {shlex.join(cmd)}\n{proc.stdout}\n{proc.stderr}"
        )
    stats: dict[str, int] = json.loads(line[len("BENCH ") :])
    sample = next(
        (ln[len("BENCH_SAMPLE ") :] for ln in proc.stdout.splitlines() if ln.startswith("BENCH_SAMPLE")), ""
    )
    failures = {k: stats[k] for k in ("connect", "read", "write", "status", "timeout", "bad") if stats[k]}
    if failures:
        raise BenchError(
            f"{what}: {stats['requests']:,} answers, failures {failures} "
            f"(status: non-2xx/3xx answers; bad: wrong status or body); first bad answer: {sample!r}"
        )
    if stats["requests"] == 0:
        raise BenchError(f"{what}: no answer at all in {seconds:g} s")
    return WrkResult(stats["requests"], stats["duration_us"] / 1e6, stats["p50_us"], stats["p99_us"])


# -- where the servers run --------------------------------------------------------------------------

# The implementations whose servers run in a peer's venv (bench/peers.py) when installed as users
# install them; the others run with this interpreter (mcpbind from this checkout).
USER_VENVS = {"official-lowlevel": "official", "official-mcpserver": "official", "fastmcp": "fastmcp"}


def venv_of(implementation: str, install: str) -> str | None:
    """The peer venv an implementation's server runs in; None: this interpreter."""
    if implementation == "fastmcp" or install == "user":
        return USER_VENVS.get(implementation)
    return None


@dataclass(frozen=True)
class Placement:
    """The CPUs of the load generator and of the server; empty sets: not pinned."""

    generator: frozenset[int] = frozenset()
    server: frozenset[int] = frozenset()

    @classmethod
    def of(cls, mode: str) -> Placement:
        if mode == "free":
            return cls()
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            raise BenchError(f"--cpus split needs two CPUs; this process may use {cpus}")
        return cls(frozenset(cpus[:1]), frozenset(cpus[1:2]))

    def describe(self) -> str:
        if not self.server:
            return "nothing pinned: wrk and the server share the CPUs"
        return f"wrk pinned to CPU {min(self.generator)}, the server to CPU {min(self.server)}"


def pinned(cpus: frozenset[int]) -> list[str]:
    """The prefix that runs a command on ``cpus`` (taskset execs it: the pid is the command's)."""
    if not cpus:
        return []
    taskset = shutil.which("taskset")
    if taskset is None:
        raise BenchError("--cpus split needs taskset (util-linux)")
    return [taskset, "-c", ",".join(str(c) for c in sorted(cpus))]


# What a server's environment has that decides how uvicorn serves it.
STACK = (
    "uvicorn",
    "httptools",
    "uvloop",
    "h11",
    "mcp",
    "starlette",
    "pydantic",
    "anyio",
    "msgspec",
    "fastmcp",
)


def stack_of(python: str) -> dict[str, str]:
    """The versions of ``STACK`` an interpreter sees (absent: not installed there)."""
    env = peers.peer_env() if python != sys.executable else _proc.server_env()
    try:
        return peers.versions_seen(python, STACK, env)
    except peers.PeerError as exc:
        raise BenchError(str(exc)) from None


def served_by(versions: dict[str, str], http: str, loop: str) -> str:
    """How uvicorn serves an app in an environment with ``versions``, for the report."""
    parser = http if http != "auto" else "httptools" if "httptools" in versions else "h11"
    event_loop = loop if loop != "auto" else "uvloop" if "uvloop" in versions else "asyncio"
    return f"{parser} {versions.get(parser, '?')}, {event_loop} loop" + (
        f" (uvloop {versions.get('uvloop', '?')})" if event_loop == "uvloop" else ""
    )


def environments(results: dict[Config, Samples], args: argparse.Namespace) -> list[str]:
    """One line per environment the servers ran in: which servers, what it holds, how uvicorn served."""
    where: dict[str | None, list[str]] = {}
    for cfg in results:
        where.setdefault(venv_of(cfg.implementation, args.install), []).append(cfg.label)
    lines = []
    for peer, labels in where.items():
        python = sys.executable if peer is None else str(peers.python_of(peer))
        versions = stack_of(python)
        place = "this interpreter" if peer is None else f"the {peer} venv (.bench/venvs/{peer})"
        held = ", ".join(f"{k} {v}" for k, v in versions.items())
        missing = [k for k in ("httptools", "uvloop") if k not in versions]
        lines.append(
            f"{', '.join(dict.fromkeys(labels))}: {place}; {held}"
            + (f"; no {' nor '.join(missing)} there" if missing else "")
            + f"; served by uvicorn with {served_by(versions, args.http, args.loop)}"
        )
    return lines


# -- one server process ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ServerProcess(_proc.LoggedProcess):
    """One uvicorn process serving one app; closed (killed if need be) and reaped by ``close``."""

    def __init__(
        self,
        config: Config,
        http: str,
        start_timeout: float,
        *,
        install: str = "shared",
        loop: str = "asyncio",
        cpus: frozenset[int] = frozenset(),
    ) -> None:
        """``http`` and ``loop``: uvicorn's parser and loop (``auto``: its default where the
        server runs); ``install``: where it runs (see ``--install``); ``cpus``: where it is pinned
        (none: not pinned). The defaults are the like-for-like setup (bench/scale.py's)."""
        self.config = config
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = self.base + PATH
        peer = venv_of(config.implementation, install)
        if peer is not None:
            # In the peer's venv, with nothing of this checkout on its path.
            python, env = str(peers.python_of(peer)), peers.peer_env()
        else:
            python, env = sys.executable, _proc.server_env()
        if config.implementation == "fastmcp":
            script, where = "fastmcp_echo_server.py", ["--mode", config.mode]
        else:
            script, where = "streamable_http_servers.py", [config.implementation, config.mode]
        self.command = [
            *pinned(cpus),
            python,
            str(ROOT / "bench" / script),
            *where,
            "--port",
            str(self.port),
            "--http",
            http,
            "--loop",
            loop,
        ]
        self.start(self.command, env=env, start_timeout=start_timeout)

    def wait_ready(self, timeout: float) -> None:
        # uvicorn listens once the app's lifespan startup has completed.
        self.wait_listening(self.port, timeout, self.fail)

    def rss_kib(self) -> int:
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise self.fail("no VmRSS in /proc status")

    def fail(self, what: str) -> BenchError:
        tail = self.text()
        return BenchError(
            f"{self.config.name}: {what}" + (f"\n--- server output ---\n{tail}\n---" if tail else "")
        )

    def close(self) -> str:
        """Stop the server (SIGTERM, then SIGKILL after 10 s); a note if it printed anything."""
        note = ""
        try:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    note = "did not stop within 10 s of SIGTERM; killed. "
        finally:
            _proc.reap(self.proc)
            tail = self.text()
            self.output.close()
        if tail:
            note += f"server output: {tail}"
        return note.strip()


@contextlib.contextmanager
def serving(config: Config, args: argparse.Namespace, notes: list[str]) -> Iterator[ServerProcess]:
    server = ServerProcess(
        config,
        args.http,
        args.start_timeout,
        install=args.install,
        loop=args.loop,
        cpus=args.placement.server,
    )
    try:
        yield server
    finally:
        note = server.close()
        if note:
            notes.append(f"{config.name}: {note}")


# -- the MCP client side (httpx) -------------------------------------------------------------------


def parse_answer(response: httpx.Response, what: str) -> dict[str, Any]:
    """The JSON-RPC response in a JSON body or in an SSE stream (the event that carries an id)."""
    if response.status_code != 200:
        raise BenchError(f"{what}: HTTP {response.status_code}: {response.text[:500]!r}")
    kind = response.headers.get("content-type", "").split(";")[0].strip()
    if kind == "application/json":
        answer: dict[str, Any] = response.json()
        return answer
    if kind != "text/event-stream":
        raise BenchError(f"{what}: unexpected content type {kind!r}: {response.text[:500]!r}")
    for event in response.text.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(line[5:].removeprefix(" ") for line in event.split("\n") if line.startswith("data:"))
        if not data.strip():
            continue  # a priming event or a comment
        message = json.loads(data)
        if isinstance(message, dict) and "id" in message and "method" not in message:
            return message
    raise BenchError(f"{what}: no response in the SSE stream: {response.text[:500]!r}")


class McpHttpClient:
    """Just enough of an MCP client over httpx: open a session, call echo, delete the session; or,
    ``modern``, make 2026-07-28 calls, which need no session."""

    def __init__(self, client: httpx.Client, url: str, name: str, modern: bool = False) -> None:
        self.client = client
        self.url = url
        self.name = name
        self.modern = modern
        self.session_id: str | None = None
        self.next_id = 1

    def headers(self, method: str | None = None) -> dict[str, str]:
        return request_headers(self.session_id, self.modern, method)

    def open(self) -> None:
        if self.modern:
            return  # 2026-07-28: no initialize, no session
        initialize = _proc.initialize_request(CLIENT_NAME, PROTOCOL_VERSION)
        response = self.client.post(self.url, json=initialize, headers=self.headers())
        answer = parse_answer(response, f"{self.name}: initialize")
        result = answer.get("result")
        if answer.get("id") != 0 or not isinstance(result, dict) or "protocolVersion" not in result:
            raise BenchError(f"{self.name}: bad initialize answer: {answer!r}")
        self.session_id = response.headers.get("mcp-session-id")
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        response = self.client.post(self.url, json=initialized, headers=self.headers())
        if response.status_code != 202:
            raise BenchError(
                f"{self.name}: notifications/initialized got HTTP {response.status_code}, "
                f"not 202: {response.text[:500]!r}"
            )

    def echo(self, text: str) -> None:
        rid = self.next_id
        self.next_id += 1
        call = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": call_params(text, self.modern)}
        response = self.client.post(self.url, json=call, headers=self.headers("tools/call"))
        answer = parse_answer(response, f"{self.name}: call")
        result = answer.get("result")
        content = result.get("content") if isinstance(result, dict) else None
        if (
            answer.get("id") != rid
            or not isinstance(result, dict)
            or result.get("isError")
            or not isinstance(content, list)
            or not content
            or content[0] != {"type": "text", "text": text}
        ):
            raise BenchError(f"{self.name}: wrong answer to echo {text!r}: {answer!r}")
        if self.modern:
            # A 2026-07-28 answer is a final result ("complete"), and opens no session.
            if result.get("resultType") != "complete":
                raise BenchError(f"{self.name}: a 2026-07-28 answer without resultType complete: {answer!r}")
            if "mcp-session-id" in response.headers:
                raise BenchError(f"{self.name}: a 2026-07-28 request was given a session: {answer!r}")

    def delete(self) -> None:
        if self.session_id is None:
            return
        response = self.client.delete(self.url, headers=self.headers())
        if response.status_code not in (200, 202, 204):
            raise BenchError(f"{self.name}: DELETE got HTTP {response.status_code}: {response.text[:500]!r}")

    def expect_gone(self) -> None:
        """A call in a deleted session must be refused with 404."""
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x"}},
        }
        response = self.client.post(self.url, json=call, headers=self.headers())
        if response.status_code != 404:
            raise BenchError(f"{self.name}: a deleted session answered HTTP {response.status_code}, not 404")


# -- the measurement -------------------------------------------------------------------------------


@dataclass
class Samples:
    rate: dict[int, list[float]] = field(default_factory=dict)
    p50_us: dict[int, list[float]] = field(default_factory=dict)
    p99_us: dict[int, list[float]] = field(default_factory=dict)
    cpu_us: dict[int, list[float]] = field(default_factory=dict)
    others_pct: dict[int, list[float]] = field(default_factory=dict)


def machine_busy_seconds() -> float:
    """CPU time spent by everything on the machine so far (/proc/stat, all CPUs, 10 ms ticks)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds() -> float:
    """CPU time of this process's reaped children (each wrk run, once it has exited)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Memory:
    base_kib: int
    open_kib: int
    after_kib: int
    sessions: int

    @property
    def per_session_kib(self) -> float:
        return (self.open_kib - self.base_kib) / self.sessions


def wait_for_quiet(limit: float, threshold_pct: float = 20.0) -> float:
    """Up to ``limit`` seconds until other work takes under ``threshold_pct`` of one CPU (sampled
    over 1 s while nothing of ours runs); the last sample."""
    deadline = time.monotonic() + limit
    while True:
        before = machine_busy_seconds()
        time.sleep(1.0)
        busy_pct = (machine_busy_seconds() - before) * 100
        if busy_pct < threshold_pct or time.monotonic() >= deadline:
            return busy_pct


def one_round(config: Config, args: argparse.Namespace, wrk: str, samples: Samples, notes: list[str]) -> str:
    if args.wait_for_quiet > 0:
        busy = wait_for_quiet(args.wait_for_quiet)
        if busy >= 20:
            notes.append(f"{config.name}: a round started with other work taking {busy:.0f}% of a CPU")
    with serving(config, args, notes) as server, tempfile.TemporaryDirectory() as tmp:
        with httpx.Client(timeout=30) as client:
            mcp = McpHttpClient(client, server.url, config.name, modern=config.modern)
            mcp.open()
            mcp.echo("checked before timing")
            if (
                config.mode in ("json", "sse")
                and config.implementation != "raw-floor"
                and mcp.session_id is None
            ):
                raise BenchError(f"{config.name}: a stateful server gave no Mcp-Session-Id")
            script = Path(tmp) / "call.lua"
            script.write_text(lua_script(mcp.session_id, config.modern))
            run_wrk(
                wrk,
                server.url,
                script,
                16,
                args.warmup,
                args.wrk_threads,
                f"{config.name} warm-up",
                args.placement.generator,
            )
            parts = []
            for c in args.concurrency:
                cpu_before = _proc.cpu_seconds(server.pid)
                busy_before = machine_busy_seconds()
                wrk_before = children_cpu_seconds()
                result = run_wrk(
                    wrk,
                    server.url,
                    script,
                    c,
                    args.duration,
                    args.wrk_threads,
                    f"{config.name} at c={c}",
                    args.placement.generator,
                )
                cpu = _proc.cpu_seconds(server.pid) - cpu_before
                # What else ran meanwhile: the machine's busy time less the server's and wrk's.
                others = machine_busy_seconds() - busy_before - cpu - (children_cpu_seconds() - wrk_before)
                samples.others_pct.setdefault(c, []).append(max(0.0, others) / result.seconds * 100)
                samples.rate.setdefault(c, []).append(result.rate)
                samples.p50_us.setdefault(c, []).append(result.p50_us)
                samples.p99_us.setdefault(c, []).append(result.p99_us)
                samples.cpu_us.setdefault(c, []).append(cpu / result.calls * 1e6)
                parts.append(f"{result.rate:,.0f}/s at {c}")
            # The session still works after the load, and answers correctly.
            mcp.echo("checked after timing")
            mcp.delete()
    return ", ".join(parts)


def measure_memory(config: Config, args: argparse.Namespace, notes: list[str]) -> Memory:
    """RSS after one session (opened, used, deleted), with N open, and after deleting them."""
    with serving(config, args, notes) as server, httpx.Client(timeout=30) as client:
        first = McpHttpClient(client, server.url, config.name)
        first.open()
        first.echo("warm-up")
        first.delete()
        time.sleep(args.settle)
        base = server.rss_kib()
        sessions = []
        for i in range(args.sessions):
            mcp = McpHttpClient(client, server.url, f"{config.name} session {i}")
            mcp.open()
            mcp.echo(f"session {i}")
            if mcp.session_id is None:
                raise BenchError(f"{config.name}: no Mcp-Session-Id in stateful mode")
            sessions.append(mcp)
        time.sleep(args.settle)
        opened = server.rss_kib()
        for mcp in sessions:
            mcp.delete()
        time.sleep(args.settle)
        after = server.rss_kib()
        sessions[0].expect_gone()
        sessions[-1].expect_gone()
        return Memory(base, opened, after, args.sessions)


# -- the report ------------------------------------------------------------------------------------


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def official_best(results: dict[Config, Samples], c: int) -> tuple[Config | None, float]:
    """The official SDK's configuration with the most calls/s at ``c`` connections, among the
    2025-11-25 modes (the issue-6 comparisons; the 2026-07-28 rows have a section of their own)."""
    best: tuple[Config | None, float] = (None, float("nan"))
    for config, s in results.items():
        if config.implementation in OFFICIAL and not config.modern and c in s.rate:
            rate = med(s.rate[c])
            if best[0] is None or rate > best[1]:
                best = (config, rate)
    return best


def fmt_ms(values_us: Sequence[float]) -> str:
    if not values_us:
        return "n/a"
    ms = med(values_us) / 1000
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 10 else fmt_num(ms)


def report(
    results: dict[Config, Samples],
    memory: dict[str, Memory],
    args: argparse.Namespace,
    wrk: str,
    started_at: str,
    notes: list[str],
) -> str:
    out: list[str] = []
    floor = next((s for cfg, s in results.items() if cfg.implementation == "raw-floor"), None)
    now = datetime.now(timezone.utc)
    out.append("# Streamable HTTP benchmark results")
    out.append("")
    out.append(
        f"Measured {now:%Y-%m-%d %H:%M} UTC at commit {started_at}; {_proc.machine_line()}, "
        f"{args.placement.describe()}; load average {args.load[0]:.2f} {args.load[1]:.2f} {args.load[2]:.2f} "
        f"at the start; CPython {platform.python_version()}; every server under uvicorn (one worker, no "
        f"access log), {INSTALLS[args.install]}; httpx {version_of('httpx')} for the checks; "
        f"wrk {wrk_version(wrk)} (-t{args.wrk_threads}, one session per server shared by all connections "
        "in the 2025-11-25 modes, none in the 2026-07-28 ones); "
        f"{args.rounds} rounds of {args.duration:g} s per phase after a {args.warmup:g} s warm-up."
    )
    out.append("")
    out.append(f"Command: `{args.command}`")
    out.append("")
    out.append("Where each server ran:")
    out.append("")
    out.extend(f"- {line}" for line in environments(results, args))
    out.append("")
    out.append(
        "calls/s: median over the rounds (min-max); p50 and p99 latency in ms (medians over the rounds); "
        "server CPU µs per call; ratios of median calls/s to the floor and to the best official "
        "configuration at the same concurrency (of the 2025-11-25 modes; the 2026-07-28 rows are "
        "compared in the section after these tables); others' CPU %: the machine's CPU time during the phase "
        "less the server's and wrk's, in % of one CPU (other processes, and interrupt work charged to "
        "no process), median and min-max over the rounds: other work skews a row where it is high."
    )
    for c in args.concurrency:
        best_cfg, best_rate = official_best(results, c)
        floor_rate = med(floor.rate[c]) if floor is not None and c in floor.rate else float("nan")
        out.append("")
        best_text = f"{best_cfg.label}, {best_cfg.mode_label}" if best_cfg is not None else "n/a"
        out.append(f"### {c} connection{'s' if c > 1 else ''} (best official: {best_text})")
        out.append("")
        out.append(
            "| implementation | mode | calls/s | p50 ms | p99 ms | server CPU µs/call | vs floor | vs official best "
            "| others' CPU % |"
        )
        out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for config, s in results.items():
            if c not in s.rate:
                continue
            rate = med(s.rate[c])
            out.append(
                f"| {config.label} | {config.mode_label} | {fmt_range(s.rate[c])} | {fmt_ms(s.p50_us[c])} | "
                f"{fmt_ms(s.p99_us[c])} | {fmt_range(s.cpu_us[c])} | {fmt_ratio(ratio(rate, floor_rate))} | "
                f"{fmt_ratio(ratio(rate, best_rate))} | {fmt_range(s.others_pct[c])} |"
            )
    out.extend(modern_lines(results, args.concurrency))
    if memory:
        out.append("")
        out.append(f"### Memory: {args.sessions:,} open sessions (JSON mode), VmRSS of the server process")
        out.append("")
        out.append(
            f"| implementation | RSS after one session MiB | with {args.sessions:,} open MiB | "
            "after deleting them MiB | per open session KiB | kept after delete KiB/session |"
        )
        out.append("| --- | ---: | ---: | ---: | ---: | ---: |")
        for impl, m in memory.items():
            out.append(
                f"| {IMPLEMENTATIONS[impl]} | {m.base_kib / 1024:.1f} | {m.open_kib / 1024:.1f} | "
                f"{m.after_kib / 1024:.1f} | {m.per_session_kib:.1f} | "
                f"{(m.after_kib - m.base_kib) / m.sessions:.1f} |"
            )
    goals = goal_rows(results, memory, floor)
    if goals:
        out.append("")
        out.append("### Goals (issue 18)")
        out.append("")
        out.append("| goal | now |")
        out.append("| --- | ---: |")
        out.extend(goals)
    ended_at = args.commit or commit()
    if ended_at != started_at:
        notes.append(f"checkout changed during the run: {started_at} at the start, {ended_at} at the end")
    if notes:
        out.append("")
        out.append("Notes:")
        out.extend(f"- {n}" for n in dict.fromkeys(notes))
    return "\n".join(out) + "\n"


# The 2025-11-25 modes the 2026-07-28 rows are set beside: a call in a session, and one without.
BESIDE = ("json", "stateless")


def modern_lines(results: dict[Config, Samples], concurrency: Sequence[int]) -> list[str]:
    """The 2026-07-28 section: each implementation's calls/s and CPU per call for 2026-07-28
    requests beside its 2025-11-25 JSON and stateless rows, then mcpbind's ratios to the others."""
    modern = [cfg for cfg in results if cfg.modern]
    if not modern:
        return []

    def rate(cfg: Config, c: int) -> float:
        s = results.get(cfg)
        return med(s.rate[c]) if s is not None and c in s.rate else float("nan")

    def cpu(cfg: Config, c: int) -> float:
        s = results.get(cfg)
        return med(s.cpu_us[c]) if s is not None and c in s.cpu_us else float("nan")

    impls = dict.fromkeys(cfg.implementation for cfg in modern)
    modes = [m for m in (*MODERN_MODES, *BESIDE) if any(cfg.mode == m for cfg in results)]
    shown = [Config(i, m) for i in impls for m in modes if Config(i, m) in results]
    cs = " | ".join(f"c={c}" for c in concurrency)
    out = ["", "### MCP 2026-07-28 requests (no session) beside 2025-11-25", ""]
    out.append(
        "Every request of the 2026-07-28 rows is a `tools/call` of echo with no `initialize` before "
        f"it and no session: `_meta` carries the protocol version ({MODERN_VERSION}) and the client's "
        "capabilities and info, and the headers `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`; "
        "every answer was checked to be the echoed text with `resultType` `complete`. Medians over "
        "the rounds; the ranges are in the tables above."
    )
    out.append("")
    out.append(f"| implementation | requests | calls/s {cs} | server CPU µs/call {cs} |")
    out.append("| --- | --- |" + " ---: |" * (2 * len(concurrency)))
    for cfg in shown:
        rates = " | ".join(fmt_num(rate(cfg, c)) for c in concurrency)
        cpus = " | ".join(fmt_num(cpu(cfg, c)) for c in concurrency)
        out.append(f"| {cfg.label} | {cfg.mode_label} | {rates} | {cpus} |")
    others = [i for i in impls if i != "mcpbind"]
    pairs = [
        (Config("mcpbind", m), Config(i, m))
        for m in modes
        for i in others
        if Config("mcpbind", m) in results and Config(i, m) in results
    ]
    if pairs:
        out += [
            "",
            "mcpbind against each of the others, request for request: calls/s ours / theirs, and "
            "server CPU per call theirs / ours (above 1x: mcpbind is faster, or spends less).",
            "",
        ]
        out.append(f"| mcpbind / | requests | calls/s {cs} | CPU per call, theirs / ours {cs} |")
        out.append("| --- | --- |" + " ---: |" * (2 * len(concurrency)))
        for ours, theirs in pairs:
            rates = " | ".join(fmt_ratio(ratio(rate(ours, c), rate(theirs, c))) for c in concurrency)
            cpus = " | ".join(fmt_ratio(ratio(cpu(theirs, c), cpu(ours, c))) for c in concurrency)
            out.append(f"| {theirs.label} | {theirs.mode_label} | {rates} | {cpus} |")
    within = [
        (Config(i, m), Config(i, b))
        for i in impls
        for m in MODERN_MODES
        for b in BESIDE
        if Config(i, m) in results and Config(i, b) in results
    ]
    if within:
        out += [
            "",
            "Each implementation's 2026-07-28 request against its own 2025-11-25 one: calls/s "
            "2026 / 2025 (above 1x: the 2026 path is faster).",
            "",
        ]
        out.append(f"| implementation | 2026-07-28 / 2025-11-25 | calls/s {cs} |")
        out.append("| --- | --- |" + " ---: |" * len(concurrency))
        for new, old in within:
            rates = " | ".join(fmt_ratio(ratio(rate(new, c), rate(old, c))) for c in concurrency)
            out.append(f"| {new.label} | {new.mode_label} / {old.mode_label} | {rates} |")
    return out


def goal_rows(results: dict[Config, Samples], memory: dict[str, Memory], floor: Samples | None) -> list[str]:
    rows = []

    def rate(cfg: Config) -> float | None:
        s = results.get(cfg)
        return med(s.rate[16]) if s is not None and 16 in s.rate else None

    ours = rate(Config("mcpbind", "json"))
    if ours is not None:
        theirs = rate(Config("official-mcpserver", "json"))
        if theirs is not None:
            r = ratio(ours, theirs)
            rows.append(
                f"| mcpbind JSON at c=16 >= 10x the official MCPServer (JSON) | {fmt_ratio(r)} {verdict(r >= 10)} |"
            )
        if floor is not None and 16 in floor.rate:
            r = ratio(ours, med(floor.rate[16]))
            rows.append(
                f"| mcpbind JSON at c=16 >= 0.6x the raw HTTP floor | {fmt_ratio(r)} {verdict(r >= 0.6)} |"
            )
    # The 2026-07-28 request against the official SDK's 2026-07-28 path: its faster server of the
    # two (the low-level one or MCPServer), in the same mode (JSON asked for).
    modern = rate(Config("mcpbind", "modern"))
    official = [r for r in (rate(Config(i, "modern")) for i in OFFICIAL) if r is not None]
    if modern is not None and official:
        r = ratio(modern, max(official))
        rows.append(
            f"| mcpbind 2026-07-28 request at c=16 >= 10x the official SDK's 2026 path | {fmt_ratio(r)} "
            f"{verdict(r >= 10)} |"
        )
    if "mcpbind" in memory:
        kib = memory["mcpbind"].per_session_kib
        rows.append(
            f"| mcpbind memory per open session <= 4 KB | {kib:.1f} KiB {verdict(kib * 1024 <= 4000)} |"
        )
    for impl in OFFICIAL:
        if impl in memory:
            rows.append(
                f"| ({IMPLEMENTATIONS[impl]}: memory per open session) | {memory[impl].per_session_kib:.1f} KiB |"
            )
    return rows


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


# -- main ------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="2 rounds of 1 s phases, 200 sessions: a smoke run"
    )
    parser.add_argument("--rounds", type=int, help="rounds per server (default 5; 2 with --quick)")
    parser.add_argument("--duration", type=float, help="seconds per timed phase (default 5; 1 with --quick)")
    parser.add_argument(
        "--warmup", type=float, help="seconds of warm-up per server (default 2; 1 with --quick)"
    )
    parser.add_argument(
        "--concurrency", default="1,16,64", help="comma-separated wrk connections (default 1,16,64)"
    )
    parser.add_argument(
        "--impls",
        default=",".join(IMPLEMENTATIONS),
        help=f"comma-separated, from: {', '.join(IMPLEMENTATIONS)}",
    )
    parser.add_argument(
        "--modes",
        default=",".join(DEFAULT_MODES),
        help=f"comma-separated, from: {', '.join(MODES)} (default: {', '.join(DEFAULT_MODES)})",
    )
    parser.add_argument(
        "--install",
        choices=list(INSTALLS),
        default="user",
        help="user (default): each server in its own environment, as users install it (the official "
        "SDK's in its venv, with what `pip install mcp` brings); shared: all but FastMCP's with this "
        "interpreter, asyncio loop, httptools when installed",
    )
    parser.add_argument(
        "--cpus",
        choices=["free", "split"],
        default="free",
        help="free (default): nothing pinned; split: wrk on one CPU, the server on another",
    )
    parser.add_argument(
        "--http",
        choices=["auto", "h11", "httptools"],
        help="uvicorn's HTTP parser for every server (default: auto, uvicorn's default in each "
        "server's environment: httptools if installed there, else h11; with --install shared: "
        "httptools if this interpreter has it, else h11)",
    )
    parser.add_argument(
        "--loop",
        choices=["auto", "asyncio", "uvloop"],
        help="uvicorn's loop for every server (default: auto, uvloop where installed; with "
        "--install shared: asyncio)",
    )
    parser.add_argument("--wrk-threads", type=int, default=1, help="wrk threads (default 1)")
    parser.add_argument(
        "--sessions",
        type=int,
        help="sessions held open for the memory figure (default 1000; 200 with --quick; 0: skip)",
    )
    parser.add_argument(
        "--wait-for-quiet",
        type=float,
        default=0.0,
        help="before each server's round, wait up to this many seconds for other work on the machine "
        "to drop under 20%% of a CPU (default 0: do not wait)",
    )
    parser.add_argument(
        "--commit",
        help="what to call the code measured in the report (default: this checkout's git commit); for "
        "a run from an export of a commit, which has no .git",
    )
    parser.add_argument("--settle", type=float, default=1.0, help="seconds to wait before reading RSS")
    parser.add_argument("--start-timeout", type=float, default=30.0, help="seconds for a server to listen")
    parser.add_argument(
        "--output",
        default=str(ROOT / "bench" / "RESULTS-http.md"),
        help="where the Markdown report goes (default bench/RESULTS-http.md; '-' for none)",
    )
    args = parser.parse_args(argv)

    def names(text: str, known: Sequence[str], what: str) -> list[str]:
        chosen = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
        unknown = [n for n in chosen if n not in known]
        if unknown or not chosen:
            parser.error(f"unknown {what} {unknown}; choose from {', '.join(known)}")
        return chosen

    impls = names(args.impls, list(IMPLEMENTATIONS), "implementations")
    modes = names(args.modes, list(MODES), "modes")
    args.configs = [
        Config(impl, mode)
        for impl in impls
        for mode in (["stateless"] if impl == "raw-floor" else modes)
        if impl not in MODERN_ONLY or mode in MODERN_MODES
    ]
    if not args.configs:
        parser.error(
            f"nothing to run: {', '.join(MODERN_ONLY)} runs in the modes {', '.join(MODERN_MODES)} only"
        )
    try:
        args.concurrency = sorted({int(c) for c in args.concurrency.split(",") if c.strip()})
    except ValueError:
        parser.error("--concurrency takes comma-separated integers")
    if not args.concurrency or min(args.concurrency) < 1:
        parser.error("--concurrency takes integers of at least 1")
    if args.install == "shared":
        if args.http is None:
            args.http = "httptools" if importlib.util.find_spec("httptools") is not None else "h11"
        if args.loop is None:
            args.loop = "asyncio"
    args.http = args.http or "auto"
    args.loop = args.loop or "auto"
    try:
        args.placement = Placement.of(args.cpus)
    except BenchError as exc:
        parser.error(str(exc))
    args.load = os.getloadavg()
    if args.rounds is None:
        args.rounds = 2 if args.quick else 5
    if args.duration is None:
        args.duration = 1.0 if args.quick else 5.0
    if args.warmup is None:
        args.warmup = 1.0 if args.quick else 2.0
    if args.sessions is None:
        args.sessions = 200 if args.quick else 1000
    if args.rounds < 1 or args.duration < 1 or args.sessions < 0 or args.wrk_threads < 1:
        parser.error("--rounds, --duration and --wrk-threads must be at least 1, --sessions at least 0")
    args.command = shlex.join(
        ["python", "bench/streamable_http.py", *(sys.argv[1:] if argv is None else argv)]
    )
    return args


def run(
    args: argparse.Namespace, wrk: str, notes: list[str]
) -> tuple[dict[Config, Samples], dict[str, Memory]]:
    configs: list[Config] = args.configs
    results = {config: Samples() for config in configs}
    for r in range(args.rounds):
        shift = r % len(configs)
        for config in configs[shift:] + configs[:shift]:
            started = time.monotonic()
            summary = one_round(config, args, wrk, results[config], notes)
            log(f"round {r + 1}/{args.rounds} {config.name}: {summary} ({time.monotonic() - started:.1f} s)")
    memory: dict[str, Memory] = {}
    if args.sessions:
        # Sessions are a 2025-11-25 matter: measured when a mode of that era runs.
        for impl in dict.fromkeys(c.implementation for c in configs if not c.modern):
            if impl == "raw-floor":
                continue
            started = time.monotonic()
            m = measure_memory(Config(impl, "json"), args, notes)
            memory[impl] = m
            log(
                f"memory {impl}: {m.base_kib / 1024:.1f} MiB, {m.open_kib / 1024:.1f} MiB with {m.sessions} "
                f"sessions, {m.after_kib / 1024:.1f} MiB after deleting them "
                f"({time.monotonic() - started:.1f} s)"
            )
    return results, memory


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds, so that the running server is stopped and reaped


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    try:
        wrk = ensure_wrk()
        for peer in dict.fromkeys(venv_of(cfg.implementation, args.install) for cfg in args.configs):
            if peer is not None:
                peers.ensure(peer)  # its servers run in its venv
    except (BenchError, peers.PeerError) as exc:
        print(f"bench/streamable_http.py: {exc}", file=sys.stderr)
        return 1
    started_at = args.commit or commit()
    load = args.load[0]
    if load > 0.5:
        log(f"note: 1-minute load average is {load:.2f} before the run; other work skews the numbers")
    notes: list[str] = []
    try:
        results, memory = run(args, wrk, notes)
    except BenchError as exc:
        print(f"bench/streamable_http.py: run aborted: {exc}", file=sys.stderr)
        return 1
    text = report(results, memory, args, wrk, started_at, notes)
    print()
    print(text, end="")
    if args.output != "-":
        Path(args.output).write_text(text)
        log(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
