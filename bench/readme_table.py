"""The README's one-screen table: each scenario, mcpbind, the official SDK, FastMCP and the floor.

Made from a suite run's unpinned numbers (the judged ones), saved as JSON so that the table and the
chart (bench/chart.py) can be made again without running anything (``python -m bench
--summary-only``). Each row is one scenario in its own unit; a cell with no number (NaN) was not
measured. The HTTP rows come from bench/streamable_http.py's goal ratios only, so they are relative
to the official SDK (= 1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import msgspec

from bench import clients, stdio, targets
from bench._proc import fmt_num, med

MCPBIND_ASYNCIO = "mcpbind, asyncio"
MCPBIND_TRIO = "mcpbind, trio"
OFFICIAL = "official SDK"
FASTMCP = "FastMCP"
FLOOR = "floor"
COLUMNS = (MCPBIND_ASYNCIO, MCPBIND_TRIO, OFFICIAL, FASTMCP, FLOOR)


class Row(msgspec.Struct):
    """One scenario: ``values`` by column (COLUMNS), in ``unit``; ``higher_is_better`` for rates."""

    scenario: str
    unit: str
    higher_is_better: bool
    values: dict[str, float]


class Summary(msgspec.Struct):
    """What the table and the chart are made from: when and what was measured, and the rows."""

    measured: str
    commit: str
    placement: str
    rows: list[Row]


# Which run's name fills each column: stdio servers, then clients.
STDIO_COLUMNS = {
    MCPBIND_ASYNCIO: "mcpbind-asyncio",
    MCPBIND_TRIO: "mcpbind-trio",
    OFFICIAL: "official",
    FASTMCP: "fastmcp",
    FLOOR: "raw-floor",
}
CLIENT_COLUMNS = {
    MCPBIND_ASYNCIO: "mcpbind-asyncio",
    MCPBIND_TRIO: "mcpbind-trio",
    OFFICIAL: "official",
    FASTMCP: "fastmcp",
    FLOOR: "raw-client",
}


def _stdio_row(
    results: Mapping[str, stdio.Samples],
    scenario: str,
    unit: str,
    higher: bool,
    metric: targets.StdioMetric,
) -> Row:
    values = {
        column: med(metric(results[name]))
        for column, name in STDIO_COLUMNS.items()
        if name in results and results[name].failure is None and metric(results[name])
    }
    return Row(scenario, unit, higher, values)


def stdio_rows(results: Mapping[str, stdio.Samples]) -> list[Row]:
    """stdio's scenarios: calls/s at 16 in flight, sequential p50, tools/list, start-up, idle RSS."""
    rows = [
        _stdio_row(results, targets.STDIO_RATE, "calls/s", True, lambda s: s.rate.get(targets.IN_FLIGHT, [])),
        _stdio_row(results, targets.STDIO_P50, "µs", False, lambda s: s.p50_us),
        _stdio_row(results, targets.TOOLS_LIST, "ms", False, lambda s: s.list_ms),
        _stdio_row(results, "stdio " + targets.START, "ms", False, lambda s: s.start_ms),
        _stdio_row(results, "stdio server " + targets.IDLE_RSS, "MiB", False, lambda s: s.idle_rss_mib),
    ]
    return [row for row in rows if row.values]


def client_rows(results: Mapping[str, clients.Samples]) -> list[Row]:
    """The client scenario: each SDK's client at 16 in flight against the raw floor server."""
    values = {
        column: med(results[name].pipe_rate)
        for column, name in CLIENT_COLUMNS.items()
        if name in results and results[name].failure is None and results[name].pipe_rate
    }
    return [Row(targets.CLIENT_RATE, "calls/s", True, values)] if values else []


def http_rows(found: Sequence[targets.Target]) -> list[Row]:
    """The HTTP scenarios from bench/streamable_http.py's goal ratios: mcpbind against the official
    SDK (= 1), and the floor when a goal row gives mcpbind against it too."""
    rows: list[Row] = []
    for scenario in (targets.HTTP_JSON, targets.HTTP_2026):
        mine = [t for t in found if t.scenario == scenario and not math.isnan(t.value)]
        official = next((t.value for t in mine if "official" in t.target), math.nan)
        floor = next((t.value for t in mine if "floor" in t.target), math.nan)
        if math.isnan(official):
            continue
        values = {MCPBIND_ASYNCIO: official, OFFICIAL: 1.0}
        if not math.isnan(floor) and floor > 0:
            values[FLOOR] = official / floor
        rows.append(Row(scenario, "calls/s, official SDK = 1", True, values))
    return rows


def ordered(rows: Sequence[Row]) -> list[Row]:
    """The rows in issue 18's order of scenarios."""

    def rank(row: Row) -> int:
        for i, scenario in enumerate(targets.ORDER):
            if row.scenario.endswith(scenario):
                return i
        return len(targets.ORDER)

    return sorted(rows, key=rank)


def cell(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else fmt_num(value)


def markdown(summary: Summary) -> list[str]:
    """The table, with a line saying what was measured (Markdown)."""
    out = [
        f"Measured {summary.measured} at commit {summary.commit}, {summary.placement}; medians of the "
        "rounds. The official SDK is its low-level server (stdio) or `ClientSession` (client); the floor "
        "is a raw msgspec loop (server or client) with no framework. Higher is better for calls/s, "
        "lower for the rest.",
        "",
        "| scenario | unit | " + " | ".join(COLUMNS) + " |",
        "| --- | --- |" + " ---: |" * len(COLUMNS),
    ]
    for row in ordered(summary.rows):
        out.append(
            f"| {row.scenario} | {row.unit} | " + " | ".join(cell(row.values.get(c)) for c in COLUMNS) + " |"
        )
    return out


def encode(summary: Summary) -> bytes:
    return msgspec.json.format(msgspec.json.encode(summary), indent=2) + b"\n"


def decode(data: bytes) -> Summary:
    return msgspec.json.decode(data, type=Summary)
