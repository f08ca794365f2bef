"""``tools/call`` echo over Streamable HTTP: mcpbind beside the official SDK and a raw ASGI floor.

Every server is one of ``bench/streamable_http_servers.py``'s apps (mcpbind's
``StreamableHTTPApp``, the official SDK's low-level ``Server`` and its decorator ``MCPServer``,
each in JSON-response, SSE and stateless mode, and a raw msgspec ASGI app as the floor), run by
the same uvicorn (one worker, asyncio loop, no access log; its HTTP parser is httptools when
installed, else h11, or as ``--http`` says) in a process of its own on 127.0.0.1.

For each server, in each round: spawn it, open a session with httpx (``initialize``, then
``notifications/initialized``), check that one ``tools/call`` through httpx returns the echoed
text, warm up, then load it with ``wrk`` at each concurrency (1, 16, 64 connections, one wrk
thread, one session shared by all connections: every request carries the session's
``Mcp-Session-Id`` and ``MCP-Protocol-Version``, and an id of its own). wrk's Lua script checks
every answer (status 200, the echoed text in the body, no ``"error"``); any socket error, non-2xx
status or wrong body fails the run. calls/s is wrk's completed requests over its run time; p50
and p99 come from wrk's latency histogram; server CPU µs/call is the server process's CPU time
over the phase (all threads, /proc schedstat) per call.

Then, once per stateful server: RSS (``VmRSS``) after one session was opened, used and deleted;
with ``--sessions`` (1,000) more open, each having made one call; and after all of them were
deleted. Per-session memory is the difference over the number of sessions.

Servers are always killed and reaped, on error too. Tables give medians over the rounds with the
min-max range; ratios use medians. The load generator and the server share the machine's CPUs
(nothing is pinned).

    PYTHONPATH=runtime:generated python bench/streamable_http.py [--quick] [--rounds N]
        [--impls mcpbind,official-lowlevel,...] [--modes json,sse,stateless] [--http h11|httptools]

Needs ``wrk`` (``apt-get install wrk``; the script offers to install it when it runs as root),
uvicorn, httpx, and ``mcp`` (the official SDK) for the official servers.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import os
import platform
import resource
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import IO, Any

import httpx

ROOT = Path(__file__).resolve().parent.parent


# -- small helpers (as in bench/stdio.py) ----------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """CPU time of a live process: the sum over its threads of /proc's schedstat (ns precision)."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    except OSError:
        return math.nan
    return total / 1e9


def med(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def fmt_num(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.1f}"


def fmt_range(values: Sequence[float]) -> str:
    if not values:
        return "n/a"
    return f"{fmt_num(med(values))} ({fmt_num(min(values))}-{fmt_num(max(values))})"


def fmt_ratio(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:.2f}x" if value < 10 else f"{value:.1f}x"


def ratio(ours: float, theirs: float) -> float:
    if math.isnan(ours) or math.isnan(theirs) or theirs == 0:
        return math.nan
    return ours / theirs


def version_of(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine_line() -> str:
    cpu = platform.processor() or "unknown cpu"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} cpus ({cpu}), {platform.system()} {platform.release()}"


def commit() -> str:
    """This checkout's commit, and whether the code the servers run has uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "runtime", "generated", "examples", "bench"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + (
        " (plus uncommitted changes in runtime/, generated/, examples/ or bench/)" if dirty else ""
    )


PROTOCOL_VERSION = "2025-11-25"
PATH = "/mcp"
ECHO_TEXT = "hello from wrk"
ACCEPT = "application/json, text/event-stream"

IMPLEMENTATIONS = {
    "mcpbind": "mcpbind",
    "official-lowlevel": "official SDK low-level Server",
    "official-mcpserver": "official SDK MCPServer (decorators)",
    "raw-floor": "raw msgspec ASGI app (floor)",
}
MODES = {
    "json": "JSON",
    "sse": "SSE",
    "stateless": "stateless (JSON)",
}
OFFICIAL = ("official-lowlevel", "official-mcpserver")


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


# -- wrk -------------------------------------------------------------------------------------------

LUA = r"""
-- Generated by bench/streamable_http.py: POST tools/call echo, each request with an id of its own.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = %(accept)s
wrk.headers["MCP-Protocol-Version"] = %(version)s
%(session_header)s
local body = %(body)s
local expect = %(expect)s
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
  if status ~= 200 or not string.find(answer, expect, 1, true) or string.find(answer, '"error"', 1, true) then
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


def lua_script(session_id: str | None) -> str:
    body = (
        '{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
        f'"params":{{"name":"echo","arguments":{{"text":"{ECHO_TEXT}"}}}}}}'
    )
    header = f'wrk.headers["Mcp-Session-Id"] = {lua_string(session_id)}' if session_id else ""
    return LUA % {
        "accept": lua_string(ACCEPT),
        "version": lua_string(PROTOCOL_VERSION),
        "session_header": header,
        "body": lua_string(body),
        "expect": lua_string(f'"text":"{ECHO_TEXT}"'),
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
    wrk: str, url: str, script: Path, connections: int, seconds: float, threads: int, what: str
) -> WrkResult:
    threads = max(1, min(threads, connections))
    cmd = [
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


# -- one server process ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def server_env() -> dict[str, str]:
    """This checkout's runtime and generated code first on the servers' path."""
    env = dict(os.environ)
    dev = [str(ROOT / "runtime"), str(ROOT / "generated")]
    if env.get("PYTHONPATH"):
        dev.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(dev)
    env["PYTHONFAULTHANDLER"] = "1"
    return env


class ServerProcess:
    """One uvicorn process serving one app; closed (killed if need be) and reaped by ``close``."""

    def __init__(self, config: Config, http: str, start_timeout: float) -> None:
        self.config = config
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = self.base + PATH
        self.stderr: IO[bytes] = tempfile.TemporaryFile()
        self.command = [
            sys.executable,
            str(ROOT / "bench" / "streamable_http_servers.py"),
            config.implementation,
            config.mode,
            "--port",
            str(self.port),
            "--http",
            http,
        ]
        try:
            self.proc = subprocess.Popen(
                self.command,
                cwd=ROOT,
                env=server_env(),
                stdin=subprocess.DEVNULL,
                stdout=self.stderr,
                stderr=self.stderr,
            )
        except BaseException:
            self.stderr.close()
            raise
        try:
            self._wait_listening(start_timeout)
        except BaseException:
            self.close()
            raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _wait_listening(self, timeout: float) -> None:
        # uvicorn listens once the app's lifespan startup has completed.
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise self.fail(f"exited with code {self.proc.returncode} before listening")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise self.fail(f"not listening after {timeout:g} s") from None
                time.sleep(0.05)

    def rss_kib(self) -> int:
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise self.fail("no VmRSS in /proc status")

    def stderr_text(self, limit: int = 3000) -> str:
        self.stderr.seek(0)
        text = self.stderr.read().decode("utf-8", "replace").strip()
        return text if len(text) <= limit else "...\n" + text[-limit:]

    def fail(self, what: str) -> BenchError:
        tail = self.stderr_text()
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
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            tail = self.stderr_text()
            self.stderr.close()
        if tail:
            note += f"server output: {tail}"
        return note.strip()


@contextlib.contextmanager
def serving(config: Config, args: argparse.Namespace, notes: list[str]) -> Iterator[ServerProcess]:
    server = ServerProcess(config, args.http, args.start_timeout)
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
    """Just enough of an MCP client over httpx: open a session, call echo, delete the session."""

    def __init__(self, client: httpx.Client, url: str, name: str) -> None:
        self.client = client
        self.url = url
        self.name = name
        self.session_id: str | None = None
        self.next_id = 1

    def headers(self) -> dict[str, str]:
        headers = {
            "Accept": ACCEPT,
            "Content-Type": "application/json",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
        }
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        return headers

    def open(self) -> None:
        initialize = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "bench-streamable-http", "version": "0.1.0"},
            },
        }
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
        call = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}},
        }
        answer = parse_answer(
            self.client.post(self.url, json=call, headers=self.headers()), f"{self.name}: call"
        )
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
            mcp = McpHttpClient(client, server.url, config.name)
            mcp.open()
            mcp.echo("checked before timing")
            if config.mode != "stateless" and config.implementation != "raw-floor" and mcp.session_id is None:
                raise BenchError(f"{config.name}: a stateful server gave no Mcp-Session-Id")
            script = Path(tmp) / "call.lua"
            script.write_text(lua_script(mcp.session_id))
            run_wrk(wrk, server.url, script, 16, args.warmup, args.wrk_threads, f"{config.name} warm-up")
            parts = []
            for c in args.concurrency:
                cpu_before = cpu_seconds(server.pid)
                busy_before = machine_busy_seconds()
                wrk_before = children_cpu_seconds()
                result = run_wrk(
                    wrk, server.url, script, c, args.duration, args.wrk_threads, f"{config.name} at c={c}"
                )
                cpu = cpu_seconds(server.pid) - cpu_before
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
    best: tuple[Config | None, float] = (None, float("nan"))
    for config, s in results.items():
        if config.implementation in OFFICIAL and c in s.rate:
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
        f"Measured {now:%Y-%m-%d %H:%M} UTC at commit {started_at}; {machine_line()}, nothing pinned: "
        "wrk and the server share the CPUs; "
        f"CPython {platform.python_version()}; uvicorn {version_of('uvicorn')} (one worker, asyncio loop, "
        f"{args.http} {version_of(args.http)}, no access log); msgspec {version_of('msgspec')}, "
        f"anyio {version_of('anyio')}, httpx {version_of('httpx')}, mcp {version_of('mcp')} (official SDK), "
        f"starlette {version_of('starlette')}, sse-starlette {version_of('sse-starlette')}; "
        f"wrk {wrk_version(wrk)} (-t{args.wrk_threads}, one session per server shared by all connections); "
        f"{args.rounds} rounds of {args.duration:g} s per phase after a {args.warmup:g} s warm-up."
    )
    out.append("")
    out.append(f"Command: `{args.command}`")
    out.append("")
    out.append(
        "calls/s: median over the rounds (min-max); p50 and p99 latency in ms (medians over the rounds); "
        "server CPU µs per call; ratios of median calls/s to the floor and to the best official "
        "configuration at the same concurrency; others' CPU %: the machine's CPU time during the phase "
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
        out.append("### Goals (issue 6)")
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


def goal_rows(results: dict[Config, Samples], memory: dict[str, Memory], floor: Samples | None) -> list[str]:
    rows = []
    ours = next((s for cfg, s in results.items() if cfg == Config("mcpbind", "json")), None)
    if ours is not None and 16 in ours.rate:
        rate = med(ours.rate[16])
        best_cfg, best_rate = official_best(results, 16)
        if best_cfg is not None:
            r = ratio(rate, best_rate)
            rows.append(
                f"| mcpbind JSON at c=16 >= 10x the official SDK's best mode | {fmt_ratio(r)} {verdict(r >= 10)} |"
            )
        if floor is not None and 16 in floor.rate:
            r = ratio(rate, med(floor.rate[16]))
            rows.append(
                f"| mcpbind JSON at c=16 >= 0.3x the raw floor | {fmt_ratio(r)} {verdict(r >= 0.3)} |"
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
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, from: {', '.join(MODES)}")
    parser.add_argument(
        "--http",
        choices=["auto", "h11", "httptools"],
        default="auto",
        help="uvicorn's HTTP parser for every server (default auto: httptools if installed, else h11)",
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
        Config(impl, mode) for impl in impls for mode in (["stateless"] if impl == "raw-floor" else modes)
    ]
    try:
        args.concurrency = sorted({int(c) for c in args.concurrency.split(",") if c.strip()})
    except ValueError:
        parser.error("--concurrency takes comma-separated integers")
    if not args.concurrency or min(args.concurrency) < 1:
        parser.error("--concurrency takes integers of at least 1")
    if args.http == "auto":
        args.http = "httptools" if importlib.util.find_spec("httptools") is not None else "h11"
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
        for impl in dict.fromkeys(c.implementation for c in configs):
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
    except BenchError as exc:
        print(f"bench/streamable_http.py: {exc}", file=sys.stderr)
        return 1
    started_at = args.commit or commit()
    load = os.getloadavg()[0]
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
