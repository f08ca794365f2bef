"""Embedded HTTP servers for mcpbind's ASGI app: the same app under each, side by side.

    python bench/http_servers.py [--quick] [--rounds N] [--duration S] [--servers a,b,...]

The app is ``examples/echo_server.py``'s ``build()`` served by ``StreamableHTTPApp`` at ``/mcp``
with JSON responses (``bench/streamable_http_servers.py``'s ``mcpbind_app("json")``), in a
process of its own per server, on 127.0.0.1 (``--serve NAME --port P`` runs that process).
Servers (``--servers`` picks some, in this order by default):

* ``uvicorn-httptools-uvloop``: uvicorn with its C parser (httptools) on uvloop, the baseline
  every ratio is taken against;
* ``mcpbind-serve``: what ``mcpbind serve --transport http --json-response`` runs on asyncio
  (``serve_http``: uvicorn with mcpbind's request-head timer, the loop of ``--loop auto``);
* ``uvicorn-h11-asyncio``: uvicorn with h11 on asyncio's own loop (``pip install uvicorn`` alone);
* ``hypercorn-asyncio``, ``hypercorn-uvloop``: hypercorn (h11) on asyncio's loop, on uvloop;
* ``hypercorn-trio``: hypercorn on trio (what ``serve_http`` runs on trio);
* ``granian``: Granian's embedded server (``granian.server.embed.Server``, ASGI interface, one
  worker, its Rust runtime on one thread) on uvloop.

Each round starts every server in turn (their order rotated each round), opens one session
(``initialize``, ``notifications/initialized``), makes one echo call, reads the idle RSS
(``VmRSS``), warms up with wrk for 1 s, then loads it with wrk at 16 connections for
``--duration`` seconds, every request a ``tools/call`` echo in that session, checked by
``bench/streamable_http.py``'s Lua script. Reported: calls/s, p50 and p99 latency, the server
process's CPU time per request (all its threads), the idle RSS, each the median over the
rounds, and as ratios to the baseline. Needs wrk.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: bench.* is imported from the repository root
    sys.path.insert(0, str(ROOT))

from bench import _proc  # noqa: E402
from bench._proc import fmt_num, fmt_ratio, med, ratio, version_of  # noqa: E402
from bench.streamable_http import (  # noqa: E402
    BenchError,
    McpHttpClient,
    ensure_wrk,
    free_port,
    lua_script,
    run_wrk,
    wrk_version,
)
from bench.streamable_http_servers import PATH, ASGIApp, mcpbind_app  # noqa: E402
from bench.streamable_http_servers import serve as serve_uvicorn  # noqa: E402

SERVERS = {
    "uvicorn-httptools-uvloop": "uvicorn, httptools, uvloop",
    "mcpbind-serve": "mcpbind serve (serve_http: uvicorn + head timer, --loop auto)",
    "uvicorn-h11-asyncio": "uvicorn, h11, asyncio loop",
    "hypercorn-asyncio": "hypercorn, asyncio loop",
    "hypercorn-uvloop": "hypercorn, uvloop",
    "hypercorn-trio": "hypercorn, trio",
    "granian": "Granian (embedded), uvloop",
}
BASELINE = "uvicorn-httptools-uvloop"
CONNECTIONS = 16


# -- the server side (one process per server) ------------------------------------------------------


def serve(name: str, port: int) -> None:
    """Serve the echo app under server ``name`` on 127.0.0.1:``port`` until killed."""
    app = mcpbind_app("json")
    if name.startswith("uvicorn-"):
        http, loop = ("httptools", "uvloop") if name == BASELINE else ("h11", "asyncio")
        serve_uvicorn(app, port, http, loop)  # as every server of bench/streamable_http.py runs
    elif name == "mcpbind-serve":
        _serve_mcpbind(port)
    elif name.startswith("hypercorn-"):
        _serve_hypercorn(app, port, name.removeprefix("hypercorn-"))
    elif name == "granian":
        _serve_granian(app, port)
    else:
        raise SystemExit(f"unknown server {name!r}")


def _serve_mcpbind(port: int) -> None:
    from examples.echo_server import build
    from mcpbind import event_loop
    from mcpbind.transports.http.server import serve_http

    async def main() -> None:
        await serve_http(build(), "127.0.0.1", port, path=PATH, json_response=True)

    event_loop.run(main, backend="asyncio", loop="auto")


def _serve_hypercorn(app: ASGIApp, port: int, loop: str) -> None:
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.loglevel = "WARNING"
    if loop == "trio":
        import trio
        from hypercorn.trio import serve as trio_serve

        trio.run(trio_serve, cast(Any, app), config)
        return
    from hypercorn.asyncio import serve as asyncio_serve

    _run_on(asyncio_serve(app, config), uvloop=loop == "uvloop")  # type: ignore[arg-type]  # (ASGI 3)


def _serve_granian(app: ASGIApp, port: int) -> None:
    from granian.constants import Interfaces
    from granian.log import LogLevels
    from granian.server.embed import Server

    server = Server(
        app, address="127.0.0.1", port=port, interface=Interfaces.ASGI, log_level=LogLevels.warning
    )
    _run_on(server.serve(), uvloop=True)


def _run_on(main: Coroutine[Any, Any, None], *, uvloop: bool) -> None:
    """Run ``main`` to its end on a new asyncio loop: uvloop's or asyncio's own."""
    loop: asyncio.AbstractEventLoop
    if uvloop:
        import uvloop as uv

        loop = uv.new_event_loop()
    else:
        loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(main)
    finally:
        loop.close()


# -- the load side ---------------------------------------------------------------------------------


@dataclass
class Samples:
    rate: list[float] = field(default_factory=list)
    p50_us: list[float] = field(default_factory=list)
    p99_us: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)
    rss_kib: list[float] = field(default_factory=list)
    failure: str | None = None


class ServerProcess(_proc.LoggedProcess):
    """One server process (this script with ``--serve``); stopped and reaped by :meth:`close`."""

    def __init__(self, name: str, start_timeout: float) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}{PATH}"
        command = [sys.executable, str(Path(__file__).resolve()), "--serve", name, "--port", str(self.port)]
        self.start(command, env=_proc.server_env(), start_timeout=start_timeout)

    def wait_ready(self, timeout: float) -> None:
        self.wait_listening(
            self.port, timeout, lambda what: BenchError(f"{self.name}: {what}\n{self.text()}")
        )

    def close(self) -> str:
        try:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            _proc.reap(self.proc)
            self.output.close()
        return ""


@contextlib.contextmanager
def serving(name: str, start_timeout: float) -> Iterator[ServerProcess]:
    server = ServerProcess(name, start_timeout)
    try:
        yield server
    finally:
        server.close()


def one_round(name: str, args: argparse.Namespace, wrk: str, samples: Samples) -> str:
    with serving(name, args.start_timeout) as server, httpx.Client(timeout=10) as client:
        mcp = McpHttpClient(client, server.url, name)
        mcp.open()
        mcp.echo("hello from wrk")
        time.sleep(args.settle)
        rss = _proc.proc_status_kib(server.pid, "VmRSS")
        with tempfile.TemporaryDirectory() as tmp:
            script = Path(tmp) / "call.lua"
            script.write_text(lua_script(mcp.session_id))
            run_wrk(wrk, server.url, script, CONNECTIONS, args.warmup, 1, f"{name} warm-up")
            cpu_before = _proc.cpu_seconds(server.pid)
            result = run_wrk(wrk, server.url, script, CONNECTIONS, args.duration, 1, f"{name} at c=16")
            cpu = _proc.cpu_seconds(server.pid) - cpu_before
    samples.rate.append(result.rate)
    samples.p50_us.append(result.p50_us)
    samples.p99_us.append(result.p99_us)
    samples.cpu_us.append(cpu / result.calls * 1e6)
    samples.rss_kib.append(rss)
    return (
        f"{result.rate:,.0f}/s, p50 {result.p50_us / 1000:.2f} ms, CPU {cpu / result.calls * 1e6:.0f} µs/req"
    )


def run(args: argparse.Namespace) -> dict[str, Samples]:
    wrk = ensure_wrk()
    args.wrk_version = wrk_version(wrk)
    args.load_before = _load()
    results = {name: Samples() for name in args.servers}
    for r, name, samples in _proc.rounds_of(results, args.rounds):
        try:
            summary = one_round(name, args, wrk, samples)
        except BenchError as exc:
            samples.failure = str(exc).splitlines()[0]
            print(f"round {r + 1}/{args.rounds} {name}: FAILED {samples.failure}", file=sys.stderr)
            continue
        print(f"round {r + 1}/{args.rounds} {name}: {summary}", file=sys.stderr)
    args.load_after = _load()
    return results


def _load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def report(args: argparse.Namespace, results: dict[str, Samples]) -> int:
    base = results.get(BASELINE)
    out = [
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {_proc.machine_line()}; CPython "
        f"{sys.version.split()[0]}; uvicorn {version_of('uvicorn')}, httptools {version_of('httptools')}, "
        f"uvloop {version_of('uvloop')}, hypercorn {version_of('hypercorn')}, trio {version_of('trio')}, "
        f"granian {version_of('granian')}; wrk {args.wrk_version} -t1 -c{CONNECTIONS}, "
        f"{args.duration:g} s per run, {args.rounds} round(s), no CPU pinning; load average "
        f"{args.load_before} before, {args.load_after} after",
        "",
        "| server | calls/s | vs base | p50 ms | p99 ms | server CPU µs/req | vs base | idle RSS MiB | vs base |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, s in results.items():
        if s.failure is not None:
            out.append(f"| {SERVERS[name]} | failed: {s.failure} | | | | | | | |")
            continue
        rate, cpu, rss = med(s.rate), med(s.cpu_us), med(s.rss_kib) / 1024
        base_rate = med(base.rate) if base else float("nan")
        base_cpu = med(base.cpu_us) if base else float("nan")
        base_rss = med(base.rss_kib) / 1024 if base else float("nan")
        out.append(
            f"| {SERVERS[name]} | {fmt_num(rate)} | {fmt_ratio(ratio(rate, base_rate))} | "
            f"{fmt_num(med(s.p50_us) / 1000)} | {fmt_num(med(s.p99_us) / 1000)} | {fmt_num(cpu)} | "
            f"{fmt_ratio(ratio(cpu, base_cpu))} | {fmt_num(rss)} | {fmt_ratio(ratio(rss, base_rss))} |"
        )
    print("\n".join(out))
    return 1 if any(s.failure for s in results.values()) else 0


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="1 round of 3 s per server")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 3; --quick 1)")
    parser.add_argument(
        "--duration", type=float, default=None, help="seconds per wrk run (default 8; --quick 3)"
    )
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of wrk warm-up (default 1)")
    parser.add_argument("--settle", type=float, default=0.5, help="seconds to wait before reading RSS")
    parser.add_argument(
        "--start-timeout", type=float, default=30.0, help="seconds a server may take to listen"
    )
    parser.add_argument("--servers", default=",".join(SERVERS), help="comma-separated servers (default all)")
    parser.add_argument("--serve", choices=list(SERVERS), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)


def check_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    args.servers = _proc.picked(parser, args.servers, list(SERVERS), "server")
    args.rounds = _proc.count(parser, args.rounds, 1 if args.quick else 3, "--rounds")
    args.duration = args.duration if args.duration is not None else (3.0 if args.quick else 8.0)
    if args.duration < 1:
        parser.error("--duration must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--serve" in argv:
        parser = argparse.ArgumentParser()
        add_options(parser)
        args = parser.parse_args(argv)
        serve(args.serve, args.port)
        return 0
    return _proc.standalone(
        "http_servers.py", __doc__, add_options, check_options, run, report, (BenchError,), argv
    )


if __name__ == "__main__":
    sys.exit(main())
