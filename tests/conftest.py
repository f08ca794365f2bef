"""Shared fixtures: every runtime test runs on asyncio and on trio."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator

import pytest

from tests.redis_harness import RedisServer, running_redis


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


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under `nox -s tests` (coverage.py; the suite in pytest-xdist workers, which coverage
    measures as Python children): a worker saves its measurement when its tests are done, not
    at interpreter exit, which a worker may not reach cleanly (killed by xdist at shutdown while
    a thread some test left behind is still blocked): its whole share of the suite would be
    missing from the totals."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return
    try:
        coverage = importlib.import_module("coverage")
    except ImportError:
        return
    current = coverage.Coverage.current()
    if current is not None:
        current.stop()
        current.save()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """One real Redis for the test session (each xdist worker has its own), on 127.0.0.1."""
    with running_redis() as server:
        yield server


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session's Redis, emptied and running: ``redis://127.0.0.1:PORT/0``."""
    redis_server.start()  # a test before may have stopped it
    redis_server.flush()
    return redis_server.url
