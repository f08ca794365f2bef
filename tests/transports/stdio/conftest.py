"""Fixtures of the stdio tests: the backend a server child runs on."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def server_backend(request: pytest.FixtureRequest) -> str:
    """The backend a server child process runs on (this side runs on both, ``anyio_backend``)."""
    backend: str = request.param
    return backend
