"""Fixtures of the scale-out tests: ``nginx_balancer``, a round-robin load balancer (Debian's
nginx, see tests/nginx_harness.py) in front of the upstreams a test gives it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack

import pytest

from tests.nginx_harness import running_nginx


@pytest.fixture
def nginx_balancer() -> Iterator[Callable[[Sequence[str]], str]]:
    """Call it with upstream URLs (``http://127.0.0.1:PORT``): it starts nginx balancing over
    them and returns its base URL (``http://127.0.0.1:PORT``); stopped when the test ends."""
    with ExitStack() as stack:

        def start(upstreams: Sequence[str]) -> str:
            return stack.enter_context(running_nginx(upstreams)).url

        yield start
