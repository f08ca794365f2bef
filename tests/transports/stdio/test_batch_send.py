"""StdioTransport.send_batch_nowait: a client's requests of one turn in one write (asyncio and
trio, over OS pipes)."""

from __future__ import annotations

import anyio
import pytest

from mcpbind.transports.base import batch_sender
from mcpbind.transports.stdio import fdio
from tests.transports.stdio.test_fdio import crossed_pipes, pipe_transports

pytestmark = pytest.mark.anyio


async def test_a_batch_is_written_whole_up_to_pipe_buf() -> None:
    with crossed_pipes() as pipes, anyio.fail_after(10):
        async with pipe_transports(pipes) as (a, b):
            assert batch_sender(a) is a
            assert a.send_batch_nowait([b'{"n":1}', b'{"n":2}', b'{"n":3}']) == 3
            assert [await b.receive() for _ in range(3)] == [b'{"n":1}', b'{"n":2}', b'{"n":3}']
            big = b'{"big":"' + b"x" * (fdio.PIPE_BUF // 2) + b'"}'
            # Only what fits in PIPE_BUF bytes goes: the rest is the caller's.
            assert a.send_batch_nowait([big, big, b'{"n":4}']) == 1
            assert await b.receive() == big
            assert a.send_batch_nowait([b"x" * fdio.PIPE_BUF]) == 0
            assert a.send_batch_nowait([b"two\nlines", b'{"n":5}']) == 0
            assert a.send_batch_nowait([b'{"n":6}', b"two\nlines"]) == 1
            assert await b.receive() == b'{"n":6}'


async def test_a_full_pipe_takes_no_batch() -> None:
    with crossed_pipes() as pipes, anyio.fail_after(10):
        async with pipe_transports(pipes) as (a, b):
            fill = b'{"fill":"' + b"f" * 3000 + b'"}'
            while a.send_nowait(fill):
                pass
            while a.send_nowait(b"{}"):  # until not even a short line has room
                pass
            assert a.send_batch_nowait([b"{}", b"{}"]) == 0
            assert await b.receive() == fill  # nothing torn
