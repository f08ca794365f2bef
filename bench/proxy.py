"""The proxy benchmark of issue 17: ``mcpbind proxy`` beside ``mcp-proxy`` (PyPI) and
``supergateway`` (npm), in both directions, against the same server reached directly.

* ``http`` (a stdio server exposed over Streamable HTTP): mcpbind's echo server
  (``examples/echo_server.py``) over stdio behind each proxy, which serves Streamable HTTP on
  127.0.0.1; beside it the same server served over HTTP by itself (``mcpbind serve --transport
  http``, once with JSON answers and once with SSE ones, its default). The load is
  ``bench/streamable_http.py``'s: one session opened with httpx (``initialize``,
  ``notifications/initialized``, a checked call), then wrk with its Lua script (every answer
  checked) for a warm-up and at 1 and 16 connections, all in that session.
* ``stdio`` (a remote HTTP server exposed as a local stdio server): the echo server served by
  ``mcpbind serve --transport http --json-response``, and each proxy in front of it as a stdio
  server, driven by ``bench/stdio.py``'s load generator (handshake, sequential calls, then 1 and
  16 in flight, every answer checked); beside it the echo server over stdio itself.

Per setup and round: the sequential p50 and p99 (wrk at 1 connection; the stdio generator's
sequential phase), calls/s at each concurrency, and the CPU per call of the process the client
talks to (the proxy; the server itself when direct) and of what runs behind it (the upstream
server). Every process is started afresh each round, listens on 127.0.0.1 only, and is stopped
(with everything it started) on the way out, on failure too; a setup that gives a wrong answer
or stops answering is dropped from the run and reported as failed. ``mcpbind proxy`` is skipped
with a note while this checkout has none.

    PYTHONPATH=runtime:generated python bench/proxy.py [--quick] [--rounds N] [--setups a,b]
        [--directions http,stdio] [--concurrency 1,16] [--duration S]
"""

from __future__ import annotations

import argparse
import gc
import signal
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the bench package is imported from the repository root
    sys.path.insert(0, str(ROOT))

from bench import _proc, peers, proxy_parts, proxy_report, stdio, streamable_http  # noqa: E402
from bench.proxy_parts import LABELS, PROXIES, Front, Launch  # noqa: E402
from bench.streamable_http import BenchError, McpHttpClient, free_port  # noqa: E402

DIRECTIONS = ("http", "stdio")
HTTP_SETUPS = ("direct-json", "direct-sse", *PROXIES)
STDIO_SETUPS = ("direct", *PROXIES)
SETUP_NAMES = ("direct", *PROXIES)  # --setups: direct names both direct rows of the HTTP direction
# The peers' installs the suite makes only when this scenario runs.
OWN_PEERS = ("mcp-proxy",)


@dataclass
class Samples:
    """One setup's figures over the rounds (medians are taken in the report)."""

    p50_us: list[float] = field(default_factory=list)  # sequential: one call at a time
    p99_us: list[float] = field(default_factory=list)
    rate: dict[int, list[float]] = field(default_factory=dict)  # concurrency -> calls/s
    front_cpu_us: dict[int, list[float]] = field(default_factory=dict)  # the proxy (or lone server)
    behind_cpu_us: dict[int, list[float]] = field(default_factory=dict)  # the upstream server
    answers: str = ""  # the Content-Type of a tools/call answer (HTTP direction)
    notes: list[str] = field(default_factory=list)
    failure: str | None = None


@dataclass(frozen=True)
class Options:
    directions: list[str]
    setups: list[str]
    rounds: int
    duration: float
    warmup: float
    concurrency: list[int]
    counts: stdio.Counts  # the stdio direction's calls per phase
    start_timeout: float
    stall_timeout: float
    quick: bool


@dataclass
class Results:
    http: dict[str, Samples] = field(default_factory=dict)
    stdio: dict[str, Samples] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # setup -> why (mcpbind proxy missing)
    commands: dict[tuple[str, str], str] = field(default_factory=dict)  # (direction, setup) -> shown
    versions: dict[str, str] = field(default_factory=dict)
    wrk: str = "wrk"


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- HTTP in front of a stdio server ---------------------------------------------------------------


@contextmanager
def front(name: str, launch: Launch, port: int, opts: Options, notes: list[str]) -> Iterator[Front]:
    """A started :class:`Front`, stopped at the end; what it printed goes to ``notes``."""
    server = Front(name, launch, port, opts.start_timeout)
    try:
        yield server
    finally:
        printed = server.close()
        if printed:
            notes.append(f"printed: {printed[:500]}")


def answer_type(client: httpx.Client, mcp: McpHttpClient) -> str:
    """The Content-Type of a checked ``tools/call`` answer in ``mcp``'s session."""
    rid = mcp.next_id
    mcp.next_id += 1
    call: dict[str, object] = {"jsonrpc": "2.0", "id": rid, "method": "tools/call"}
    call["params"] = streamable_http.call_params("kind", False)
    response = client.post(mcp.url, json=call, headers=mcp.headers("tools/call"))
    answer = streamable_http.parse_answer(response, f"{mcp.name}: call")
    if answer.get("id") != rid or "result" not in answer:
        raise BenchError(f"{mcp.name}: wrong answer to a call: {answer!r}")
    kind: str = response.headers.get("content-type", "")
    return kind.split(";")[0].strip()


def http_round(setup: str, opts: Options, wrk: str, s: Samples, results: Results) -> str:
    port = free_port()
    launch = proxy_parts.http_front(setup, port)
    results.commands[("http", setup)] = launch.shown()
    with front(setup, launch, port, opts, s.notes) as server, tempfile.TemporaryDirectory() as tmp:
        with httpx.Client(timeout=opts.stall_timeout) as client:
            mcp = McpHttpClient(client, server.url, setup)
            mcp.open()
            if mcp.session_id is None:
                raise BenchError(f"{setup}: no Mcp-Session-Id: the endpoint holds no session")
            mcp.echo("checked before timing")
            s.answers = answer_type(client, mcp)
            script = Path(tmp) / "call.lua"
            script.write_text(streamable_http.lua_script(mcp.session_id))
            if opts.warmup > 0:
                streamable_http.run_wrk(wrk, server.url, script, 16, opts.warmup, 1, f"{setup} warm-up")
            parts = []
            for c in opts.concurrency:
                front0, behind0 = server.cpu()
                done = streamable_http.run_wrk(
                    wrk, server.url, script, c, opts.duration, 1, f"{setup} at c={c}"
                )
                front1, behind1 = server.cpu()
                s.rate.setdefault(c, []).append(done.rate)
                s.front_cpu_us.setdefault(c, []).append((front1 - front0) / done.calls * 1e6)
                s.behind_cpu_us.setdefault(c, []).append((behind1 - behind0) / done.calls * 1e6)
                if c == 1:
                    s.p50_us.append(done.p50_us)
                    s.p99_us.append(done.p99_us)
                parts.append(f"{done.rate:,.0f}/s at {c}")
            mcp.echo("checked after timing")
            try:
                mcp.delete()
            except BenchError as exc:
                s.notes.append(f"DELETE of the session: {exc}")
    return ", ".join(parts)


# -- a stdio server in front of an HTTP one --------------------------------------------------------


@dataclass(frozen=True)
class CommandSpec(stdio.ServerSpec):
    """A stdio server for ``bench/stdio.py``'s :class:`~bench.stdio.ServerProcess` given as a
    whole command and environment (a proxy, not a Python file of this checkout)."""

    argv: tuple[str, ...] = ()
    environ: tuple[tuple[str, str], ...] = ()

    def command(self, extra_tools: int) -> list[str]:
        return list(self.argv)

    def env(self) -> dict[str, str]:
        return dict(self.environ)


def stdio_round(setup: str, opts: Options, s: Samples, results: Results) -> str:
    notes: list[str] = []
    with upstream_http(setup, opts, notes) as upstream:
        launch = proxy_parts.stdio_front(setup, upstream.url if upstream is not None else "")
        results.commands[("stdio", setup)] = launch.shown()
        spec = CommandSpec(
            setup, LABELS[setup], (), argv=tuple(launch.command), environ=tuple(launch.env.items())
        )
        server = stdio.ServerProcess(spec, 0, opts.stall_timeout, stdio.Placement(None, None))
        parts = []
        try:
            server.handshake(opts.start_timeout)
            server.calls("first call", 1, 1, opts.start_timeout)
            timeout = opts.stall_timeout * 30
            server.calls("warm-up", opts.counts.warmup, 16, timeout)
            gc.collect()
            gc.disable()
            try:
                latencies: list[int] = []
                server.calls("sequential", opts.counts.sequential, 1, timeout, latencies)
                latencies.sort()
                s.p50_us.append(stdio.percentile(latencies, 50) / 1e3)
                s.p99_us.append(stdio.percentile(latencies, 99) / 1e3)
                for window, total in opts.counts.at.items():
                    front0 = _proc.cpu_seconds(server.proc.pid)
                    behind0 = upstream.cpu()[0] if upstream is not None else 0.0
                    seconds = server.calls("pipelined", total, window, timeout)
                    front1 = _proc.cpu_seconds(server.proc.pid)
                    behind1 = upstream.cpu()[0] if upstream is not None else 0.0
                    s.rate.setdefault(window, []).append(total / seconds)
                    s.front_cpu_us.setdefault(window, []).append((front1 - front0) / total * 1e6)
                    if upstream is not None:
                        s.behind_cpu_us.setdefault(window, []).append((behind1 - behind0) / total * 1e6)
                    parts.append(f"{total / seconds:,.0f}/s at {window}")
            finally:
                gc.enable()
            if server.notifications:
                s.notes.append(f"notifications from the proxy: {server.notifications}")
        finally:
            note = server.close()
        if note:
            s.notes.append(note)
    s.notes += [f"upstream HTTP server {n}" for n in notes]
    return f"p50 {s.p50_us[-1]:.0f} µs, " + ", ".join(parts)


@contextmanager
def upstream_http(setup: str, opts: Options, notes: list[str]) -> Iterator[Front | None]:
    """The echo server over HTTP (JSON answers) for a proxy to stand in front of; none for ``direct``."""
    if setup == "direct":
        yield None
        return
    port = free_port()
    with front(
        "upstream HTTP server", proxy_parts.serve_http(port, json_response=True), port, opts, notes
    ) as up:
        yield up


# -- the run ---------------------------------------------------------------------------------------


def prepare(opts: Options, results: Results) -> str:
    """Install the peers the chosen setups need, and find out whether ``mcpbind proxy`` exists;
    the path of wrk when the HTTP direction runs."""
    if "mcp-proxy" in opts.setups:
        peers.ensure("mcp-proxy")
        for name, version in peers.installed_versions("mcp-proxy").items():
            results.versions[f"{name} (mcp-proxy venv)"] = version
    if "supergateway" in opts.setups:
        proxy_parts.ensure_supergateway()
        results.versions.update(proxy_parts.supergateway_versions())
    if "mcpbind" in opts.setups:
        missing = proxy_parts.mcpbind_proxy_missing()
        if missing is not None:
            results.skipped["mcpbind"] = missing
            log(f"proxy: {missing}: its rows are skipped")
    return streamable_http.ensure_wrk() if "http" in opts.directions else "wrk"


def run(args: argparse.Namespace) -> Results:
    opts: Options = args.proxy
    results = Results()
    wrk = prepare(opts, results)
    results.wrk = f"wrk {streamable_http.wrk_version(wrk)}" if "http" in opts.directions else ""
    chosen = [name for name in opts.setups if name not in results.skipped]
    if "http" in opts.directions:
        names = [n for n in HTTP_SETUPS if n in chosen or (n.startswith("direct") and "direct" in chosen)]
        results.http = {name: Samples() for name in names}
        for r, name, s in _proc.rounds_of(results.http, opts.rounds) if names else ():
            started = time.monotonic()
            try:
                summary = http_round(name, opts, wrk, s, results)
            except BenchError as exc:
                s.failure = f"round {r + 1}: {exc}"
                log(f"proxy http round {r + 1}/{opts.rounds} {name}: FAILED: {exc}")
                continue
            log(
                f"proxy http round {r + 1}/{opts.rounds} {name}: {summary} ({time.monotonic() - started:.1f} s)"
            )
    if "stdio" in opts.directions:
        names = [n for n in STDIO_SETUPS if n in chosen]
        results.stdio = {name: Samples() for name in names}
        for r, name, s in _proc.rounds_of(results.stdio, opts.rounds) if names else ():
            started = time.monotonic()
            try:
                summary = stdio_round(name, opts, s, results)
            except (BenchError, stdio.BenchError) as exc:
                s.failure = f"round {r + 1}: {exc}"
                log(f"proxy stdio round {r + 1}/{opts.rounds} {name}: FAILED: {exc}")
                continue
            log(
                f"proxy stdio round {r + 1}/{opts.rounds} {name}: {summary} ({time.monotonic() - started:.1f} s)"
            )
    return results


def failures(results: Results) -> list[str]:
    """``direction setup: reason`` (the reason's first line) of each setup dropped from the run."""
    return [
        f"{direction} {name}: {s.failure.splitlines()[0]}"
        for direction, found in (("http", results.http), ("stdio", results.stdio))
        for name, s in found.items()
        if s.failure is not None
    ]


# -- options ---------------------------------------------------------------------------------------


def add_options(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    if not prefix:
        parser.add_argument(
            "--quick", action="store_true", help="2 rounds of 1 s phases, no wrk warm-up: a smoke run"
        )
        parser.add_argument("--rounds", type=int, help="rounds per setup (default 5; 2 with --quick)")
    parser.add_argument(
        f"--{prefix}setups",
        dest="proxy_setups",
        default=",".join(SETUP_NAMES),
        help=f"comma-separated, from: {', '.join(SETUP_NAMES)} (default: all)",
    )
    parser.add_argument(
        f"--{prefix}directions",
        dest="proxy_directions",
        default=",".join(DIRECTIONS),
        help="http: a stdio server exposed over HTTP; stdio: an HTTP server exposed over stdio (default both)",
    )
    parser.add_argument(
        f"--{prefix}concurrency",
        dest="proxy_concurrency",
        default="1,16",
        help="wrk connections (http) and calls in flight (stdio), comma-separated (default 1,16)",
    )
    parser.add_argument(
        f"--{prefix}duration",
        dest="proxy_duration",
        type=float,
        help="seconds per wrk phase (default 5; 1 with --quick)",
    )
    parser.add_argument(
        f"--{prefix}start-timeout",
        dest="proxy_start_timeout",
        type=float,
        default=30.0,
        help="seconds for a setup to listen or answer initialize (default 30)",
    )
    parser.add_argument(
        f"--{prefix}stall-timeout",
        dest="proxy_stall_timeout",
        type=float,
        default=10.0,
        help="seconds without an answer before a setup is failed (default 10)",
    )


def check_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """Check the options and put what they say in ``args.proxy`` (an :class:`Options`)."""
    quick: bool = args.quick
    try:
        concurrency = sorted({int(c) for c in args.proxy_concurrency.split(",") if c.strip()})
    except ValueError:
        parser.error("--proxy-concurrency takes numbers: 1,16")
    if not concurrency or min(concurrency) < 1:
        parser.error("--proxy-concurrency takes numbers of 1 or more")
    if 1 not in concurrency:
        concurrency.insert(0, 1)  # the sequential figures are those of one at a time
    # Calls per stdio phase: a proxy in front of HTTP makes 100-300 calls/s here, so few.
    counts = stdio.Counts(
        warmup=25 if quick else 200,
        sequential=100 if quick else 1000,
        at={c: (100 if quick else 1000) * (1 if c == 1 else 5) for c in concurrency},
        big={},
        lists=0,
    )
    duration = args.proxy_duration or (1.0 if quick else 5.0)
    if duration < 1:
        parser.error("--proxy-duration must be at least 1 (wrk counts whole seconds)")
    args.proxy = Options(
        directions=_proc.picked(parser, args.proxy_directions, DIRECTIONS, "directions"),
        setups=_proc.picked(parser, args.proxy_setups, SETUP_NAMES, "setups"),
        rounds=_proc.count(parser, args.rounds, 2 if quick else 5, "--rounds"),
        duration=duration,
        warmup=0.0 if quick else 2.0,  # (quick: the checked calls before timing are the warm-up)
        concurrency=concurrency,
        counts=counts,
        start_timeout=args.proxy_start_timeout,
        stall_timeout=args.proxy_stall_timeout,
        quick=quick,
    )
    return args


def lines(args: argparse.Namespace, results: Results) -> list[str]:
    return proxy_report.lines(args.proxy, results)


def print_report(args: argparse.Namespace, results: Results) -> int:
    print("\n".join(lines(args, results)))
    return 1 if failures(results) else 0


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds: every process started is stopped on the way out


def main(argv: Sequence[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _stop)
    return _proc.standalone(
        "proxy.py",
        __doc__,
        add_options,
        check_options,
        run,
        print_report,
        (BenchError, stdio.BenchError, peers.PeerError, OSError),
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
