"""Shared fixtures: every runtime test runs on asyncio and on trio."""

from __future__ import annotations

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
