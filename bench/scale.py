"""Scale-out: ``mcpbind serve --workers N --store redis://...`` behind nginx, beside the official SDK.

    PYTHONPATH=runtime:generated python -m bench scale [--quick] [--rounds N]
    PYTHONPATH=runtime:generated python bench/scale.py [--quick] [--rounds N] [--duration S] ...

Three measures, in one run, with a ``redis-server`` and an ``nginx`` (round-robin, keep-alive
connections to its upstreams, no access log) that the benchmark starts on free ports of 127.0.0.1
(the test suite's harnesses, ``tests/redis_harness.py`` and ``tests/nginx_harness.py``):

1. **calls/s through nginx**: ``tools/call`` of ``echo`` (``examples/echo_server.py``, the HTTP
   benchmark's server) driven by wrk with the HTTP benchmark's checked Lua script
   (``bench/streamable_http.py``), in one 2025-11-25 session opened through nginx and as
   2026-07-28 requests (no session), JSON responses, for: mcpbind with 1 and with 2 workers
   (``--workers``) sharing the Redis store, mcpbind with 1 worker and its in-memory store, the
   official SDK's low-level server (its ``streamable_http_app()`` under uvicorn, one process) and
   FastMCP (2026-07-28 only, in its venv). Beside calls/s: the CPU time per call of the server's
   processes, of nginx and of Redis, and the Redis commands per call.
2. **latency added by the Redis store**: the same mcpbind server with 1 worker, with the Redis
   store and with the in-memory one, called directly (no nginx) one call at a time (wrk, one
   connection): p50 and p99.
3. **Redis memory per session and per task**: ``used_memory`` (``INFO memory``) and the number
   of keys before and after N sessions (``initialize``, ``notifications/initialized`` and one
   call each, never deleted) and after N tasks (2026-07-28 ``tools/call`` of a task tool, through
   mcpbind's client: ``start_tool`` then the task's result), on ``bench/scale_task_server.py``
   served with ``--store``. Tasks that a server keeps outside Redis add no key: the report says
   so.

Every answer is checked (wrk's script, and httpx before and after each phase). Servers, nginx
and Redis are stopped and reaped on the way out, on error too.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx

from mcpbind.protocol.errors import McpError

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: bench.* and tests.* are imported from the root
    sys.path.insert(0, str(ROOT))

from bench import _proc, peers  # noqa: E402
from bench.scale_parts import (  # noqa: E402
    RedisServer,
    key_sizes,
    redis_info,
    redis_pid,
    running_nginx,
    running_redis,
    serving,
)
from bench.scale_report import report_lines  # noqa: E402
from bench.streamable_http import (  # noqa: E402
    PATH,
    BenchError,
    Config,
    McpHttpClient,
    ServerProcess,
    children_cpu_seconds,
    ensure_wrk,
    lua_script,
    machine_busy_seconds,
    run_wrk,
    wait_for_quiet,
)

ECHO_TARGET = "examples/echo_server.py:build"
TASK_TARGET = "bench/scale_task_server.py"
MODES = {"session": "2025-11-25 session", "modern": "2026-07-28, no session"}


@dataclass(frozen=True)
class Setup:
    """One server configuration behind nginx."""

    key: str
    label: str
    kind: str  # "mcpbind", or the bench/streamable_http.py implementation
    workers: int = 1
    redis: bool = False
    modes: tuple[str, ...] = ("session", "modern")
    latency: bool = False  # also called one at a time, directly (measure 2)


SETUPS = (
    Setup("mcpbind-1", "mcpbind, 1 worker, Redis store", "mcpbind", 1, True, latency=True),
    Setup("mcpbind-2", "mcpbind, 2 workers, Redis store", "mcpbind", 2, True),
    Setup("mcpbind-1-memory", "mcpbind, 1 worker, in-memory store", "mcpbind", 1, False, latency=True),
    Setup("official", "official SDK low-level Server, 1 worker", "official-lowlevel"),
    Setup("fastmcp", "FastMCP, 1 worker", "fastmcp", modes=("modern",)),
)


@dataclass(frozen=True)
class Options:
    """What a run does (from the command line: :func:`check_options`)."""

    rounds: int
    duration: float  # seconds per timed phase
    warmup: float
    concurrency: list[int]
    setups: list[Setup]
    sessions: int  # sessions and tasks made for Redis memory (0: none)
    http: str  # uvicorn's HTTP parser, for the servers run by bench/streamable_http.py
    wait_for_quiet: float


@dataclass(frozen=True)
class Phase:
    """One timed wrk run."""

    rate: float
    p50_us: float
    p99_us: float
    server_cpu_us: float  # all the server's processes, per call
    nginx_cpu_us: float
    redis_cpu_us: float
    redis_commands: float  # per call
    others_pct: float  # CPU time of everything else on the machine, % of one CPU


@dataclass(frozen=True)
class Snapshot:
    """Redis's ``used_memory`` and the size of each key (``MEMORY USAGE``) at one moment."""

    used_memory: int
    sizes: dict[str, int]

    @classmethod
    def of(cls, redis: RedisServer) -> Snapshot:
        return cls(int(redis_info(redis, "memory")["used_memory"]), key_sizes(redis))


@dataclass(frozen=True)
class Grown:
    """What ``count`` sessions or tasks added to Redis."""

    what: str
    count: int
    used_memory: int  # growth of INFO memory's used_memory
    keys: int  # keys added
    key_bytes: int  # MEMORY USAGE of the keys added

    @classmethod
    def between(cls, what: str, count: int, before: Snapshot, after: Snapshot) -> Grown:
        added = [key for key in after.sizes if key not in before.sizes]
        return cls(
            what,
            count,
            after.used_memory - before.used_memory,
            len(after.sizes) - len(before.sizes),
            sum(after.sizes[key] for key in added),
        )


@dataclass
class Results:
    load: dict[tuple[str, str, int], list[Phase]] = field(default_factory=dict)
    latency: dict[tuple[str, str], list[Phase]] = field(default_factory=dict)
    memory: list[Grown] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Running:
    base: str
    cpu_seconds: Callable[[], float]


@contextmanager
def started(setup: Setup, opts: Options, redis: RedisServer, notes: list[str]) -> Iterator[Running]:
    if setup.kind == "mcpbind":
        store = redis.url if setup.redis else None
        with serving(ECHO_TARGET, setup.workers, store, notes) as served:
            yield Running(served.base, served.cpu_seconds)
        return
    server = ServerProcess(
        Config(setup.kind, "json" if "session" in setup.modes else "modern"), opts.http, 60
    )
    try:
        pid = server.pid
        yield Running(server.base, lambda: _proc.cpu_seconds(pid))
    finally:
        note = server.close()
        if note:
            notes.append(f"{setup.key}: {note}")


def timed(
    opts: Options,
    wrk: str,
    url: str,
    script: Path,
    connections: int,
    running: Running,
    nginx_pid: int | None,
    redis: RedisServer,
    what: str,
) -> Phase:
    """One wrk run at ``connections``, with the CPU time of everyone involved."""
    rpid = redis_pid(redis)
    commands = int(redis_info(redis, "stats")["total_commands_processed"])
    server0, redis0 = running.cpu_seconds(), _proc.cpu_seconds(rpid)
    nginx0 = _proc.cpu_seconds(nginx_pid) if nginx_pid is not None else 0.0
    busy0, wrk0 = machine_busy_seconds(), children_cpu_seconds()
    result = run_wrk(wrk, url, script, connections, opts.duration, 1, what)
    server1, redis1 = running.cpu_seconds(), _proc.cpu_seconds(rpid)
    nginx1 = _proc.cpu_seconds(nginx_pid) if nginx_pid is not None else 0.0
    ours = (server1 - server0) + (redis1 - redis0) + (nginx1 - nginx0) + (children_cpu_seconds() - wrk0)
    others = max(0.0, machine_busy_seconds() - busy0 - ours)
    commands = int(redis_info(redis, "stats")["total_commands_processed"]) - commands - 1  # (our INFO)
    per_call = 1e6 / result.calls
    return Phase(
        result.rate,
        result.p50_us,
        result.p99_us,
        (server1 - server0) * per_call,
        (nginx1 - nginx0) * per_call,
        (redis1 - redis0) * per_call,
        commands / result.calls,
        others / result.seconds * 100,
    )


def one_setup(setup: Setup, opts: Options, wrk: str, redis: RedisServer, results: Results) -> str:
    redis.flush()
    parts = []
    with started(setup, opts, redis, results.notes) as running:
        with running_nginx([running.base], access_log=False) as nginx, tempfile.TemporaryDirectory() as tmp:
            assert nginx.process is not None
            for mode in setup.modes:
                name = f"{setup.key}/{mode}"
                with httpx.Client(timeout=30) as client:
                    mcp = McpHttpClient(client, nginx.url + PATH, name, modern=mode == "modern")
                    mcp.open()
                    mcp.echo("checked before timing")
                    if mode == "session" and mcp.session_id is None:
                        raise BenchError(f"{name}: no Mcp-Session-Id")
                    script = Path(tmp) / f"{mode}.lua"
                    script.write_text(lua_script(mcp.session_id, mode == "modern"))
                    run_wrk(wrk, nginx.url + PATH, script, 16, opts.warmup, 1, f"{name} warm-up")
                    for c in opts.concurrency:
                        what = f"{name} through nginx at c={c}"
                        phase = timed(
                            opts, wrk, nginx.url + PATH, script, c, running, nginx.process.pid, redis, what
                        )
                        results.load.setdefault((setup.key, mode, c), []).append(phase)
                        parts.append(f"{mode} {phase.rate:,.0f}/s at {c}")
                    if setup.latency:
                        direct = running.base + PATH
                        phase = timed(
                            opts, wrk, direct, script, 1, running, None, redis, f"{name} sequential"
                        )
                        results.latency.setdefault((setup.key, mode), []).append(phase)
                        parts.append(f"{mode} p50 {phase.p50_us:.0f} µs")
                    mcp.echo("checked after timing")
                    mcp.delete()
    return ", ".join(parts)


async def make_tasks(url: str, count: int) -> int:
    """``count`` 2026-07-28 calls of ``work`` through mcpbind's client, each followed to its
    result; how many were run as tasks."""
    from mcpbind.client.client import Client

    made = 0
    client = Client("bench-scale", protocol_version="2026-07-28")
    async with client.connect_url(url, transport="streamable-http") as remote:
        for i in range(count):
            task = await remote.start_tool("work", {"n": i})
            result = await task.result()
            if result.is_error or result.structured_content != {"result": i}:
                raise BenchError(f"task {i}: wrong result {result!r}")
            made += task.task_id is not None
    return made


def measure_memory(opts: Options, redis: RedisServer, results: Results) -> None:
    """Redis memory per session (JSON answers, then SSE answers, whose events Redis keeps for
    resumption) and per task (measure 3)."""
    n = opts.sessions
    for json_response, what in ((True, "JSON answers"), (False, "SSE answers (the default)")):
        redis.flush()
        with serving(TASK_TARGET, 1, redis.url, results.notes, json_response=json_response) as server:
            with httpx.Client(timeout=30) as client:
                warm = McpHttpClient(client, server.url, "warm-up")
                warm.open()
                warm.echo("warm-up")
                warm.delete()
                before = Snapshot.of(redis)
                for i in range(n):
                    mcp = McpHttpClient(client, server.url, f"session {i}")
                    mcp.open()
                    mcp.echo(f"session {i}")
                after = Snapshot.of(redis)
            results.memory.append(Grown.between(f"2025-11-25 session, {what}", n, before, after))
            if not json_response:
                continue
            anyio.run(make_tasks, server.url, 1)  # (whatever is made once)
            before = Snapshot.of(redis)
            made = anyio.run(make_tasks, server.url, n)
            after = Snapshot.of(redis)
            if made != n:
                raise BenchError(
                    f"{n - made} of {n} calls of the task tool were answered at once, not as tasks"
                )
            results.memory.append(Grown.between("2026-07-28 task, completed", n, before, after))


def run(args: argparse.Namespace) -> Results:
    """Every round of every setup, then the memory; :class:`BenchError` for whatever failed (a
    wrong answer, a server that did not start, a lost connection, Redis or nginx missing)."""
    try:
        return measured(args.scale)
    except (httpx.HTTPError, McpError, RuntimeError, OSError) as exc:
        raise BenchError(f"{type(exc).__name__}: {exc}") from exc


def measured(opts: Options) -> Results:
    wrk = ensure_wrk()
    if any(s.kind == "fastmcp" for s in opts.setups):
        peers.ensure("fastmcp")
    results = Results()
    with running_redis() as redis:
        setups: list[Setup] = opts.setups
        for r in range(opts.rounds):
            shift = r % len(setups)
            for setup in setups[shift:] + setups[:shift]:
                if opts.wait_for_quiet > 0:
                    busy = wait_for_quiet(opts.wait_for_quiet)
                    if busy >= 20:
                        results.notes.append(
                            f"{setup.key}: a round started with other work taking {busy:.0f}% of a CPU"
                        )
                t0 = time.monotonic()
                summary = one_setup(setup, opts, wrk, redis, results)
                log(
                    f"scale round {r + 1}/{opts.rounds} {setup.key}: {summary} ({time.monotonic() - t0:.1f} s)"
                )
        if opts.sessions:
            t0 = time.monotonic()
            measure_memory(opts, redis, results)
            log(f"scale memory: {opts.sessions} sessions and tasks ({time.monotonic() - t0:.1f} s)")
    return results


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- options ---------------------------------------------------------------------------------------


def add_options(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    if not prefix:
        parser.add_argument(
            "--quick", action="store_true", help="1 round of 1 s phases, 200 sessions and tasks"
        )
        parser.add_argument("--rounds", type=int, help="rounds (default 3; 1 with --quick)")
    parser.add_argument(
        f"--{prefix}duration", dest="scale_duration", type=float, help="seconds per phase (default 5)"
    )
    parser.add_argument(
        f"--{prefix}concurrency",
        dest="scale_concurrency",
        default="16,64",
        help="wrk connections (default 16,64)",
    )
    parser.add_argument(
        f"--{prefix}setups",
        dest="scale_setups",
        default=",".join(s.key for s in SETUPS),
        help=f"from: {', '.join(s.key for s in SETUPS)}",
    )
    parser.add_argument(
        f"--{prefix}wait-for-quiet",
        dest="scale_wait_for_quiet",
        type=float,
        default=0.0,
        metavar="S",
        help="before each server, wait up to S seconds for other work to drop below 20%% of a CPU",
    )
    parser.add_argument(
        f"--{prefix}sessions",
        dest="scale_sessions",
        type=int,
        help="sessions and tasks made (default 1000; 0: none)",
    )


def check_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """Check the options and put what they say in ``args.scale`` (an :class:`Options`)."""
    quick = args.quick
    try:
        concurrency = [int(c) for c in args.scale_concurrency.split(",") if c.strip()]
    except ValueError:
        parser.error("--scale-concurrency takes numbers: 16,64")
    if not concurrency or min(concurrency) < 1:
        parser.error("--scale-concurrency takes numbers of 1 or more")
    keys = _proc.picked(parser, args.scale_setups, [s.key for s in SETUPS], "setups")
    sessions = args.scale_sessions if args.scale_sessions is not None else (200 if quick else 1000)
    if sessions < 0:
        parser.error("--scale-sessions must be at least 0")
    args.scale = Options(
        rounds=_proc.count(parser, args.rounds, 1 if quick else 3, "--rounds"),
        duration=args.scale_duration or (1.0 if quick else 5.0),
        warmup=1.0 if quick else 2.0,
        concurrency=concurrency,
        setups=[s for s in SETUPS if s.key in keys],
        sessions=sessions,
        http="httptools" if importlib.util.find_spec("httptools") else "h11",
        wait_for_quiet=args.scale_wait_for_quiet,
    )
    return args


def header_line(opts: Options) -> str:
    return (
        f"{opts.rounds} round(s) of {opts.duration:g} s per phase (after {opts.warmup:g} s of warm-up at 16 "
        f"connections), at {', '.join(map(str, opts.concurrency))} connections through nginx; "
        f"{opts.sessions} sessions and tasks for Redis memory; uvicorn's HTTP parser: {opts.http}; "
        f"{os.cpu_count()} CPUs, nothing pinned."
    )


def lines(opts: Options, results: Results) -> list[str]:
    """The report: the header line, then the tables."""
    return [header_line(opts), "", *report_lines(results, opts.concurrency, SETUPS, MODES)]


def print_report(args: argparse.Namespace, results: Results) -> int:
    print("\n".join(lines(args.scale, results)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    errors = (BenchError, peers.PeerError)
    return _proc.standalone("scale.py", __doc__, add_options, check_options, run, print_report, errors, argv)


if __name__ == "__main__":
    sys.exit(main())
