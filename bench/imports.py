"""Import time: a fresh interpreter running ``-c "import X"``, for each SDK in its own environment.

Rows (``--modules`` picks some): the bare interpreter of each environment (``-c pass``), msgspec
(what the raw floors import), ``mcpbind.server.server`` and ``mcpbind.client.client`` (this checkout),
``mcp.server``, ``mcp.server.mcpserver`` and ``mcp.client`` (the official SDK, its venv), and
``fastmcp`` (its venv). Each run is timed from spawn to exit (wall clock); the rows interleave
so a slow moment of the machine is shared, after one untimed run each (which writes the bytecode
caches). "net" is the median less the median of the bare interpreter of the same environment:
what the import itself costs.

    PYTHONPATH=runtime:generated python bench/imports.py [--quick] [--runs N]
"""

from __future__ import annotations

import argparse
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
from bench._proc import count, fmt_num, fmt_range, fmt_ratio, med, picked, ratio, standalone  # noqa: E402
from bench.stdio import BenchError, server_env  # noqa: E402


@dataclass(frozen=True)
class ImportSpec:
    key: str
    module: str | None  # None: the bare interpreter
    peer: str | None  # the venv; None: this interpreter with this checkout

    @property
    def label(self) -> str:
        where = "this checkout" if self.peer is None else f"{self.peer} venv"
        what = f"import {self.module}" if self.module else "bare interpreter (-c pass)"
        return f"{what} ({where})"


SPECS: dict[str, ImportSpec] = {
    spec.key: spec
    for spec in (
        ImportSpec("bare", None, None),
        ImportSpec("msgspec", "msgspec", None),
        ImportSpec("mcpbind.server.server", "mcpbind.server.server", None),
        ImportSpec("mcpbind.client.client", "mcpbind.client.client", None),
        ImportSpec("official-bare", None, "official"),
        ImportSpec("mcp.server", "mcp.server", "official"),
        ImportSpec("mcp.server.mcpserver", "mcp.server.mcpserver", "official"),
        ImportSpec("mcp.client", "mcp.client", "official"),
        ImportSpec("fastmcp-bare", None, "fastmcp"),
        ImportSpec("fastmcp", "fastmcp", "fastmcp"),
    )
}


@dataclass
class Samples:
    ms: list[float] = field(default_factory=list)


def command_of(spec: ImportSpec) -> tuple[list[str], dict[str, str]]:
    if spec.peer is None:
        python, env = sys.executable, server_env()
    else:
        python, env = str(peers.ensure(spec.peer)), peers.peer_env()
    return [python, "-c", f"import {spec.module}" if spec.module else "pass"], env


def time_once(spec: ImportSpec) -> float:
    command, env = command_of(spec)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    took = time.perf_counter() - started
    if done.returncode != 0 or done.stderr.strip():
        raise BenchError(f"{' '.join(command)}: exit {done.returncode}: {done.stderr.strip()[-2000:]}")
    return took * 1e3


def bare_key(spec: ImportSpec) -> str:
    return "bare" if spec.peer is None else f"{spec.peer}-bare"


def run(args: argparse.Namespace) -> dict[str, Samples]:
    keys: list[str] = args.import_keys
    # Each module's environment's bare interpreter is measured too, for its "net" figure.
    keys = list(dict.fromkeys([*keys, *(bare_key(SPECS[k]) for k in keys)]))
    results = {key: Samples() for key in keys}
    for key in keys:
        time_once(SPECS[key])  # writes the bytecode caches; not timed
    for _ in range(args.import_runs):
        for key in keys:
            results[key].ms.append(time_once(SPECS[key]))
    return results


def report_lines(results: dict[str, Samples]) -> list[str]:
    official = results.get("mcp.server")
    head = ["import", "fresh interpreter ms", "net of the bare interpreter ms"]
    if official is not None:
        head += ["net vs import mcp.server"]
    out = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    official_net = net(results, "mcp.server") if official is not None else float("nan")
    for key, s in results.items():
        spec = SPECS[key]
        row = [spec.label, fmt_range(s.ms)]
        if spec.module is None:
            row += ["-"]
            row += ["-"] if official is not None else []
        else:
            row += [fmt_num(net(results, key))]
            row += [fmt_ratio(ratio(net(results, key), official_net))] if official is not None else []
        out.append("| " + " | ".join(row) + " |")
    return out


def net(results: dict[str, Samples], key: str) -> float:
    bare = results.get(bare_key(SPECS[key]))
    if bare is None:
        return float("nan")
    return med(results[key].ms) - med(bare.ms)


def add_options(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    if not prefix:
        parser.add_argument("--quick", action="store_true", help="5 runs of each")
    parser.add_argument(
        f"--{prefix}runs",
        dest="runs",
        type=int,
        help="timed runs of each import (default 21; 5 with --quick)",
    )
    parser.add_argument(
        f"--{prefix}modules",
        dest="modules",
        default=",".join(k for k in SPECS if SPECS[k].module is not None),
        help=f"comma-separated, from: {', '.join(SPECS)} (each environment's bare interpreter is added)",
    )


def check_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    args.import_keys = picked(parser, args.modules, list(SPECS), "imports")
    args.import_runs = count(parser, args.runs, 5 if args.quick else 21, "--runs")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    errors = (BenchError, peers.PeerError)
    return standalone("imports.py", __doc__, add_options, check_options, run, print_report, errors, argv)


def print_report(args: argparse.Namespace, results: dict[str, Samples]) -> int:
    print(f"median of {args.import_runs} runs (min-max), wall time from spawn to exit")
    print()
    print("\n".join(report_lines(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
