"""mutation/REPORT.md from mutation/results/*.json (one per group, from its latest run) and the
hand-kept list of equivalent mutants, mutation/EQUIVALENT.toml.

The score of a module is the share of its mutants the tests detect (killed, or stopped for taking
too long), out of all its mutants but the equivalent ones: a mutant that behaves like the
original in every way a caller can observe cannot be killed, so it is listed with the reason and
left out. An entry of EQUIVALENT.toml names its mutant by identity (module, function and the
change, as the report prints it), which survives edits elsewhere in the file; an entry that
matches no surviving mutant any more is reported as stale.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from mutation.groups import GROUPS

MUTATION = Path(__file__).resolve().parent
RESULTS = MUTATION / "results"
EQUIVALENT = MUTATION / "EQUIVALENT.toml"
REPORT = MUTATION / "REPORT.md"
# The targets of issue 19, by group.
TARGETS = {"codec": 0.90, "connection": 0.90, "uri_template": 0.90}

HEADER = """\
# Mutation testing of the protocol core

Written by `nox -s mutants` (mutation/report.py) from mutation/results/*.json, one per group, each
from that group's latest run; equivalent mutants from mutation/EQUIVALENT.toml. How to run it and
read it: mutation/README.md.

**Score** = detected / (mutants - equivalent); detected = killed by a failing test, or stopped
for taking over mutmut's time limit (a mutant that loops forever). *No tests*: no test of the
group's selection runs the mutated function. *Equivalent*: survivors listed in
mutation/EQUIVALENT.toml (counted among *survived* too). *Other*: suspicious or not checked.
Each mutant runs the tests of the group's selection that reach its function, on the default
(fast) path; the survivors run again in a process that has not run the tests yet (mutmut forks
from one that has, whose caches hide the mutants of cached functions such as the codec tables):
only what survives both is listed.
"""


def load_equivalents() -> dict[str, str]:
    """EQUIVALENT.toml: identity -> reason."""
    if not EQUIVALENT.exists():
        return {}
    # tomllib is new in 3.11; tomli is the same parser for 3.10.
    toml: Any = importlib.import_module("tomllib" if _has_module("tomllib") else "tomli")
    data = toml.loads(EQUIVALENT.read_text(encoding="utf-8"))
    return {entry["mutant"]: entry["reason"] for entry in data.get("equivalent", [])}


def _has_module(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError:
        return False
    return True


def load_results() -> list[dict[str, Any]]:
    """The groups' results, in the order of mutation/groups.py."""
    order = {group.name: index for index, group in enumerate(GROUPS)}
    found = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(RESULTS.glob("*.json"))]
    return sorted(found, key=lambda results: order.get(results["group"], len(order)))


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def minutes(seconds: int) -> str:
    return f"{seconds // 60} min {seconds % 60:02d} s"


def tally(module: dict[str, Any], equivalents: dict[str, str]) -> dict[str, int]:
    counts: dict[str, int] = module["counts"]
    equivalent = sum(1 for mutant in module["not_detected"] if mutant["identity"] in equivalents)
    total = sum(counts.values())
    detected = sum(
        counts.get(status, 0) for status in ("killed", "timeout", "segfault", "caught by type check")
    )
    return {
        "total": total,
        "killed": counts.get("killed", 0),
        "timeout": counts.get("timeout", 0) + counts.get("segfault", 0),
        "survived": counts.get("survived", 0),
        "no tests": counts.get("no tests", 0),
        "other": total - detected - counts.get("survived", 0) - counts.get("no tests", 0),
        "equivalent": equivalent,
        "detected": detected,
    }


def render(results: list[dict[str, Any]], equivalents: dict[str, str]) -> str:
    out = [HEADER]
    out.append("## Scores\n")
    out.append(
        "| group | module | mutants | killed | timeout | survived | no tests | other | equivalent "
        "| score | target |"
    )
    out.append("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for group in results:
        sums: dict[str, int] = {}
        target = TARGETS.get(group["group"])
        for module in group["modules"]:
            row = tally(module, equivalents)
            for key, value in row.items():
                sums[key] = sums.get(key, 0) + value
            out.append(_row(group["group"], f"`{module['file']}`", row, None))
        if len(group["modules"]) > 1:
            out.append(_row(group["group"], "**all**", sums, target))
        else:
            out[-1] = _row(group["group"], f"`{group['modules'][0]['file']}`", sums, target)
    out.append("")
    out.append("## Runs\n")
    out.append("| group | revision | started | wall time | jobs | tests (in-process) | left out |")
    out.append("|---|---|---|--:|--:|---|---|")
    for group in results:
        left_out = [*group["ignored_tests"], *(f"{module} (missing)" for module in group["missing_modules"])]
        out.append(
            f"| {group['group']} | {group['revision']} | {group['started']} | {minutes(group['wall_seconds'])} "
            f"| {group['jobs']} | {', '.join(group['tests'])} | {', '.join(left_out) or '-'} |"
        )
    notes = [f"- {group['group']}: {group['note']}" for group in results if group.get("note")]
    if notes:
        out.append("")
        out.extend(notes)
    versions = sorted({f"mutmut {group['mutmut']}, Python {group['python']}" for group in results})
    out.append(f"\n{'; '.join(versions)}. Wall time on a shared 2-CPU machine, nice'd: a rough guide.\n")

    matched: set[str] = set()
    out.append("## Mutants not detected\n")
    out.append(
        "Per module, by line: `file:line` (the function), the verdict when it is not *survived*, "
        "and the change (`original → mutant`). Equivalent mutants are in the next section; mutants "
        "not checked (a run stopped early) are only counted.\n"
    )
    for group in results:
        for module in group["modules"]:
            listed = [
                mutant
                for mutant in module["not_detected"]
                if mutant["identity"] not in equivalents and mutant["status"] != "not checked"
            ]
            matched.update(mutant["identity"] for mutant in module["not_detected"])
            if not listed:
                continue
            out.append(f"### `{module['file']}` ({len(listed)})\n")
            for mutant in sorted(listed, key=lambda mutant: (mutant["line"], mutant["mutant"])):
                verdict = "" if mutant["status"] == "survived" else f" **{mutant['status']}**"
                out.append(
                    f"- `{module['file']}:{mutant['line']}` ({mutant['function']}){verdict}: "
                    f"`{_code(mutant['diff'])}`"
                )
            out.append("")

    out.append("## Equivalent mutants\n")
    out.append("From mutation/EQUIVALENT.toml; left out of the scores.\n")
    current = [identity for identity in equivalents if identity in matched]
    stale = [identity for identity in equivalents if identity not in matched]
    if not current:
        out.append("None listed yet.\n")
    for identity in current:
        out.append(f"- `{_code(identity)}`: {equivalents[identity]}")
    if stale:
        out.append("\nStale entries (no such surviving mutant now; remove them):\n")
        out.extend(f"- `{_code(identity)}`" for identity in stale)
    return "\n".join(out).rstrip() + "\n"


def _row(group: str, module: str, row: dict[str, int], target: float | None) -> str:
    scored = row["total"] - row["equivalent"]
    score = percent(row["detected"], scored)
    if target is not None and scored:
        score = f"**{score}**" if row["detected"] / scored >= target else score
    cells = [
        row[key] for key in ("total", "killed", "timeout", "survived", "no tests", "other", "equivalent")
    ]
    shown_target = f"{target:.0%}" if target is not None else ""
    return f"| {group} | {module} | {' | '.join(map(str, cells))} | {score} | {shown_target} |"


def _code(text: str) -> str:
    """Text for a Markdown code span (backticks inside would end it)."""
    return text.replace("`", "'")


def write_report() -> Path:
    REPORT.write_text(render(load_results(), load_equivalents()), encoding="utf-8")
    return REPORT
