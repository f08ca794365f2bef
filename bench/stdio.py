"""A stdio round trip of the ``echo`` tool: mcpbind's example server beside the official SDK's, FastMCP's
and a raw floor.

Servers (``--servers`` picks some, in this order by default):

* ``mcpbind-asyncio``: ``examples/echo_server.py --backend asyncio`` (mcpbind, this checkout);
* ``mcpbind-trio``: the same on trio;
* ``mcpbind-asyncio-plain`` / ``mcpbind-trio-plain``: the same with ``MCPBIND_FASTPATH=0`` (the
  plain path every fast path falls back to; reported beside the fast rows, not judged);
* ``official``: ``bench/official_echo_server.py``, the official SDK's low-level ``Server``
  served by ``mcp.server.stdio.stdio_server`` (asyncio), in the SDK's venv (bench/peers.py);
* ``official-decorator``: ``bench/official_decorator_echo_server.py``, the SDK's ``MCPServer``;
* ``fastmcp``: ``bench/fastmcp_echo_server.py``, FastMCP, in its own venv;
* ``raw-floor``: ``bench/raw_floor_server.py``, a minimal blocking loop (read what stdin has,
  decode each line with msgspec, answer, write): what a Python process costs with no framework;
* ``asyncio-floor`` (only when named): ``bench/asyncio_floor_server.py``, the same answers from
  an asyncio event loop (one ``add_reader`` for the run, no anyio, no tasks): what the event
  loop itself costs every asyncio server.

One load generator drives them all and uses no SDK's client: it spawns the server with pipes,
makes both ends non-blocking and runs a single-threaded ``selectors`` loop, writing
pre-formatted request lines and decoding the answers with small msgspec structs. It does the
``initialize`` handshake by hand (request, response, ``notifications/initialized``), then:

* idle RSS: ``VmRSS`` after one call;
* sequential latency: N ``tools/call`` echo calls, each sent after the previous answer (p50, p99);
* pipelined throughput with 1, 16 and 256 requests in flight: as soon as answers come back, the
  same number of new requests is written (in one write), answers are matched by id; calls/s is
  the number of calls over the wall time from the first write to the last answer;
* big arguments: echo calls of 100 KB and 1 MB of text, one at a time (p50);
* peak RSS: ``VmHWM`` at the end;
* on a second server with 1,000 tools: ``tools/list``, one at a time (p50, and the answer's size).

Every answer is checked: a known outstanding id, no error, ``result.content[0]`` a text block
carrying the text sent with that id (each call sends a text of its own; big ones are compared in
full); ``tools/list`` must name exactly the 1,000 tools. A wrong answer, a server that exits, or
one that stays silent for ``--stall-timeout`` seconds aborts the run, and every server process is
killed and reaped on the way out.

Each round spawns every server afresh (the order rotates between rounds) and runs all phases on
it after a warm-up. The server's CPU time per call (all threads, /proc schedstat) is taken over
each pipelined phase. Start-up time (spawn to the ``initialize`` answer) is measured on separate
starts after the rounds. The tables give medians over the rounds with the min-max range; ratios
use medians.

``--cpus`` places the two processes: ``split`` (default) pins the generator to one CPU and the
server to another, ``shared`` pins both to one CPU, ``free`` leaves it to the scheduler. On a
small VM the choice moves sequential latency a lot (cross-CPU wake-ups); see bench/README.md.

Within the suite: ``python -m bench stdio``. Alone, in a dev checkout (the peers' venvs are made
on first use)::

    PYTHONPATH=runtime:generated python bench/stdio.py [--quick] [--rounds N] [--servers a,b]
        [--cpus split|shared|free] [--in-flight 1,16,256] [--no-big] [--no-list]
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import msgspec

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: bench.peers is imported from the repository root
    sys.path.insert(0, str(ROOT))

from bench import _proc  # noqa: E402
from bench._proc import (  # noqa: E402
    cpu_seconds,
    fmt_range,
    fmt_ratio,
    machine_line,
    med,
    proc_status_kib,
    ratio,
    reap,
    rounds_of,
    version_of,
)

PROTOCOL_VERSION = "2025-11-25"

# -- the wire, as the load generator sees it -------------------------------------------------------

INITIALIZE = msgspec.json.encode(_proc.initialize_request("bench-stdio", PROTOCOL_VERSION))
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
# id, then the text to echo: "echo <id>", so a crossed answer cannot pass the check.
CALL = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
    b'"params":{"name":"echo","arguments":{"text":"echo %d"}}}\n'
)


class _Content(msgspec.Struct):
    type: str
    text: str | None = None


class _CallResult(msgspec.Struct):
    content: list[_Content]
    is_error: bool | None = msgspec.field(default=None, name="isError")


class _ErrorBody(msgspec.Struct):
    code: int
    message: str


class _Reply(msgspec.Struct):
    """Any message from the server; a reply to a tools/call must carry a valid result."""

    jsonrpc: str = ""
    id: int | str | None = None
    method: str | None = None
    result: _CallResult | None = None
    error: _ErrorBody | None = None


class _Head(msgspec.Struct):
    """The envelope alone: which message this is."""

    id: int | str | None = None
    method: str | None = None


class _ToolName(msgspec.Struct):
    name: str


class _ToolsResult(msgspec.Struct):
    tools: list[_ToolName]
    next_cursor: str | None = msgspec.field(default=None, name="nextCursor")


class _ToolsReply(msgspec.Struct):
    jsonrpc: str = ""
    id: int | str | None = None
    result: _ToolsResult | None = None
    error: _ErrorBody | None = None


class _InitReply(msgspec.Struct):
    jsonrpc: str = ""
    id: int | str | None = None
    result: dict[str, Any] | None = None
    error: _ErrorBody | None = None


class BenchError(Exception):
    """A wrong answer, a dead or silent server: the run stops."""


# -- one server process ----------------------------------------------------------------------------


# The environment variable that selects mcpbind's plain path (runtime/mcpbind/fastpath.py's SWITCH).
FASTPATH_SWITCH = "MCPBIND_FASTPATH"


@dataclass(frozen=True)
class ServerSpec:
    name: str
    label: str
    args: tuple[str, ...]
    # The venv (bench/peers.py) the server runs in; None: this interpreter, with this checkout.
    peer: str | None = None
    # mcpbind on its plain path (MCPBIND_FASTPATH=0); otherwise mcpbind runs its default fast path.
    plain: bool = False

    def python(self) -> str:
        if self.peer is None:
            return sys.executable
        from bench import peers

        return str(peers.ensure(self.peer))

    def command(self, extra_tools: int) -> list[str]:
        cmd = [self.python(), *self.args]
        if extra_tools:
            cmd += ["--tools", str(extra_tools)]
        return cmd

    def env(self) -> dict[str, str]:
        if self.peer is None:
            env = server_env()
            if self.plain:
                env[FASTPATH_SWITCH] = "0"
            else:
                env.pop(FASTPATH_SWITCH, None)
            return env
        from bench import peers

        return peers.peer_env()


SERVERS: dict[str, ServerSpec] = {
    spec.name: spec
    for spec in (
        ServerSpec(
            "mcpbind-asyncio",
            "mcpbind, asyncio",
            ("examples/echo_server.py", "--backend", "asyncio"),
        ),
        ServerSpec(
            "mcpbind-trio",
            "mcpbind, trio",
            ("examples/echo_server.py", "--backend", "trio"),
        ),
        ServerSpec(
            "mcpbind-asyncio-plain",
            "mcpbind, asyncio (plain path)",
            ("examples/echo_server.py", "--backend", "asyncio"),
            plain=True,
        ),
        ServerSpec(
            "mcpbind-trio-plain",
            "mcpbind, trio (plain path)",
            ("examples/echo_server.py", "--backend", "trio"),
            plain=True,
        ),
        ServerSpec(
            "official",
            "official SDK low-level, asyncio",
            ("bench/official_echo_server.py",),
            peer="official",
        ),
        ServerSpec(
            "official-decorator",
            "official SDK MCPServer (decorators)",
            ("bench/official_decorator_echo_server.py",),
            peer="official",
        ),
        ServerSpec("fastmcp", "FastMCP", ("bench/fastmcp_echo_server.py",), peer="fastmcp"),
        ServerSpec("raw-floor", "raw msgspec loop (floor)", ("bench/raw_floor_server.py",)),
        ServerSpec("asyncio-floor", "the floor's loop on asyncio", ("bench/asyncio_floor_server.py",)),
    )
}

# Run unless --servers says otherwise; asyncio-floor is asked for by name (see bench/README.md).
DEFAULT_SERVERS = [name for name in SERVERS if name != "asyncio-floor"]


def prepare_peers(names: Sequence[str]) -> None:
    """Make (or check) the venvs of the named servers before anything is timed."""
    from bench import peers

    for peer in dict.fromkeys(SERVERS[n].peer for n in names):
        if peer is not None:
            peers.ensure(peer)


def server_env() -> dict[str, str]:
    """The environment of mcpbind's servers: this checkout's runtime and generated code first."""
    env = _proc.server_env()
    # Start-up is timed with bytecode caches as an installed package has them: let the first
    # start write what is missing or stale (a dev checkout's caches may be either).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


@dataclass(frozen=True)
class Placement:
    """CPU sets of the load generator and of the server (None: wherever the scheduler likes)."""

    generator: frozenset[int] | None
    server: frozenset[int] | None

    @staticmethod
    def of(mode: str) -> Placement:
        if mode == "free":
            return Placement(None, None)
        cpus = sorted(os.sched_getaffinity(0))
        if mode == "shared" or len(cpus) < 2:
            return Placement(frozenset(cpus[:1]), frozenset(cpus[:1]))
        return Placement(frozenset(cpus[:1]), frozenset(cpus[1:2]))


class ServerProcess:
    """A spawned server with non-blocking pipes and a selector over them."""

    def __init__(
        self, spec: ServerSpec, extra_tools: int, stall_timeout: float, placement: Placement
    ) -> None:
        self.spec = spec
        self.stall_timeout = stall_timeout
        self.stderr: IO[bytes] = tempfile.TemporaryFile()
        self.spawned_at = time.perf_counter()
        # The child inherits the CPU set in force at fork: switch to the server's, spawn, and
        # switch back to the generator's.
        if placement.server is not None:
            os.sched_setaffinity(0, placement.server)
        try:
            self.proc = subprocess.Popen(
                spec.command(extra_tools),
                cwd=ROOT,
                env=spec.env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                bufsize=0,
            )
        except BaseException:
            self.stderr.close()
            raise
        finally:
            if placement.generator is not None:
                os.sched_setaffinity(0, placement.generator)
        self.selector = selectors.DefaultSelector()
        try:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.wfd = self.proc.stdin.fileno()
            self.rfd = self.proc.stdout.fileno()
            os.set_blocking(self.wfd, False)
            os.set_blocking(self.rfd, False)
            self.selector.register(self.rfd, selectors.EVENT_READ)
        except BaseException:
            self.close()
            raise
        self.wbuf = memoryview(b"")  # what a full pipe did not take yet (a view: no copy per write)
        self.rbuf = bytearray()
        self.rbuf_has_line = False  # whether rbuf holds a newline (scanned on arrival only)
        self.next_id = 1
        self.decoder = msgspec.json.Decoder(_Reply)
        self.decoder_head = msgspec.json.Decoder(_Head)
        self.notifications: dict[str, int] = {}
        self.phase = "start-up"
        self.progress: Callable[[], str] | None = None

    # -- bytes in and out ------------------------------------------------------------------------

    def fail(self, what: str) -> BenchError:
        where = f" [{self.phase}{'; ' + self.progress() if self.progress else ''}]"
        return BenchError(f"{self.spec.name}: {what}{where}{self.stderr_tail()}")

    def diagnose(self) -> str:
        """For a silent server: its threads' states, a py-spy dump when py-spy is installed, then a
        faulthandler dump (SIGABRT)."""
        pid = self.proc.pid
        states = []
        try:
            for task in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
                base = f"/proc/{pid}/task/{task}"
                with open(f"{base}/stat", "rb") as f:
                    stat = f.read()
                with open(f"{base}/wchan", "rb") as f:
                    wchan = f.read().decode() or "-"
                state = stat[stat.rindex(b")") + 2 :].split()[0].decode()
                states.append(f"{task}:{state}/{wchan}")
        except OSError:
            pass
        stacks = ""
        py_spy = shutil.which("py-spy") or shutil.which("py-spy", path=os.path.dirname(sys.executable))
        if py_spy and self.proc.poll() is None:
            # Where it is, native frames included, without stopping it (faulthandler below needs
            # the process to act on a signal, which one stuck in C may not do).
            try:
                dump = subprocess.run(
                    [py_spy, "dump", "--native", "--pid", str(pid)],
                    capture_output=True,
                    text=True,
                    timeout=20,
                    check=False,
                )
                stacks = f"\n--- py-spy dump ---\n{(dump.stdout + dump.stderr).strip()[-4000:]}\n---"
            except (OSError, subprocess.SubprocessError) as exc:
                stacks = f"\n(py-spy dump failed: {exc})"
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGABRT)  # PYTHONFAULTHANDLER=1: dumps every thread
            try:
                self.proc.wait(3)
            except subprocess.TimeoutExpired:
                pass
        return f"threads (tid:state/wchan) {' '.join(states)}{stacks}"

    def stderr_tail(self, limit: int = 3000) -> str:
        self.stderr.seek(0)
        text = self.stderr.read().decode("utf-8", "replace")
        if not text.strip():
            return ""
        if len(text) > limit:
            text = "...\n" + text[-limit:]
        return f"\n--- server stderr ---\n{text.rstrip()}\n---"

    def send(self, data: bytes) -> None:
        if self.wbuf:
            self.wbuf = memoryview(bytes(self.wbuf) + data)
            return
        try:
            written = os.write(self.wfd, data)
        except BlockingIOError:
            written = 0
        except BrokenPipeError:
            raise self.fail("stdin closed (the server exited?)") from None
        if written < len(data):
            self.wbuf = memoryview(data)[written:]
            self.selector.register(self.wfd, selectors.EVENT_WRITE)

    def _flush_some(self) -> None:
        try:
            written = os.write(self.wfd, self.wbuf)
        except BlockingIOError:
            return
        except BrokenPipeError:
            raise self.fail("stdin closed (the server exited?)") from None
        self.wbuf = self.wbuf[written:]
        if not self.wbuf:
            self.selector.unregister(self.wfd)

    def read_lines(self, deadline: float, stall: float | None = None) -> list[bytes]:
        """Block until at least one whole line has arrived; return the whole lines.

        Fails at ``deadline`` (a ``time.monotonic()``) or after ``stall`` seconds (default: the
        stall timeout) in which nothing arrived.
        """
        if stall is None:
            stall = self.stall_timeout
        while True:
            if self.rbuf_has_line:
                *lines, rest = self.rbuf.split(b"\n")
                self.rbuf = rest
                self.rbuf_has_line = False
                return [bytes(line) for line in lines]
            now = time.monotonic()
            if now >= deadline:
                raise self.fail(f"phase deadline passed; {self.diagnose()}")
            events = self.selector.select(min(stall, deadline - now))
            if not events:
                if time.monotonic() >= deadline:
                    continue
                state = self.diagnose()
                raise self.fail(f"no answer for {stall:g} s (server hung?); {state}")
            for key, mask in events:
                if key.fd == self.wfd and mask & selectors.EVENT_WRITE:
                    self._flush_some()
                elif key.fd == self.rfd:
                    data = os.read(self.rfd, 1 << 16)
                    if not data:
                        code = self.proc.poll()
                        raise self.fail(f"stdout closed (exit code {code})")
                    self.rbuf += data
                    if b"\n" in data:
                        self.rbuf_has_line = True

    # -- protocol --------------------------------------------------------------------------------

    def handshake(self, timeout: float) -> float:
        """initialize + notifications/initialized; seconds from spawn to the initialize answer."""
        deadline = time.monotonic() + timeout
        self.send(INITIALIZE + b"\n")
        while True:
            lines = self.read_lines(deadline, stall=timeout)
            answered = time.perf_counter()
            for i, line in enumerate(lines):
                try:
                    reply = msgspec.json.decode(line, type=_InitReply)
                except msgspec.DecodeError as exc:
                    raise self.fail(f"bad initialize answer ({exc}): {line[:500]!r}") from None
                if reply.id is None:  # a notification (a log message, say) before the answer
                    continue
                if reply.id != 0 or reply.error is not None or reply.result is None:
                    raise self.fail(f"bad initialize answer: {line[:500]!r}")
                if not isinstance(reply.result.get("protocolVersion"), str):
                    raise self.fail(f"initialize answer without protocolVersion: {line[:500]!r}")
                if lines[i + 1 :] or self.rbuf:
                    raise self.fail(f"unexpected messages after initialize: {lines[i + 1 :]!r}")
                self.send(INITIALIZED + b"\n")
                return answered - self.spawned_at

    def check(self, line: bytes, outstanding: dict[int, int]) -> int | None:
        """Verify one message; the id of the call it answers, or None for a notification."""
        try:
            reply = self.decoder.decode(line)
        except msgspec.DecodeError as exc:
            raise self.fail(f"undecodable or malformed message ({exc}): {line[:500]!r}") from None
        if reply.id is None and reply.method is not None:
            self.notifications[reply.method] = self.notifications.get(reply.method, 0) + 1
            return None
        if reply.method is not None:
            raise self.fail(f"unexpected request from the server: {line[:500]!r}")
        rid = reply.id
        if not isinstance(rid, int) or rid not in outstanding:
            raise self.fail(f"answer with an unknown or repeated id: {line[:500]!r}")
        if reply.jsonrpc != "2.0" or reply.error is not None or reply.result is None:
            raise self.fail(f"error or malformed answer to call {rid}: {line[:500]!r}")
        content = reply.result.content
        if (
            reply.result.is_error
            or not content
            or content[0].type != "text"
            or content[0].text != f"echo {rid}"
        ):
            raise self.fail(f"wrong answer to call {rid}: {line[:500]!r}")
        return rid

    def calls(
        self, phase: str, total: int, window: int, timeout: float, latencies: list[int] | None = None
    ) -> float:
        """``total`` echo calls with up to ``window`` in flight; seconds from first write to last answer."""
        deadline = time.monotonic() + timeout
        outstanding: dict[int, int] = {}
        sent = done = 0
        self.phase = f"{phase}: {total:,} calls, up to {window} in flight"

        def progress() -> str:
            oldest = next(iter(outstanding), None)
            return (
                f"{done:,} answered, {len(outstanding)} in flight (oldest id {oldest}), "
                f"{len(self.wbuf)} bytes unwritten, {len(self.rbuf)} bytes of a partial line read"
            )

        self.progress = progress
        clock = time.perf_counter_ns
        started = clock()
        while done < total:
            if sent < total and len(outstanding) < window:
                chunk = []
                now = clock()
                while sent < total and len(outstanding) < window:
                    rid = self.next_id
                    self.next_id += 1
                    chunk.append(CALL % (rid, rid))
                    outstanding[rid] = now
                    sent += 1
                self.send(b"".join(chunk))
            for line in self.read_lines(deadline):
                answered = self.check(line, outstanding)
                if answered is None:
                    continue
                sent_at = outstanding.pop(answered)
                if latencies is not None:
                    latencies.append(clock() - sent_at)
                done += 1
        self.progress = None
        return (clock() - started) / 1e9

    def exchange(
        self, phase: str, request: bytes, rid: int, check: Callable[[bytes], None], timeout: float
    ) -> int:
        """Send one request (a whole line) and wait for its answer; nanoseconds from write to answer.

        ``check`` is given the answer's line and raises :class:`BenchError` when it is wrong;
        notifications in between are counted and skipped, anything else fails.
        """
        deadline = time.monotonic() + timeout
        self.phase = phase
        clock = time.perf_counter_ns
        started = clock()
        self.send(request)
        while True:
            lines = self.read_lines(deadline)
            took = clock() - started  # before any decoding: the generator's own work is not timed
            for line in lines:
                try:
                    head = self.decoder_head.decode(line)
                except msgspec.DecodeError as exc:
                    raise self.fail(f"undecodable message ({exc}): {line[:500]!r}") from None
                if head.id is None and head.method is not None:
                    self.notifications[head.method] = self.notifications.get(head.method, 0) + 1
                    continue
                if head.id != rid or head.method is not None:
                    raise self.fail(f"unexpected message, waiting for the answer to {rid}: {line[:500]!r}")
                check(line)
                if self.rbuf:
                    raise self.fail(f"unexpected bytes after the answer to {rid}: {bytes(self.rbuf[:500])!r}")
                return took

    def take_id(self) -> int:
        rid = self.next_id
        self.next_id += 1
        return rid

    def close(self, timeout: float = 5.0) -> str:
        """EOF on stdin, wait for the exit, kill if need be; a note when the exit was not clean."""
        note = ""
        try:
            self.selector.close()
            if self.proc.stdin is not None:
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass
            try:
                code = self.proc.wait(timeout)
                if code != 0:
                    note = f"exit code {code} after stdin EOF"
            except subprocess.TimeoutExpired:
                note = f"did not exit within {timeout:g} s of stdin EOF; killed"
        finally:
            reap(self.proc)
            if self.proc.stdout is not None:
                self.proc.stdout.close()
        tail = self.stderr_tail()
        self.stderr.close()
        if tail:
            note = f"{note}; stderr output:{tail}" if note else f"stderr output:{tail}"
        return note


# -- the measurement -------------------------------------------------------------------------------

BIG_SIZES = (100 * 1024, 1024 * 1024)  # characters of the echoed text: "100 KB" and "1 MB"
LIST_TOOLS = 1000  # tools listed in the tools/list phase: echo and 999 more
LIST = b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n'
# Text of any size, of characters that JSON carries as they are.
_FILLER = (b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_. " * 16384)[: max(BIG_SIZES)]


def size_label(size: int) -> str:
    return f"{size // (1024 * 1024)} MB" if size >= 1024 * 1024 else f"{size // 1024} KB"


@dataclass(frozen=True)
class Counts:
    warmup: int
    sequential: int
    at: dict[int, int]  # in flight -> calls
    big: dict[int, int]  # argument size -> sequential calls
    lists: int  # tools/list calls on a server with LIST_TOOLS tools


def counts_for(quick: bool, windows: Sequence[int], big: bool = True, lists: bool = True) -> Counts:
    """Calls per phase: 5,000 sequential and at 1 in flight, 20,000 at more, 200 of 100 KB, 40 of
    1 MB, 200 tools/list (/10, or at least 5, with --quick)."""
    scale = 10 if quick else 1
    return Counts(
        warmup=2000 // scale,
        sequential=5000 // scale,
        at={w: (5000 if w == 1 else 20000) // scale for w in windows},
        big={size: max(5, (200 if size < 1024 * 1024 else 40) // scale) for size in BIG_SIZES} if big else {},
        lists=max(5, 200 // scale) if lists else 0,
    )


@dataclass
class Samples:
    p50_us: list[float] = field(default_factory=list)
    p99_us: list[float] = field(default_factory=list)
    rate: dict[int, list[float]] = field(default_factory=dict)
    cpu_us: dict[int, list[float]] = field(default_factory=dict)
    start_ms: list[float] = field(default_factory=list)
    big_ms: dict[int, list[float]] = field(default_factory=dict)  # size -> p50 round trip per round
    list_ms: list[float] = field(default_factory=list)  # p50 of tools/list with LIST_TOOLS tools
    list_bytes: list[float] = field(default_factory=list)  # size of that answer
    idle_rss_mib: list[float] = field(default_factory=list)  # VmRSS after the handshake and one call
    peak_rss_mib: list[float] = field(default_factory=list)  # VmHWM at the end of a round
    notes: list[str] = field(default_factory=list)
    failure: str | None = None  # why the server was dropped from the run (a wrong answer, a hang)


def percentile(sorted_values: Sequence[int], q: float) -> float:
    """Nearest-rank percentile of sorted values."""
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return float(sorted_values[rank - 1])


def big_call(server: ServerProcess, size: int, timeout: float) -> int:
    """One tools/call echo of a text of ``size`` characters; nanoseconds from write to answer."""
    rid = server.take_id()
    prefix = b"big %d " % rid
    text = prefix + _FILLER[: size - len(prefix)]
    request = (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"' % rid
        + text
        + b'"}}}\n'
    )

    def check(line: bytes) -> None:
        try:
            reply = server.decoder.decode(line)
        except msgspec.DecodeError as exc:
            raise server.fail(f"malformed answer to call {rid} ({exc}): {line[:300]!r}") from None
        if reply.error is not None or reply.result is None or reply.result.is_error:
            raise server.fail(f"error answer to call {rid}: {line[:300]!r}")
        content = reply.result.content
        if not content or content[0].type != "text" or content[0].text is None:
            raise server.fail(f"answer to call {rid} without text content: {line[:300]!r}")
        if content[0].text.encode() != text:
            got = content[0].text
            raise server.fail(
                f"answer to call {rid} is not the text sent: {len(got)} characters, {got[:80]!r}..."
            )

    return server.exchange(f"{size_label(size)} argument", request, rid, check, timeout)


def list_call(server: ServerProcess, expected: set[str], timeout: float) -> tuple[int, int]:
    """One tools/list; nanoseconds from write to answer, and the answer's size in bytes."""
    rid = server.take_id()
    decoder = msgspec.json.Decoder(_ToolsReply)
    size = 0

    def check(line: bytes) -> None:
        nonlocal size
        size = len(line) + 1
        try:
            reply = decoder.decode(line)
        except msgspec.DecodeError as exc:
            raise server.fail(f"malformed tools/list answer ({exc}): {line[:300]!r}") from None
        if reply.error is not None or reply.result is None:
            raise server.fail(f"error answer to tools/list: {line[:300]!r}")
        if reply.result.next_cursor is not None:
            raise server.fail(f"tools/list answer is paginated (nextCursor {reply.result.next_cursor!r})")
        names = [tool.name for tool in reply.result.tools]
        if len(names) != len(expected) or set(names) != expected:
            raise server.fail(f"tools/list answer lists {len(names)} tools, not the {len(expected)} expected")

    took = server.exchange(f"tools/list of {len(expected)} tools", LIST % rid, rid, check, timeout)
    return took, size


def one_round(spec: ServerSpec, counts: Counts, args: argparse.Namespace, samples: Samples) -> None:
    server = ServerProcess(spec, args.tools, args.stall_timeout, args.placement)
    note = ""
    try:
        server.handshake(args.start_timeout)
        server.calls("first call", 1, 1, args.phase_timeout)
        samples.idle_rss_mib.append(proc_status_kib(server.proc.pid, "VmRSS") / 1024)
        server.calls("warm-up", counts.warmup, 16, args.phase_timeout)
        server.calls("warm-up", counts.warmup // 4, 1, args.phase_timeout)
        gc.collect()
        gc.disable()
        try:
            latencies: list[int] = []
            server.calls("sequential", counts.sequential, 1, args.phase_timeout, latencies)
            latencies.sort()
            samples.p50_us.append(percentile(latencies, 50) / 1e3)
            samples.p99_us.append(percentile(latencies, 99) / 1e3)
            for window, total in counts.at.items():
                cpu_before = cpu_seconds(server.proc.pid)
                seconds = server.calls("pipelined", total, window, args.phase_timeout)
                cpu = cpu_seconds(server.proc.pid) - cpu_before
                samples.rate.setdefault(window, []).append(total / seconds)
                samples.cpu_us.setdefault(window, []).append(cpu / total * 1e6)
            for size, total in counts.big.items():
                for _ in range(max(5, total // 4)):  # warm-up: the first big messages cost more (allocator)
                    big_call(server, size, args.phase_timeout)
                took = sorted(big_call(server, size, args.phase_timeout) for _ in range(total))
                samples.big_ms.setdefault(size, []).append(percentile(took, 50) / 1e6)
        finally:
            gc.enable()
        samples.peak_rss_mib.append(proc_status_kib(server.proc.pid, "VmHWM") / 1024)
        if server.notifications:
            samples.notes.append(f"notifications from the server: {server.notifications}")
    finally:
        note = server.close()
    if note:
        samples.notes.append(note)
    if counts.lists:
        list_round(spec, counts, args, samples)


def list_round(spec: ServerSpec, counts: Counts, args: argparse.Namespace, samples: Samples) -> None:
    """tools/list on a fresh server started with LIST_TOOLS tools (``--tools LIST_TOOLS-1``)."""
    server = ServerProcess(spec, LIST_TOOLS - 1, args.stall_timeout, args.placement)
    expected = {"echo", *(f"tool_{i}" for i in range(LIST_TOOLS - 1))}
    try:
        server.handshake(args.start_timeout)
        for _ in range(5):
            list_call(server, expected, args.phase_timeout)  # warm-up
        gc.collect()
        gc.disable()
        try:
            timed = [list_call(server, expected, args.phase_timeout) for _ in range(counts.lists)]
        finally:
            gc.enable()
        samples.list_ms.append(percentile(sorted(t for t, _ in timed), 50) / 1e6)
        samples.list_bytes.append(float(timed[-1][1]))
    finally:
        note = server.close()
    if note:
        samples.notes.append(note)


def one_start(spec: ServerSpec, args: argparse.Namespace, samples: Samples) -> None:
    server = ServerProcess(spec, args.tools, args.stall_timeout, args.placement)
    try:
        samples.start_ms.append(server.handshake(args.start_timeout) * 1e3)
        server.calls("start-up", 1, 1, args.phase_timeout)
    finally:
        note = server.close()
    if note:
        samples.notes.append(note)


# -- the report ------------------------------------------------------------------------------------


def commit() -> str:
    """This checkout's commit, marked when what the servers run (runtime/, generated/,
    examples/) has uncommitted changes."""
    return _proc.commit(("runtime", "generated", "examples"))


def placement_text(placement: Placement) -> str:
    if placement.generator is None or placement.server is None:
        return "no CPU pinning"
    if placement.generator == placement.server:
        return f"generator and server pinned to one CPU ({min(placement.server)})"
    return f"generator pinned to CPU {min(placement.generator)}, server to CPU {min(placement.server)}"


def header_line(counts: Counts, rounds: int, placement: Placement, started_at: str) -> str:
    """When, what code, which machine and software, how the run was made."""
    from bench import peers

    windows = list(counts.at)
    peer_text = "; ".join(peers.describe().splitlines()) or "no peer venvs"
    phases = [f"sequential {counts.sequential:,} calls"]
    phases += [f"{counts.at[w]:,} at {w} in flight" for w in windows]
    phases += [f"{n:,} of {size_label(size)}" for size, n in counts.big.items()]
    if counts.lists:
        phases.append(f"{counts.lists:,} tools/list of {LIST_TOOLS:,} tools")
    return (
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, commit {started_at}, {machine_line()}; "
        f"CPython {platform.python_version()}; msgspec {version_of('msgspec')}, "
        f"anyio {version_of('anyio')}, trio {version_of('trio')}; {peer_text}; "
        f"{placement_text(placement)}; {rounds} rounds; " + ", ".join(phases)
    )


def table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def label_of(name: str, s: Samples) -> str:
    return SERVERS[name].label + (" (FAILED: see the notes)" if s.failure is not None else "")


def report_lines(results: dict[str, Samples], counts: Counts) -> list[str]:
    """The tables of a run (Markdown): throughput and latency, CPU and start-up, big messages and
    memory. Ratios use medians; the official SDK's low-level server is "official"."""
    windows = list(counts.at)
    official = results.get("official")
    floor = results.get("raw-floor")
    out: list[str] = []

    def rates(s: Samples, w: int) -> list[float]:
        return s.rate.get(w, [])

    head = ["server", "seq p50 µs", "seq p99 µs", *(f"calls/s at {w}" for w in windows)]
    if official is not None:
        head += ["p50 vs official", "p99 vs official", *(f"at {w} vs official" for w in windows)]
    rows = []
    for name, s in results.items():
        row = [
            label_of(name, s),
            fmt_range(s.p50_us),
            fmt_range(s.p99_us),
            *(fmt_range(rates(s, w)) for w in windows),
        ]
        if official is not None:
            row += [
                fmt_ratio(ratio(med(s.p50_us), med(official.p50_us))),
                fmt_ratio(ratio(med(s.p99_us), med(official.p99_us))),
                *(fmt_ratio(ratio(med(rates(s, w)), med(rates(official, w)))) for w in windows),
            ]
        rows.append(row)
    out += table(head, rows)

    out.append("")
    head = ["server", "start to initialize answer ms", *(f"server CPU µs/call at {w}" for w in windows)]
    if official is not None:
        head += ["start vs official"]
    if floor is not None:
        head += ["p50 vs floor", *(f"at {w} vs floor" for w in windows)]
    rows = []
    for name, s in results.items():
        row = [
            label_of(name, s),
            fmt_range(s.start_ms),
            *(fmt_range(s.cpu_us.get(w, [])) for w in windows),
        ]
        if official is not None:
            row += [fmt_ratio(ratio(med(s.start_ms), med(official.start_ms)))]
        if floor is not None:
            row += [
                fmt_ratio(ratio(med(s.p50_us), med(floor.p50_us))),
                *(fmt_ratio(ratio(med(rates(s, w)), med(rates(floor, w)))) for w in windows),
            ]
        rows.append(row)
    out += table(head, rows)

    sizes = list(counts.big)
    out.append("")
    head = ["server", *(f"{size_label(z)} round trip ms" for z in sizes)]
    if counts.lists:
        head += [f"tools/list of {LIST_TOOLS:,} ms", "its answer KiB"]
    head += ["idle RSS MiB", "peak RSS MiB"]
    if floor is not None:
        head += [*(f"{size_label(z)} vs floor" for z in sizes)]
        head += ["tools/list vs floor"] if counts.lists else []
    if official is not None:
        head += ["idle RSS vs official"]
    rows = []
    for name, s in results.items():
        row = [label_of(name, s), *(fmt_range(s.big_ms.get(z, [])) for z in sizes)]
        if counts.lists:
            row += [fmt_range(s.list_ms), fmt_range([b / 1024 for b in s.list_bytes])]
        row += [fmt_range(s.idle_rss_mib), fmt_range(s.peak_rss_mib)]
        if floor is not None:
            row += [fmt_ratio(ratio(med(s.big_ms.get(z, [])), med(floor.big_ms.get(z, [])))) for z in sizes]
            row += [fmt_ratio(ratio(med(s.list_ms), med(floor.list_ms)))] if counts.lists else []
        if official is not None:
            row += [fmt_ratio(ratio(med(s.idle_rss_mib), med(official.idle_rss_mib)))]
        rows.append(row)
    out += table(head, rows)
    return out


def failures(results: dict[str, Samples]) -> list[str]:
    """``name: reason`` (the reason's first line) of each server dropped from the run."""
    return [f"{name}: {s.failure.splitlines()[0]}" for name, s in results.items() if s.failure is not None]


def notes_lines(results: dict[str, Samples], started_at: str, ended_at: str | None = None) -> list[str]:
    """The notes of a run; ``ended_at``: what the code was at the end (default: the checkout's commit now)."""
    notes = [(name, n) for name, s in results.items() for n in dict.fromkeys(s.notes)]
    notes += [(name, f"FAILED in {s.failure}") for name, s in results.items() if s.failure is not None]
    if ended_at is None:
        ended_at = commit()
    if ended_at != started_at:
        notes.append(
            ("checkout", f"changed during the run: {started_at} at the start, {ended_at} at the end")
        )
    if not notes:
        return []
    return ["Notes:", *(f"- {name}: {n}" for name, n in notes)]


def report(
    results: dict[str, Samples], counts: Counts, rounds: int, placement: Placement, started_at: str
) -> None:
    print()
    print(header_line(counts, rounds, placement, started_at))
    print()
    print("\n".join(report_lines(results, counts)))
    from bench import targets

    found = targets.stdio_targets(results, None)
    if found:
        print()
        print("\n".join(targets.table_lines(found)))
    notes = notes_lines(results, started_at)
    if notes:
        print()
        print("\n".join(notes))


# -- main ------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_options(parser)
    return check_options(parser, parser.parse_args(argv))


def add_options(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    """This benchmark's options (``prefix``: ``stdio-`` in the suite, for all but the shared ones)."""
    if not prefix:
        parser.add_argument("--quick", action="store_true", help="small counts, 2 rounds: a smoke run")
        parser.add_argument("--rounds", type=int, help="rounds per server (default 5; 2 with --quick)")
        parser.add_argument(
            "--cpus",
            choices=["split", "shared", "free"],
            default="split",
            help="split: generator on one CPU, server on another (default); shared: both on one "
            "CPU; free: no pinning",
        )
    parser.add_argument(
        f"--{prefix}servers",
        dest="servers",
        default=",".join(DEFAULT_SERVERS),
        help=f"comma-separated, from: {', '.join(SERVERS)} (default: all but asyncio-floor)",
    )
    parser.add_argument(
        f"--{prefix}starts",
        dest="starts",
        type=int,
        help="start-up timings per server (default 5; 2 with --quick)",
    )
    parser.add_argument(
        f"--{prefix}in-flight",
        dest="in_flight",
        default="1,16,256",
        help="comma-separated numbers of requests in flight for the pipelined phases (default 1,16,256)",
    )
    parser.add_argument(
        f"--{prefix}tools", dest="tools", type=int, default=0, help="extra tools each server registers"
    )
    parser.add_argument(
        f"--{prefix}no-big", dest="no_big", action="store_true", help="skip the 100 KB and 1 MB round trips"
    )
    parser.add_argument(
        f"--{prefix}no-list",
        dest="no_list",
        action="store_true",
        help=f"skip tools/list of {LIST_TOOLS:,} tools (a second server per round)",
    )
    parser.add_argument(
        f"--{prefix}stall-timeout",
        dest="stall_timeout",
        type=float,
        default=10.0,
        help="seconds without an answer",
    )
    parser.add_argument(
        f"--{prefix}start-timeout",
        dest="start_timeout",
        type=float,
        default=30.0,
        help="seconds to the initialize answer",
    )
    parser.add_argument(
        f"--{prefix}phase-timeout", dest="phase_timeout", type=float, default=300.0, help="seconds per phase"
    )


def check_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    names = [n.strip() for n in args.servers.split(",") if n.strip()]
    unknown = [n for n in names if n not in SERVERS]
    if unknown or not names:
        parser.error(f"unknown servers {unknown}; choose from {', '.join(SERVERS)}")
    args.server_names = list(dict.fromkeys(names))
    args.placement = Placement.of(args.cpus)
    try:
        windows = [int(w) for w in args.in_flight.split(",") if w.strip()]
    except ValueError:
        parser.error("--in-flight takes comma-separated integers")
    if not windows or min(windows) < 1:
        parser.error("--in-flight takes integers of at least 1")
    args.counts = counts_for(
        args.quick, list(dict.fromkeys(windows)), big=not args.no_big, lists=not args.no_list
    )
    args.stdio_rounds = args.rounds if args.rounds is not None else 2 if args.quick else 5
    if args.starts is None:
        args.starts = 2 if args.quick else 5
    if args.stdio_rounds < 1 or args.starts < 0 or args.tools < 0:
        parser.error("--rounds must be at least 1, --starts and --tools at least 0")
    return args


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> dict[str, Samples]:
    """Every round of every server, then the start-ups; the caller's CPU set is restored after."""
    counts: Counts = args.counts
    names: list[str] = args.server_names
    rounds: int = args.stdio_rounds
    prepare_peers(names)
    results = {name: Samples() for name in names}
    affinity = os.sched_getaffinity(0)
    try:
        for r, name, s in rounds_of(results, rounds):
            started = time.monotonic()
            try:
                one_round(SERVERS[name], counts, args, s)
            except BenchError as exc:
                # The other servers go on: their numbers stand; this one is reported as failed.
                s.failure = f"round {r + 1}: {exc}"
                log(f"stdio round {r + 1}/{rounds} {name}: FAILED: {exc}")
                continue
            big = "".join(f", {size_label(z)} {s.big_ms[z][-1]:.2f} ms" for z in counts.big)
            listed = f", tools/list {s.list_ms[-1]:.2f} ms" if counts.lists else ""
            log(
                f"stdio round {r + 1}/{rounds} {name}: p50 {s.p50_us[-1]:.0f} µs, "
                + ", ".join(f"{s.rate[w][-1]:,.0f}/s at {w}" for w in counts.at)
                + f"{big}{listed}, idle RSS {s.idle_rss_mib[-1]:.1f} MiB"
                + f" ({time.monotonic() - started:.1f} s)"
            )
        for _ in range(args.starts):
            for name in names:
                if results[name].failure is None:
                    try:
                        one_start(SERVERS[name], args, results[name])
                    except BenchError as exc:
                        results[name].failure = f"start-up: {exc}"
                        log(f"stdio start-up {name}: FAILED: {exc}")
        for name in names:
            if results[name].start_ms:
                log(f"start-up {name}: {fmt_range(results[name].start_ms)} ms")
    finally:
        os.sched_setaffinity(0, affinity)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started_at = commit()
    load = os.getloadavg()[0]
    if load > 0.5:
        log(f"note: 1-minute load average is {load:.2f} before the run; other work skews the numbers")
    try:
        results = run(args)
    except BenchError as exc:
        print(f"bench/stdio.py: run aborted: {exc}", file=sys.stderr)
        return 1
    report(results, args.counts, args.stdio_rounds, args.placement, started_at)
    return 1 if failures(results) else 0


if __name__ == "__main__":
    sys.exit(main())
