"""The targets of issue 18, judged on a suite run: each a ratio of medians, unpinned.

The suite (``python -m bench``) measures stdio and the client side twice: without CPU pinning (the
placement a user gets; these numbers are judged) and pinned, the load generator (or client) on one
CPU and the server on another (shown beside them, not judged). mcpbind's plain path
(``MCPBIND_FASTPATH=0``) runs in the unpinned pass as rows of its own; its ratios are shown too, not
judged. The HTTP rows are bench/streamable_http.py's goal rows (``| mcpbind <scenario> >= <bound> |
<value> met |``), parsed and placed among the others.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bench import clients, stdio
from bench._proc import fmt_ratio, med, ratio

STDIO_BACKENDS = {"mcpbind-asyncio": "mcpbind, asyncio", "mcpbind-trio": "mcpbind, trio"}
CLIENT_BACKENDS = {"mcpbind-asyncio": "mcpbind Client, asyncio", "mcpbind-trio": "mcpbind Client, trio"}
PLAIN = "-plain"  # the plain path's server or client: its fast one's name and this
IN_FLIGHT = 16

# The scenarios of issue 18, in its order; the HTTP goal rows are mapped to theirs by keywords.
STDIO_RATE = "stdio calls/s, 16 in flight"
STDIO_P50 = "stdio sequential p50"
HTTP_JSON = "HTTP JSON, 16 connections, default install"
HTTP_2026 = "HTTP 2026-07-28 stateless request"
CLIENT_RATE = "client calls/s, 16 in flight"
START = "start to first answer"
IDLE_RSS = "idle RSS"
TOOLS_LIST = "`tools/list` of 1,000 tools"
ORDER = (STDIO_RATE, STDIO_P50, HTTP_JSON, HTTP_2026, CLIENT_RATE, START, IDLE_RSS, TOOLS_LIST)


@dataclass(frozen=True)
class Target:
    """One target as measured. ``value`` is the unpinned ratio, the judged one (NaN: not measured);
    ``pinned`` and ``plain`` are shown only (NaN: not measured); ``shown`` replaces the value's cell
    when another report wrote it (the HTTP rows, units included)."""

    scenario: str
    target: str
    who: str
    value: float
    met: bool | None
    pinned: float = math.nan
    plain: float = math.nan
    shown: str = ""

    def cells(self) -> list[str]:
        if self.shown:
            now = self.shown
        elif math.isnan(self.value):
            now = "FAILED" if self.met is False else "not measured"
        else:
            now = f"{fmt_ratio(self.value)} {'met' if self.met else 'MISSED'}"
        return [self.scenario, self.target, self.who, now, _shown(self.pinned), _shown(self.plain)]


def _shown(value: float) -> str:
    return "—" if math.isnan(value) else fmt_ratio(value)


def judge(value: float, at_least: float | None, at_most: float | None) -> bool | None:
    """Whether ``value`` is within the bounds (None: not measured)."""
    if math.isnan(value):
        return None
    return (at_least is None or value >= at_least) and (at_most is None or value <= at_most)


@dataclass(frozen=True)
class Rule:
    """A target on a metric of a run's samples: ours / ``base``'s medians, within the bounds."""

    scenario: str
    target: str
    base: str
    at_least: float | None
    at_most: float | None


StdioMetric = Callable[[stdio.Samples], list[float]]
STDIO_RULES: list[tuple[Rule, StdioMetric]] = [
    (Rule(STDIO_RATE, ">= 0.5x raw floor", "raw-floor", 0.5, None), lambda s: s.rate.get(IN_FLIGHT, [])),
    (
        Rule(STDIO_RATE, ">= 40x official low-level", "official", 40, None),
        lambda s: s.rate.get(IN_FLIGHT, []),
    ),
    (Rule(STDIO_P50, "<= 2x raw floor", "raw-floor", None, 2), lambda s: s.p50_us),
    (Rule(START, "<= 0.25x official", "official", None, 0.25), lambda s: s.start_ms),
    (Rule(IDLE_RSS, "<= 0.4x official", "official", None, 0.4), lambda s: s.idle_rss_mib),
    (Rule(TOOLS_LIST, "<= 1.5x raw floor", "raw-floor", None, 1.5), lambda s: s.list_ms),
]


def _ratio_of(
    results: Mapping[str, stdio.Samples] | None, name: str, rule: Rule, metric: StdioMetric
) -> float:
    if results is None or name not in results or rule.base not in results:
        return math.nan
    ours, base = results[name], results[rule.base]
    if ours.failure is not None or base.failure is not None:
        return math.nan
    return ratio(med(metric(ours)), med(metric(base)))


def stdio_targets(
    free: Mapping[str, stdio.Samples], pinned: Mapping[str, stdio.Samples] | None
) -> list[Target]:
    """The stdio targets of mcpbind's servers in ``free`` (judged), with ``pinned``'s ratios and the
    plain path's beside them. Rows not measured in either run are left out; a server that failed
    gets one FAILED row."""
    out: list[Target] = []
    for name, who in STDIO_BACKENDS.items():
        if name not in free:
            continue
        if free[name].failure is not None:
            out.append(Target("stdio run", "every answer right, no hang", who, math.nan, False))
            continue
        for rule, metric in STDIO_RULES:
            value = _ratio_of(free, name, rule, metric)
            target = Target(
                rule.scenario,
                rule.target,
                who,
                value,
                judge(value, rule.at_least, rule.at_most),
                _ratio_of(pinned, name, rule, metric),
                _ratio_of(free, name + PLAIN, rule, metric),
            )
            if not (math.isnan(target.value) and math.isnan(target.pinned)):
                out.append(target)
    return out


def _client_ratio(results: Mapping[str, clients.Samples] | None, name: str) -> float:
    if results is None or name not in results or "raw-client" not in results:
        return math.nan
    ours, raw = results[name], results["raw-client"]
    if ours.failure is not None or raw.failure is not None:
        return math.nan
    return ratio(med(ours.pipe_rate), med(raw.pipe_rate))


def client_targets(
    free: Mapping[str, clients.Samples], pinned: Mapping[str, clients.Samples] | None
) -> list[Target]:
    """The client target (calls/s at 16 in flight, >= 0.5x the raw client) of mcpbind's clients."""
    out: list[Target] = []
    for name, who in CLIENT_BACKENDS.items():
        if name not in free:
            continue
        if free[name].failure is not None:
            out.append(Target("client run", "every answer right, no hang", who, math.nan, False))
            continue
        value = _client_ratio(free, name)
        out.append(
            Target(
                CLIENT_RATE,
                ">= 0.5x raw client",
                who,
                value,
                judge(value, 0.5, None),
                _client_ratio(pinned, name),
                _client_ratio(free, name + PLAIN),
            )
        )
    return out


_GOAL_ROW = re.compile(r"^\| (mcpbind [^|]*?) (>=|<=) ([^|]*?) \| ([^|]*?) \|$")


def http_scenario(scenario: str) -> str:
    """Issue 18's scenario of an HTTP goal row's own (``JSON at c=16``), or its own when none fits."""
    if "2026" in scenario:
        return HTTP_2026
    if "JSON" in scenario:
        return HTTP_JSON
    return f"HTTP {scenario}"


def http_goals(text: str) -> list[Target]:
    """The goal rows of bench/streamable_http.py's report (``| mcpbind JSON at c=16 >= 10x the official
    SDK's best mode | 12.3x met |``), as targets of issue 18's scenarios: the cell as it wrote it."""
    found: list[Target] = []
    for line in text.splitlines():
        m = _GOAL_ROW.match(line.strip())
        if not m:
            continue
        what, op, bound, now = m.groups()
        scenario = what.removeprefix("mcpbind ").strip()
        words = now.split()
        met = None if "met" not in words and "MISSED" not in words else "MISSED" not in words
        number = re.match(r"[\d.]+", words[0].replace(",", "")) if words else None
        value = float(number.group()) if number else math.nan
        found.append(
            Target(
                http_scenario(scenario), f"{op} {bound}", "mcpbind, Streamable HTTP", value, met, shown=now
            )
        )
    return found


def ordered(found: Sequence[Target]) -> list[Target]:
    """Issue 18's order of scenarios (others last), stable within one."""
    rank = {scenario: i for i, scenario in enumerate(ORDER)}
    return sorted(found, key=lambda t: rank.get(t.scenario, len(ORDER)))


def table_lines(found: Sequence[Target]) -> list[str]:
    """The targets table (Markdown) and the count of targets met."""
    head = ["scenario", "target", "who", "unpinned (judged)", "pinned, two CPUs", "plain path, unpinned"]
    out = ["| " + " | ".join(head) + " |", "| --- | --- | --- | ---: | ---: | ---: |"]
    out += ["| " + " | ".join(t.cells()) + " |" for t in ordered(found)]
    judged = [t for t in found if t.met is not None]
    out += ["", f"{sum(1 for t in judged if t.met)} of {len(judged)} targets met (unpinned)."]
    return out


def missed(found: Sequence[Target]) -> list[Target]:
    return [t for t in found if t.met is False]
