"""Shared fixtures: every runtime test runs on asyncio and on trio."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


@pytest.fixture(autouse=True)
def _recursion_limit_is_left_alone() -> Iterator[None]:
    """A test that changes the interpreter's recursion limit changes what later tests see (how
    deeply nested JSON decodes): fail it."""
    limit = sys.getrecursionlimit()
    yield
    assert sys.getrecursionlimit() == limit, "the test changed the recursion limit"


def pytest_report_header() -> str | None:
    try:
        from mcpbind import fastpath
    except ImportError:  # nox -s packaging runs its tests before any install of mcpbind
        return None
    return f"mcpbind: the {fastpath.PATH} path ({fastpath.SWITCH}={'1' if fastpath.ENABLED else '0'})"
