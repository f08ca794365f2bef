"""The benchmark suite's report, fed made-up results (no benchmark runs): issue 18's targets judged
on the unpinned run with the pinned and plain-path ratios beside them, the HTTP goal rows mapped,
and the README table's numbers through their JSON and back."""

from __future__ import annotations

import math

from bench import clients, readme_table, stdio, targets


def server(rate16: float, p50: float, start: float, rss: float, listing: float) -> stdio.Samples:
    return stdio.Samples(
        p50_us=[p50, p50 * 1.1],
        rate={16: [rate16, rate16 * 0.9]},
        start_ms=[start],
        idle_rss_mib=[rss],
        list_ms=[listing],
    )


def free_servers() -> dict[str, stdio.Samples]:
    return {
        "mcpbind-asyncio": server(60_000, 30, 40, 12, 1.2),  # meets every stdio target
        "mcpbind-trio": server(40_000, 50, 90, 20, 2.0),  # misses all but calls/s against the official
        "mcpbind-asyncio-plain": server(30_000, 45, 40, 12, 2.0),
        "official": server(1_000, 500, 200, 40, 30),
        "fastmcp": server(500, 900, 900, 80, 60),
        "raw-floor": server(100_000, 20, 20, 8, 1.0),
    }


def pinned_servers() -> dict[str, stdio.Samples]:
    names = ("mcpbind-asyncio", "mcpbind-trio", "official", "raw-floor")
    return {n: s for n, s in free_servers().items() if n in names} | {
        "mcpbind-asyncio": server(80_000, 25, 40, 12, 1.1)
    }


# The goal rows as bench/streamable_http.py writes them (issue 18's), and one of an older target.
HTTP_REPORT = """
| goal | now |
| --- | --- |
| mcpbind JSON at c=16 >= 10x the official MCPServer (JSON) | 12.5x met |
| mcpbind JSON at c=16 >= 0.6x the raw HTTP floor | 0.50x MISSED |
| mcpbind 2026-07-28 request at c=16 >= 10x the official SDK's 2026 path | 11.0x met |
| mcpbind memory per open session <= 4 KB | 2.7 KiB met |
| not a goal row | 1 |
"""


def test_stdio_targets_are_judged_unpinned_with_pinned_and_plain_shown() -> None:
    found = {
        (t.who, t.scenario, t.target): t for t in targets.stdio_targets(free_servers(), pinned_servers())
    }
    rate = found[("mcpbind, asyncio", targets.STDIO_RATE, ">= 0.5x raw floor")]
    assert (rate.met, rate.value, rate.pinned, rate.plain) == (True, 0.6, 0.8, 0.3)
    assert found[("mcpbind, asyncio", targets.STDIO_RATE, ">= 40x official low-level")].met is True
    assert all(t.met for (who, _, _), t in found.items() if who == "mcpbind, asyncio")
    trio = {key[1:]: t.met for key, t in found.items() if key[0] == "mcpbind, trio"}
    assert trio == {
        (targets.STDIO_RATE, ">= 0.5x raw floor"): False,
        (targets.STDIO_RATE, ">= 40x official low-level"): True,
        (targets.STDIO_P50, "<= 2x raw floor"): False,
        (targets.START, "<= 0.25x official"): False,
        (targets.IDLE_RSS, "<= 0.4x official"): False,
        (targets.TOOLS_LIST, "<= 1.5x raw floor"): False,
    }
    # No plain-path trio row in the run: not measured, shown as a dash.
    assert math.isnan(found[("mcpbind, trio", targets.STDIO_P50, "<= 2x raw floor")].plain)


def test_a_failed_server_is_one_failed_row() -> None:
    results = free_servers()
    results["mcpbind-trio"].failure = "round 1: no answer"
    rows = [t for t in targets.stdio_targets(results, None) if t.who == "mcpbind, trio"]
    assert [(t.met, t.cells()[3]) for t in rows] == [(False, "FAILED")]


def test_client_and_http_targets_and_the_table() -> None:
    free = {
        "raw-client": clients.Samples(pipe_rate=[20_000]),
        "mcpbind-asyncio": clients.Samples(pipe_rate=[12_000]),
        "mcpbind-asyncio-plain": clients.Samples(pipe_rate=[6_000]),
        "mcpbind-trio": clients.Samples(pipe_rate=[8_000]),
    }
    pinned = {
        "raw-client": clients.Samples(pipe_rate=[20_000]),
        "mcpbind-asyncio": clients.Samples(pipe_rate=[9_000]),
    }
    client = targets.client_targets(free, pinned)
    asyncio, trio = client
    assert (asyncio.who, asyncio.met, asyncio.value, asyncio.pinned, asyncio.plain) == (
        "mcpbind Client, asyncio",
        True,
        0.6,
        0.45,
        0.3,
    )
    assert (trio.met, trio.value, math.isnan(trio.pinned), math.isnan(trio.plain)) == (False, 0.4, True, True)
    http = targets.http_goals(HTTP_REPORT)
    assert [(t.scenario, t.met, t.value) for t in http] == [
        (targets.HTTP_JSON, True, 12.5),
        (targets.HTTP_JSON, False, 0.5),
        (targets.HTTP_2026, True, 11.0),
        ("HTTP memory per open session", True, 2.7),
    ]
    lines = targets.table_lines([*client, *http, *targets.stdio_targets(free_servers(), None)])
    assert lines[0].startswith("| scenario | target | who | unpinned (judged) |")
    rows = [line for line in lines if line.startswith("| ") and "---" not in line][1:]
    scenarios = list(dict.fromkeys(row.split(" | ")[0].removeprefix("| ") for row in rows))
    assert scenarios == [*targets.ORDER, "HTTP memory per open session"]
    assert "| mcpbind JSON" not in "\n".join(lines)
    assert "| 12.5x met | — | — |" in "\n".join(lines)
    judged = len(client) + len(http) + 12
    met = sum(1 for t in [*client, *http, *targets.stdio_targets(free_servers(), None)] if t.met)
    assert lines[-1] == f"{met} of {judged} targets met (unpinned)."


def test_the_readme_table_round_trips_through_json() -> None:
    rows = readme_table.stdio_rows(free_servers())
    rows += readme_table.client_rows({"raw-client": clients.Samples(pipe_rate=[20_000])})
    rows += readme_table.http_rows(targets.http_goals(HTTP_REPORT))
    summary = readme_table.Summary("2026-12-02 07:00 UTC", "abc123", "no CPU pinning", rows)
    again = readme_table.decode(readme_table.encode(summary))
    assert again == summary
    table = readme_table.markdown(again)
    assert (
        table[2] == "| scenario | unit | mcpbind, asyncio | mcpbind, trio | official SDK | FastMCP | floor |"
    )
    by_scenario = {line.split(" | ")[0].removeprefix("| "): line for line in table[4:]}
    assert by_scenario[targets.STDIO_RATE].endswith("| 57,000 | 38,000 | 950 | 475 | 95,000 |")
    assert by_scenario[targets.CLIENT_RATE].endswith("| — | — | — | — | 20,000 |")
    # HTTP: relative to the official SDK; the floor from mcpbind's two ratios (12.5 / 0.5).
    assert by_scenario[targets.HTTP_JSON].endswith("| 12.5 | — | 1.00 | — | 25.0 |")
    assert list(by_scenario)[:3] == [targets.STDIO_RATE, targets.STDIO_P50, targets.HTTP_JSON]
