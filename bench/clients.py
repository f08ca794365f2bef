"""Client side over stdio: how many calls per second each SDK's client makes against the raw floor server.

Clients (``--clients`` picks some):

* ``raw-client``: the floor of clients, the load generator of ``bench/stdio.py`` (one
  ``selectors`` loop, pre-formatted request lines, msgspec to read the answers);
* ``mcpbind-asyncio`` / ``mcpbind-trio``: mcpbind's ``Client`` (this checkout);
* ``mcpbind-asyncio-plain`` / ``mcpbind-trio-plain``: the same with ``MCPBIND_FASTPATH=0`` (its
  plain path; reported, not judged);
* ``official``: the official SDK's ``ClientSession`` over its ``stdio_client`` (its venv);
* ``fastmcp``: FastMCP's ``Client`` over its ``StdioTransport`` (its venv).

Every client talks to the same server, ``bench/raw_floor_server.py`` (msgspec, no framework), so
what differs is the client. The SDK clients run ``bench/client_runner.py`` in their own
environment and start the server through their own stdio client; the raw client is this process.
Each measures, after a warm-up: ``--sequential`` calls one at a time and ``--pipelined`` calls with
16 in flight, every answer checked (the text sent comes back, each call its own text); calls/s
is calls over wall time, and the client's CPU µs per call is its own process's CPU time (all
threads, the server's not counted). Each round starts every client afresh, in an order that
rotates; tables give medians over the rounds with the min-max range.

Placement as in ``bench/stdio.py``: ``--cpus split`` (default) puts the client on one CPU and the
server on the other, ``shared`` both on one, ``free`` leaves it to the scheduler.

    PYTHONPATH=runtime:generated python bench/clients.py [--quick] [--rounds N] [--clients a,b]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import peers  # noqa: E402  (the repository root must be on sys.path first)
from bench._proc import count, fmt_range, fmt_ratio, med, picked, ratio, rounds_of, standalone  # noqa: E402
from bench.stdio import (  # noqa: E402
    FASTPATH_SWITCH,
    SERVERS,
    BenchError,
    Placement,
    ServerProcess,
    placement_text,
    server_env,
)


@dataclass(frozen=True)
class ClientSpec:
    name: str
    label: str
    peer: str | None  # the venv it runs in; None: this interpreter and checkout
    sdk: str = ""  # bench/client_runner.py's name for it (default: ``name``)
    plain: bool = False  # mcpbind on its plain path (MCPBIND_FASTPATH=0)

    @property
    def runner(self) -> str:
        return self.sdk or self.name


CLIENTS: dict[str, ClientSpec] = {
    spec.name: spec
    for spec in (
        ClientSpec("raw-client", "raw msgspec loop (floor)", None),
        ClientSpec("mcpbind-asyncio", "mcpbind Client, asyncio", None),
        ClientSpec("mcpbind-trio", "mcpbind Client, trio", None),
        ClientSpec(
            "mcpbind-asyncio-plain", "mcpbind Client, asyncio (plain path)", None, "mcpbind-asyncio", True
        ),
        ClientSpec("mcpbind-trio-plain", "mcpbind Client, trio (plain path)", None, "mcpbind-trio", True),
        ClientSpec("official", "official SDK ClientSession", "official"),
        ClientSpec("fastmcp", "FastMCP Client", "fastmcp"),
    )
}
IN_FLIGHT = 16


@dataclass(frozen=True)
class Counts:
    warmup: int
    sequential: int
    pipelined: int


def counts_for(quick: bool) -> Counts:
    """1,000 calls of warm-up, 5,000 sequential, 20,000 at 16 in flight (/10 with --quick)."""
    return Counts(100, 500, 2000) if quick else Counts(1000, 5000, 20000)


@dataclass
class Samples:
    seq_rate: list[float] = field(default_factory=list)
    pipe_rate: list[float] = field(default_factory=list)
    seq_cpu_us: list[float] = field(default_factory=list)
    pipe_cpu_us: list[float] = field(default_factory=list)
    first_ms: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failure: str | None = None  # why the client was dropped from the run


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def raw_round(counts: Counts, placement: Placement, samples: Samples) -> None:
    """The floor client: bench/stdio.py's generator against the floor server."""
    started = time.perf_counter()
    server = ServerProcess(SERVERS["raw-floor"], 0, 10.0, placement)
    try:
        server.handshake(30.0)
        server.calls("first call", 1, 1, 60.0)
        samples.first_ms.append((time.perf_counter() - started) * 1e3)
        server.calls("warm-up", counts.warmup // 2, 1, 300.0)
        server.calls("warm-up", counts.warmup - counts.warmup // 2, IN_FLIGHT, 300.0)
        cpu = time.process_time()
        seconds = server.calls("sequential", counts.sequential, 1, 300.0)
        samples.seq_cpu_us.append((time.process_time() - cpu) / counts.sequential * 1e6)
        samples.seq_rate.append(counts.sequential / seconds)
        cpu = time.process_time()
        seconds = server.calls("pipelined", counts.pipelined, IN_FLIGHT, 300.0)
        samples.pipe_cpu_us.append((time.process_time() - cpu) / counts.pipelined * 1e6)
        samples.pipe_rate.append(counts.pipelined / seconds)
    finally:
        note = server.close()
    if note:
        samples.notes.append(note)


def sdk_round(
    spec: ClientSpec, counts: Counts, placement: Placement, timeout: float, samples: Samples
) -> None:
    """One run of bench/client_runner.py in the client's environment."""
    if spec.peer is None:
        python, env = sys.executable, server_env()
        if spec.plain:
            env[FASTPATH_SWITCH] = "0"
        else:
            env.pop(FASTPATH_SWITCH, None)
    else:
        python, env = str(peers.ensure(spec.peer)), peers.peer_env()
    server = [sys.executable, str(ROOT / "bench" / "raw_floor_server.py")]
    if placement.server is not None:
        server += ["--pin-cpu", str(min(placement.server))]
    command = [
        python,
        str(ROOT / "bench" / "client_runner.py"),
        spec.runner,
        f"--sequential={counts.sequential}",
        f"--pipelined={counts.pipelined}",
        f"--in-flight={IN_FLIGHT}",
        f"--warmup={counts.warmup}",
        "--",
        *server,
    ]
    affinity = os.sched_getaffinity(0)
    if placement.generator is not None:
        os.sched_setaffinity(0, placement.generator)  # the client inherits it; the server moves itself
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except (
        subprocess.TimeoutExpired
    ) as exc:  # subprocess.run kills the client; its SDK's server goes with its pipes
        raise BenchError(f"{spec.name}: the client did not finish within {timeout:g} s") from exc
    finally:
        os.sched_setaffinity(0, affinity)
    if done.returncode != 0:
        raise BenchError(
            f"{spec.name}: client_runner exited {done.returncode}:\n{done.stderr.strip()[-3000:]}"
        )
    try:
        result = json.loads(done.stdout.strip().splitlines()[-1])
        seq, pipe = result["sequential"], result["pipelined"]
        samples.seq_rate.append(seq["calls"] / seq["seconds"])
        samples.seq_cpu_us.append(seq["cpu_seconds"] / seq["calls"] * 1e6)
        samples.pipe_rate.append(pipe["calls"] / pipe["seconds"])
        samples.pipe_cpu_us.append(pipe["cpu_seconds"] / pipe["calls"] * 1e6)
        samples.first_ms.append(result["first_answer_seconds"] * 1e3)
    except (ValueError, KeyError, IndexError, TypeError, ZeroDivisionError) as exc:
        raise BenchError(
            f"{spec.name}: unreadable client_runner output ({exc}): {done.stdout[-1000:]!r}"
        ) from None
    if done.stderr.strip():
        samples.notes.append(f"stderr output: {done.stderr.strip()[-1000:]}")


def run(args: argparse.Namespace) -> dict[str, Samples]:
    names: list[str] = args.client_names
    counts: Counts = args.client_counts
    rounds: int = args.client_rounds
    for name in names:
        peer = CLIENTS[name].peer
        if peer is not None:
            peers.ensure(peer)
    results = {name: Samples() for name in names}
    for r, name, s in rounds_of(results, rounds):
        started = time.monotonic()
        try:
            if name == "raw-client":
                raw_round(counts, args.placement, s)
            else:
                sdk_round(CLIENTS[name], counts, args.placement, args.client_timeout, s)
        except BenchError as exc:
            # The other clients go on; this one is reported as failed.
            s.failure = f"round {r + 1}: {exc}"
            log(f"client round {r + 1}/{rounds} {name}: FAILED: {exc}")
            continue
        log(
            f"client round {r + 1}/{rounds} {name}: {s.seq_rate[-1]:,.0f}/s sequential, "
            f"{s.pipe_rate[-1]:,.0f}/s at {IN_FLIGHT} ({time.monotonic() - started:.1f} s)"
        )
    return results


def header_line(counts: Counts, rounds: int, placement: Placement) -> str:
    return (
        f"{rounds} rounds; {counts.sequential:,} sequential calls and {counts.pipelined:,} at "
        f"{IN_FLIGHT} in flight after {counts.warmup:,} of warm-up; server bench/raw_floor_server.py; "
        f"{placement_text(placement).replace('generator', 'client')}"
    )


def report_lines(results: dict[str, Samples]) -> list[str]:
    raw = results.get("raw-client")
    official = results.get("official")
    head = [
        "client",
        "sequential calls/s",
        f"calls/s at {IN_FLIGHT}",
        "client CPU µs/call sequential",
        f"client CPU µs/call at {IN_FLIGHT}",
        "start to first answer ms",
    ]
    if raw is not None:
        head += ["sequential vs raw", f"at {IN_FLIGHT} vs raw"]
    if official is not None:
        head += ["sequential vs official", f"at {IN_FLIGHT} vs official"]
    out = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for name, s in results.items():
        row = [
            CLIENTS[name].label + (" (FAILED: see the notes)" if s.failure is not None else ""),
            fmt_range(s.seq_rate),
            fmt_range(s.pipe_rate),
            fmt_range(s.seq_cpu_us),
            fmt_range(s.pipe_cpu_us),
            fmt_range(s.first_ms),
        ]
        for base in (raw, official):
            if base is not None:
                row += [
                    fmt_ratio(ratio(med(s.seq_rate), med(base.seq_rate))),
                    fmt_ratio(ratio(med(s.pipe_rate), med(base.pipe_rate))),
                ]
        out.append("| " + " | ".join(row) + " |")
    return out


def failures(results: dict[str, Samples]) -> list[str]:
    return [f"{name}: {s.failure.splitlines()[0]}" for name, s in results.items() if s.failure is not None]


def add_options(parser: argparse.ArgumentParser, standalone: bool = True) -> None:
    """This benchmark's options; ``standalone``: with --quick, --rounds and --cpus (the suite has its own)."""
    if standalone:
        parser.add_argument("--quick", action="store_true", help="small counts, 2 rounds: a smoke run")
        parser.add_argument("--rounds", type=int, help="rounds per client (default 5; 2 with --quick)")
        parser.add_argument("--cpus", choices=["split", "shared", "free"], default="split")
    parser.add_argument(
        "--clients",
        default=",".join(CLIENTS),
        help=f"client side: comma-separated, from: {', '.join(CLIENTS)} (default: all)",
    )
    parser.add_argument(
        "--client-timeout", type=float, default=600.0, help="seconds for one client run (default 600)"
    )


def check_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    args.client_names = picked(parser, args.clients, list(CLIENTS), "clients")
    args.client_counts = counts_for(args.quick)
    args.client_rounds = count(parser, args.rounds, 2 if args.quick else 5, "--rounds")
    args.placement = Placement.of(args.cpus)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    errors = (BenchError, peers.PeerError)
    return standalone("clients.py", __doc__, add_options, check_options, run, print_report, errors, argv)


def print_report(args: argparse.Namespace, results: dict[str, Samples]) -> int:
    print()
    print(header_line(args.client_counts, args.client_rounds, args.placement))
    print()
    print("\n".join(report_lines(results)))
    for name, s in results.items():
        for note in dict.fromkeys(s.notes):
            print(f"- {name}: {note}")
        if s.failure is not None:
            print(f"- {name}: FAILED in {s.failure}")
    return 1 if failures(results) else 0


if __name__ == "__main__":
    sys.exit(main())
