"""The suite's report (``python -m bench``): each scenario's section, issue 18's targets collected from
them (bench/targets.py), the Markdown report, and the README table and chart made from the run's
numbers (bench/readme_table.py, bench/chart.py), with where each goes."""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bench import clients, peers, readme_table, stdio, targets
from bench._proc import version_of
from bench.targets import Target

ROOT = Path(__file__).resolve().parent.parent
MAIN_PACKAGES = ("msgspec", "anyio", "trio", "httpx", "uvicorn", "httptools", "orjson", "mcp-types", "mcp")


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@dataclass
class Section:
    """One scenario's part of the report."""

    name: str
    title: str
    lines: list[str] = field(default_factory=list)
    servers: dict[str, stdio.Samples] | None = None  # a stdio scenario's results
    client_runs: dict[str, clients.Samples] | None = None  # the client scenario's, on --cpus's placement
    clients_pinned: dict[str, clients.Samples] | None = None  # and pinned (split), when that differs
    http: list[Target] = field(default_factory=list)  # bench/streamable_http.py's goal rows
    failed: str | None = None
    seconds: float = 0.0
    load: tuple[float, float] = (math.nan, math.nan)  # 1-minute load average before and after


def software_line() -> str:
    main = ", ".join(f"{p} {version_of(p)}" for p in MAIN_PACKAGES if version_of(p) != "not installed")
    venvs = "; ".join(peers.describe().splitlines()) or "no peer venvs made"
    return (
        f"CPython {platform.python_version()} ({sys.executable}); mcpbind from this checkout; "
        f"in this environment: {main}; {venvs}"
    )


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def section_of(sections: Sequence[Section], name: str) -> Section | None:
    return next((s for s in sections if s.name == name), None)


def collect_targets(sections: Sequence[Section]) -> list[Target]:
    """Issue 18's targets from the run's sections (stdio and stdio-pinned, client, http)."""
    found: list[Target] = []
    free, pinned = section_of(sections, "stdio"), section_of(sections, "stdio-pinned")
    if free is not None and free.servers is not None:
        found += targets.stdio_targets(free.servers, pinned.servers if pinned is not None else None)
    client = section_of(sections, "client")
    if client is not None and client.client_runs is not None:
        found += targets.client_targets(client.client_runs, client.clients_pinned)
    http = section_of(sections, "http")
    if http is not None:
        found += http.http
    return found


def make_summary(
    sections: Sequence[Section], args: argparse.Namespace, started: datetime, commit: str
) -> readme_table.Summary:
    """The README table's numbers: the unpinned stdio and client runs and the HTTP goal ratios."""
    rows: list[readme_table.Row] = []
    free, client, http = (section_of(sections, n) for n in ("stdio", "client", "http"))
    if free is not None and free.servers is not None:
        rows += readme_table.stdio_rows(free.servers)
    if client is not None and client.client_runs is not None:
        rows += readme_table.client_rows(client.client_runs)
    if http is not None:
        rows += readme_table.http_rows(http.http)
    placement = stdio.placement_text(args.placement) + (" (--quick)" if args.quick else "")
    return readme_table.Summary(f"{started:%Y-%m-%d %H:%M} UTC", commit, placement, rows)


def readme_table_paths(full: bool) -> tuple[Path, Path, Path]:
    """Where a run's numbers (JSON), the README table (Markdown) and the chart (PNG) go: beside
    bench/RESULTS.md for a full run, under .bench/ for any other."""
    if full:
        return ROOT / ".bench" / "summary.json", ROOT / "bench" / "SUMMARY.md", ROOT / "bench" / "results.png"
    dot = ROOT / ".bench"
    return dot / "summary-partial.json", dot / "SUMMARY-partial.md", dot / "results-partial.png"


def write_summary(summary: readme_table.Summary, full: bool, save: bool) -> None:
    """Write the table and the chart (and, when ``save``, the numbers they are made from)."""
    numbers, table, png = readme_table_paths(full)
    if save:
        numbers.parent.mkdir(parents=True, exist_ok=True)
        numbers.write_bytes(readme_table.encode(summary))
        log(f"bench: numbers written to {numbers}")
    table.parent.mkdir(parents=True, exist_ok=True)
    table.write_text("\n".join(readme_table.markdown(summary)) + "\n")
    log(f"bench: the README table written to {table}")
    if not summary.rows:
        log("bench: no chart: no scenario of the table was measured")
        return
    try:
        from bench import chart
    except ImportError as exc:  # (matplotlib: in BENCH_DEPS; a bare environment may lack it)
        log(f"bench: no chart: {exc}")
        return
    chart.write_png(summary, png)
    log(f"bench: the chart written to {png}")


def report(sections: list[Section], args: argparse.Namespace, started: datetime, commit: str) -> str:
    out = ["# Benchmark results (issue 18)", ""]
    out.append(
        f"Measured {started:%Y-%m-%d %H:%M} UTC, {sum(s.seconds for s in sections) / 60:.0f} min, at "
        f"commit {commit}."
    )
    out.append("")
    out.append(f"- Machine: nproc {os.cpu_count()}, {cpu_model()}, {platform.system()} {platform.release()}.")
    out.append(f"- Software: {software_line()}.")
    out.append(f"- Command: `{args.command}`.")
    loads = ", ".join(f"{s.name} {s.load[0]:.2f} → {s.load[1]:.2f}" for s in sections)
    out.append(
        f"- Load average (1 min) before → after each scenario: {loads}. The machine is shared: "
        "other work running alongside skews the numbers (about 0 is a quiet machine; 2 means both "
        "CPUs were busy on average)."
    )
    failed = [s for s in sections if s.failed]
    if failed:
        out.append("")
        out.append("**Failed scenarios**: " + "; ".join(f"{s.title}: {s.failed}" for s in failed))
    found = collect_targets(sections)
    if found:
        out += ["", "## Targets", ""]
        out.append(
            f"The targets of issue 18 for mcpbind, each a ratio of medians measured in this run. Judged: "
            f"the stdio and client runs on `--cpus {args.cpus}` ({stdio.placement_text(args.placement)}). "
            "Shown beside them, not judged: the same ratios pinned, the load generator (or client) on "
            "one CPU and the server on another, from a cheaper second pass (about half the rounds; "
            "stdio: no big messages, no start-ups, so `—` there), and mcpbind's plain path "
            "(`MCPBIND_FASTPATH=0`), measured in the same unpinned rounds. `official`: the official "
            "SDK's low-level server; the HTTP rows are bench/streamable_http.py's own goal rows, as it "
            "judged them (see its section)."
        )
        out.append("")
        out += targets.table_lines(found)
    for s in sections:
        out += ["", f"## {s.title}", ""]
        if s.failed:
            out.append(f"Failed: {s.failed}")
            if s.lines:
                out.append("")
        out += s.lines
    return "\n".join(out) + "\n"
