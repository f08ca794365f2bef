"""The chart of a suite run (a PNG, with matplotlib): one panel per scenario of the README's table.

Each panel has a horizontal bar per column (mcpbind on asyncio and on trio, the official SDK,
FastMCP, the floor) in the scenario's unit, the number written at the end of the bar; the axis is
logarithmic when the largest bar is 30x the smallest or more (the official SDK against the floor over
stdio is about 100x). mcpbind's bars are one colour, the others' another, the floor's grey.
"""

from __future__ import annotations

import math
from pathlib import Path

from bench.readme_table import COLUMNS, FLOOR, Summary, cell, ordered

COLOURS = {FLOOR: "#9e9e9e"}
MCPBIND_COLOUR = "#1f77b4"
PEER_COLOUR = "#ff7f0e"
LOG_SPREAD = 30.0
PANEL_COLUMNS = 2


def write_png(summary: Summary, path: Path) -> None:
    """Draw ``summary`` into a PNG at ``path`` (its folder is made)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    rows = [row for row in ordered(summary.rows) if any(not math.isnan(v) for v in row.values.values())]
    if not rows:
        raise ValueError("nothing to chart: no scenario has a number")
    lines = math.ceil(len(rows) / PANEL_COLUMNS)
    figure, axes = pyplot.subplots(
        lines, PANEL_COLUMNS, figsize=(6.5 * PANEL_COLUMNS, 2.6 * lines), squeeze=False
    )
    for i, ax in enumerate(axes.flat):
        if i >= len(rows):
            ax.set_visible(False)
            continue
        row = rows[i]
        # Every column keeps its place in every panel; one not measured says so.
        measured = {c: v for c, v in row.values.items() if not math.isnan(v)}
        positions = list(range(len(COLUMNS)))
        values = [measured.get(c, 0.0) for c in COLUMNS]
        colours = [
            COLOURS.get(c, MCPBIND_COLOUR if c.startswith("mcpbind") else PEER_COLOUR) for c in COLUMNS
        ]
        ax.barh(positions, values, color=colours)
        ax.set_yticks(positions, labels=list(COLUMNS))
        ax.invert_yaxis()
        positive = [v for v in measured.values() if v > 0]
        log_scale = bool(positive) and max(positive) / min(positive) >= LOG_SPREAD
        if log_scale:
            ax.set_xscale("log")
        top = max(positive, default=1.0)
        ax.set_xlim(min(positive) / 2 if log_scale else 0, top * (4 if log_scale else 1.25))
        for y, c in zip(positions, COLUMNS, strict=True):
            at = measured.get(c, 0.0) if c in measured else (min(positive) / 2 if log_scale else 0)
            ax.text(
                at, y, " " + (cell(measured[c]) if c in measured else "not measured"), va="center", fontsize=8
            )
        better = "higher is better" if row.higher_is_better else "lower is better"
        ax.set_title(f"{row.scenario.replace('`', '')} ({row.unit}; {better})", fontsize=9)
        ax.tick_params(axis="both", labelsize=8)
    figure.suptitle(
        f"mcpbind beside the official SDK, FastMCP and the floor ({summary.measured}, {summary.placement})",
        fontsize=10,
    )
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
