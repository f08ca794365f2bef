"""The report of ``bench/proxy.py``: per direction, the figures of every setup, each proxy against
the server reached directly, and ``mcpbind proxy`` against each of the two others (Markdown)."""

from __future__ import annotations

import math
import platform
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from bench import _proc
from bench._proc import fmt_num, fmt_range, fmt_ratio, med, ratio
from bench.proxy_parts import LABELS, PROXIES

if TYPE_CHECKING:
    from bench.proxy import Options, Results, Samples

JSON = "application/json"


def table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    return out + ["| " + " | ".join(row) + " |" for row in rows]


def _label(name: str, s: Samples) -> str:
    return LABELS[name] + (" (FAILED: see the notes)" if s.failure is not None else "")


def _cpu(per_call: dict[int, list[float]], c: int) -> float:
    return med(per_call.get(c, []))


def _total_cpu(s: Samples, c: int) -> float:
    behind = _cpu(s.behind_cpu_us, c)
    return _cpu(s.front_cpu_us, c) + (0.0 if math.isnan(behind) else behind)


def header(opts: Options, results: Results, commit: str) -> str:
    versions = "; ".join(f"{k} {v}" for k, v in results.versions.items())
    counts = opts.counts
    warmup = f"{opts.warmup:g} s of warm-up at 16 connections, then " if opts.warmup > 0 else "no warm-up, "
    stdio_phases = ", ".join(
        [f"{counts.sequential:,} sequential calls"]
        + [f"{n:,} at {w} in flight" for w, n in counts.at.items()]
    )
    return (
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit}; {_proc.machine_line()}, nothing "
        f"pinned: the client, the proxy and the server share the CPUs; CPython {platform.python_version()}, "
        f"mcpbind from this checkout (msgspec {_proc.version_of('msgspec')}, anyio {_proc.version_of('anyio')}); "
        f"{versions}; {results.wrk or 'no wrk'}. {opts.rounds} rounds; HTTP: {warmup}"
        f"{opts.duration:g} s at each of {', '.join(map(str, opts.concurrency))} connections "
        f"(one session, one wrk thread); stdio: {counts.warmup:,} calls of warm-up at 16 in flight, then "
        f"{stdio_phases}."
    )


def _figures(found: dict[str, Samples], concurrency: Sequence[int], http: bool) -> list[str]:
    top = max(concurrency)
    head = ["setup"] + (["answers"] if http else [])
    head += ["seq p50 µs", "seq p99 µs", *(f"calls/s at {c}" for c in concurrency)]
    head += [f"proxy CPU µs/call at {top}", f"server CPU µs/call at {top}"]
    rows = []
    for name, s in found.items():
        row = [_label(name, s)] + ([s.answers or "n/a"] if http else [])
        row += [fmt_range(s.p50_us, 1), fmt_range(s.p99_us, 1)]
        row += [fmt_range(s.rate.get(c, []), 1) for c in concurrency]
        front = fmt_range(s.front_cpu_us.get(top, []), 1)
        behind = fmt_range(s.behind_cpu_us.get(top, []), 1)
        if name.startswith("direct"):  # the server is the front process
            front, behind = "-", front
        row += [front, behind]
        rows.append(row)
    return table(head, rows)


def _baseline(found: dict[str, Samples], s: Samples) -> str | None:
    """The direct setup a proxy is compared with: the one answering as it does (HTTP: JSON or SSE)."""
    if "direct" in found:
        return "direct"
    wanted = "direct-json" if s.answers in ("", JSON) else "direct-sse"
    if wanted in found:
        return wanted
    return next((n for n in found if n.startswith("direct")), None)


def _against_direct(found: dict[str, Samples], concurrency: Sequence[int]) -> list[str]:
    top = max(concurrency)
    head = [
        "proxy",
        "against",
        "added p50 µs",
        "p50 / direct",
        *(f"calls/s at {c} / direct" for c in concurrency),
    ]
    head += [f"CPU per call at {top} / direct (all processes)"]
    rows = []
    for name in PROXIES:
        s = found.get(name)
        base_name = _baseline(found, s) if s is not None else None
        if s is None or base_name is None:
            continue
        base = found[base_name]
        p50, p50_base = med(s.p50_us), med(base.p50_us)
        row = [
            _label(name, s),
            LABELS[base_name],
            fmt_num(p50 - p50_base, 1),
            fmt_ratio(ratio(p50, p50_base)),
        ]
        row += [fmt_ratio(ratio(med(s.rate.get(c, [])), med(base.rate.get(c, [])))) for c in concurrency]
        row += [fmt_ratio(ratio(_total_cpu(s, top), _total_cpu(base, top)))]
        rows.append(row)
    return table(head, rows) if rows else []


def _mcpbind_against_peers(found: dict[str, Samples], concurrency: Sequence[int]) -> list[str]:
    ours = found.get("mcpbind")
    if ours is None or ours.failure is not None:
        return []
    top = max(concurrency)
    base_name = _baseline(found, ours)
    base_p50 = med(found[base_name].p50_us) if base_name is not None else math.nan
    head = ["mcpbind proxy /", "p50", "added p50", *(f"calls/s at {c}" for c in concurrency)]
    head += [f"proxy CPU per call at {top}, theirs / ours"]
    rows = []
    for name in PROXIES[1:]:
        theirs = found.get(name)
        if theirs is None or theirs.failure is not None:
            continue
        added = ratio(med(ours.p50_us) - base_p50, med(theirs.p50_us) - base_p50)
        row = [LABELS[name], fmt_ratio(ratio(med(ours.p50_us), med(theirs.p50_us))), fmt_ratio(added)]
        row += [fmt_ratio(ratio(med(ours.rate.get(c, [])), med(theirs.rate.get(c, [])))) for c in concurrency]
        row += [fmt_ratio(ratio(_cpu(theirs.front_cpu_us, top), _cpu(ours.front_cpu_us, top)))]
        rows.append(row)
    return table(head, rows) if rows else []


def section(
    title: str, intro: str, found: dict[str, Samples], direction: str, opts: Options, results: Results
) -> list[str]:
    if not found and not results.skipped:
        return []
    http = direction == "http"
    out = [f"### {title}", "", intro, ""]
    commands = [
        (LABELS[n], f"`{results.commands[(direction, n)]}`")
        for n in found
        if (direction, n) in results.commands
    ]
    out += table(["setup", "command"], commands) + [""]
    out += _figures(found, opts.concurrency, http)
    against = _against_direct(found, opts.concurrency)
    if against:
        out += [
            "",
            "Each proxy against the server reached directly"
            + (" (the direct row that answers in the same format)" if http else "")
            + ": added p50 in µs, then ratios proxy / direct (latency above 1x and calls/s below 1x: "
            "what the proxy costs).",
            "",
            *against,
        ]
    ours = _mcpbind_against_peers(found, opts.concurrency)
    if ours:
        out += [
            "",
            "mcpbind proxy against each other proxy: ours / theirs for latency (below 1x is better) and "
            "calls/s (above 1x is better); CPU per call of the proxy process, theirs / ours (above 1x: "
            "mcpbind spends less).",
            "",
            *ours,
        ]
    for name, why in results.skipped.items():
        out += ["", f"{LABELS[name]}: skipped: {why}."]
    return out


def lines(opts: Options, results: Results, commit: str | None = None) -> list[str]:
    from bench import streamable_http

    out = [header(opts, results, commit or streamable_http.commit()), ""]
    out += section(
        "A stdio server exposed over Streamable HTTP",
        "wrk with `bench/streamable_http.py`'s Lua script (2025-11-25 `tools/call` of echo, every "
        "answer checked) in one session opened by httpx; seq p50/p99: wrk's latency at 1 connection. "
        "Proxy CPU: the proxy process; server CPU: the echo server behind it (the server itself for "
        "the direct rows). Medians over the rounds (min-max).",
        results.http,
        "http",
        opts,
        results,
    )
    if results.http and results.stdio:
        out.append("")
    out += section(
        "A Streamable HTTP server exposed as a local stdio server",
        "`bench/stdio.py`'s load generator on the proxy's stdin and stdout (2025-11-25 handshake, "
        "`tools/call` of echo, every answer checked); the proxies talk to the echo server served by "
        "`mcpbind serve --transport http --json-response`. Proxy CPU: the proxy process; server "
        "CPU: the HTTP server behind it (for the direct row, the stdio server itself). Medians over "
        "the rounds (min-max).",
        results.stdio,
        "stdio",
        opts,
        results,
    )
    notes = [
        f"- {direction} {name}: {n}"
        for direction, found in (("http", results.http), ("stdio", results.stdio))
        for name, s in found.items()
        for n in [*dict.fromkeys(s.notes), *([f"FAILED in {s.failure}"] if s.failure else [])]
    ]
    if notes:
        out += ["", "Notes:", *notes]
    return out
