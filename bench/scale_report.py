"""The tables of ``bench/scale.py``: calls/s through nginx with the CPU each process spent per
call, 2 workers against 1, the latency the Redis store adds, and Redis memory per session and
per task. Medians over the rounds (min-max range in brackets); ratios of medians, ours / theirs
for calls/s (above 1x: more calls)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from bench._proc import fmt_num, fmt_range, fmt_ratio, med, ratio

if TYPE_CHECKING:
    from bench.scale import Phase, Results, Setup

__all__ = ["report_lines"]


def _ms(values_us: Sequence[float]) -> str:
    return fmt_num(med(values_us) / 1000)


def _rate(phases: Sequence[Phase]) -> float:
    return med([p.rate for p in phases])


def load_table(results: Results, c: int, setups: Sequence[Setup], modes: Mapping[str, str]) -> list[str]:
    lines = [
        f"#### {c} connections, through nginx",
        "",
        "| server | requests | calls/s | p50 ms | p99 ms | server CPU µs/call | nginx µs/call "
        "| Redis µs/call | Redis commands/call | vs official | vs FastMCP | others' CPU % |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for setup in setups:
        for mode in setup.modes:
            phases = results.load.get((setup.key, mode, c))
            if not phases:
                continue
            official = results.load.get(("official", mode, c), [])
            fastmcp = results.load.get(("fastmcp", mode, c), [])
            vs_official = ratio(_rate(phases), _rate(official)) if official else math.nan
            vs_fastmcp = ratio(_rate(phases), _rate(fastmcp)) if fastmcp else math.nan
            lines.append(
                f"| {setup.label} | {modes[mode]} | {fmt_range([p.rate for p in phases], 1)} "
                f"| {_ms([p.p50_us for p in phases])} | {_ms([p.p99_us for p in phases])} "
                f"| {fmt_num(med([p.server_cpu_us for p in phases]), 1)} "
                f"| {fmt_num(med([p.nginx_cpu_us for p in phases]), 1)} "
                f"| {fmt_num(med([p.redis_cpu_us for p in phases]), 1)} "
                f"| {fmt_num(med([p.redis_commands for p in phases]), 2)} "
                f"| {fmt_ratio(vs_official)} | {fmt_ratio(vs_fastmcp)} "
                f"| {fmt_range([p.others_pct for p in phases], 1)} |"
            )
    return lines


def workers_table(results: Results, concurrency: Sequence[int], modes: Mapping[str, str]) -> list[str]:
    lines = [
        "| requests | connections | 1 worker calls/s | 2 workers calls/s | 2 vs 1 "
        "| 1 worker, in-memory store | Redis store vs in-memory, 1 worker |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for mode in modes:
        for c in concurrency:
            one = results.load.get(("mcpbind-1", mode, c), [])
            two = results.load.get(("mcpbind-2", mode, c), [])
            memory = results.load.get(("mcpbind-1-memory", mode, c), [])
            if not (one or two):
                continue
            lines.append(
                f"| {modes[mode]} | {c} | {fmt_num(_rate(one), 1)} | {fmt_num(_rate(two), 1)} "
                f"| {fmt_ratio(ratio(_rate(two), _rate(one)))} | {fmt_num(_rate(memory), 1)} "
                f"| {fmt_ratio(ratio(_rate(one), _rate(memory)))} |"
            )
    return lines


def latency_table(results: Results, modes: Mapping[str, str]) -> list[str]:
    lines = [
        "| requests | in-memory p50 µs | Redis p50 µs | added p50 µs | in-memory p99 µs | Redis p99 µs "
        "| added p99 µs | Redis commands/call | others' CPU % (in-memory; Redis) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for mode in modes:
        memory = results.latency.get(("mcpbind-1-memory", mode), [])
        redis = results.latency.get(("mcpbind-1", mode), [])
        if not (memory and redis):
            continue
        m50, r50 = med([p.p50_us for p in memory]), med([p.p50_us for p in redis])
        m99, r99 = med([p.p99_us for p in memory]), med([p.p99_us for p in redis])
        lines.append(
            f"| {modes[mode]} | {fmt_range([p.p50_us for p in memory], 1)} | {fmt_range([p.p50_us for p in redis], 1)} "
            f"| {r50 - m50:.0f} | {fmt_num(m99, 1)} | {fmt_num(r99, 1)} | {r99 - m99:.0f} "
            f"| {fmt_num(med([p.redis_commands for p in redis]), 2)} "
            f"| {fmt_num(med([p.others_pct for p in memory]), 1)}; {fmt_num(med([p.others_pct for p in redis]), 1)} |"
        )
    return lines if len(lines) > 2 else []


def memory_table(results: Results) -> list[str]:
    lines = [
        "| what | made | used_memory growth | bytes each (used_memory) | keys each "
        "| bytes each (MEMORY USAGE of the keys added) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for m in results.memory:
        lines.append(
            f"| {m.what} | {m.count:,} | {m.used_memory:,} | {m.used_memory / m.count:,.0f} "
            f"| {m.keys / m.count:.2f} | {m.key_bytes / m.count:,.0f} |"
        )
    if any(m.what.startswith("2026-07-28 task") and m.keys == 0 for m in results.memory):
        lines += [
            "",
            "The tasks added no key to Redis: this server keeps its tasks in its own memory (the "
            "task store is not in Redis in this build), so the task row measures nothing of Redis "
            "(its used_memory growth is noise: connection buffers and allocator slack).",
        ]
    return lines


def report_lines(
    results: Results, concurrency: Sequence[int], setups: Sequence[Setup], modes: Mapping[str, str]
) -> list[str]:
    lines = [
        "### calls/s through nginx",
        "",
        "`tools/call` of `echo` in one 2025-11-25 session, or as 2026-07-28 requests; JSON "
        "responses. CPU per call: the server's processes (the supervisor and its workers), nginx, "
        "redis-server. vs official / vs FastMCP: calls/s over theirs, the same requests, 1 worker "
        "(one uvicorn process) behind the same nginx. Others' CPU: what the rest of the machine "
        "used meanwhile (its busy time less the server's, nginx's, Redis's and wrk's), in % of one "
        "CPU: the numbers hold only where it is low.",
        "",
    ]
    for c in concurrency:
        lines += [*load_table(results, c, setups, modes), ""]
    lines += [
        "### 2 workers against 1 (mcpbind, Redis store)",
        "",
        *workers_table(results, concurrency, modes),
    ]
    latency = latency_table(results, modes)
    if latency:
        lines += [
            "",
            "### Latency added by the Redis store",
            "",
            "The same mcpbind server, 1 worker, called directly (no nginx) one call at a time by wrk on "
            "one connection.",
            "",
            *latency,
        ]
    if results.memory:
        lines += [
            "",
            "### Redis memory per session and per task",
            "",
            "`INFO memory` `used_memory` and the number of keys, before and after making them (none "
            "deleted); each session made one call.",
            "",
            *memory_table(results),
        ]
    if results.notes:
        lines += ["", "Notes:", *(f"- {note}" for note in dict.fromkeys(results.notes))]
    return lines
