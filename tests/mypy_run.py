"""mypy as the tests run it: in this process, through ``mypy.api``, leaving the interpreter as it
found it. mypy raises the recursion limit for itself and does not put it back; how deeply nested
JSON a decoder accepts depends on that limit (tests/test_stdio_hostile.py), so a mypy test that
ran earlier would change what later tests see."""

from __future__ import annotations

import sys


def run_mypy(args: list[str]) -> tuple[str, str, int]:
    """``mypy.api.run(args)``: its report, its errors and its exit status."""
    from mypy import api

    limit = sys.getrecursionlimit()
    try:
        return api.run(args)
    finally:
        sys.setrecursionlimit(limit)
