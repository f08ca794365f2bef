"""The speed tricks of :mod:`mcpbind.fastpath` and their plain-anyio equivalents: the switch
(``MCPBIND_FASTPATH=0``) really selects the path, each path behaves the same where it counts,
and a trick whose preconditions fail falls back to the plain way. ``nox -s tests`` runs the
whole suite on both paths; the tests here that start a child check both in any run."""

from __future__ import annotations

import contextvars
import json
import os
import subprocess
import sys
from typing import Any

import anyio
import pytest

from mcpbind import fastpath
from tests.harness import child_env

pytestmark = pytest.mark.anyio

# Run in a child with the switch set one way or the other: what each trick chose, on both
# backends, including a session's (an inline one: does a quick handler make the caller watch?).
_OBSERVE = r"""
import contextvars, json, sys
import anyio
from mcpbind import fastpath
from mcpbind.server.server import Server


class Sink:
    async def receive(self) -> bytes:
        raise AssertionError

    async def send(self, message: bytes) -> None:
        pass

    async def aclose(self) -> None:
        pass


async def observe(backend: str) -> dict[str, object]:
    out: dict[str, object] = {"enabled": fastpath.ENABLED, "path": fastpath.PATH}
    out["scope_class"] = fastpath.scope_maker(anyio.CancelScope()) is not anyio.CancelScope
    out["event_class"] = fastpath.event_maker(anyio.Event()) is not anyio.Event
    out["fifo_semaphore"] = isinstance(fastpath.new_semaphore(1), fastpath.FifoSemaphore)
    out["fifo_lock"] = isinstance(fastpath.new_lock(), fastpath.FifoLock)
    out["parking"] = type(fastpath.new_parking()) is fastpath.Parking
    if backend == "asyncio":
        out["asyncio_loop"] = fastpath.asyncio_loop() is not None
    tasks: list[object] = []

    async def quick() -> int:
        tasks.append(anyio.get_current_task().id)
        return 7

    call = quick()
    run = contextvars.copy_context().run
    done, value = fastpath.first_step(call, run)
    if not done:
        value = await fastpath.finish(call, value, run)
    out["stepped_in_caller"] = value == 7 and tasks == [anyio.get_current_task().id]

    server = Server("observe", "1")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    session = server.inline_session(Sink())
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    await session.feed(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode())
    suspended: list[int] = []
    call_echo = {"name": "echo", "arguments": {"text": "x"}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call_echo}
    await session.feed(json.dumps(message).encode(), lambda: suspended.append(1))
    out["quick_handler_suspended"] = bool(suspended)
    return out


print(json.dumps({backend: anyio.run(observe, backend, backend=backend) for backend in ("asyncio", "trio")}))
"""


def _observe(switch: str | None) -> dict[str, dict[str, Any]]:
    env = child_env()
    env.pop(fastpath.SWITCH, None)
    if switch is not None:
        env[fastpath.SWITCH] = switch
    done = subprocess.run(
        [sys.executable, "-c", _OBSERVE], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    observed: dict[str, dict[str, Any]] = json.loads(done.stdout)
    return observed


FAST = {
    "enabled": True,
    "path": "fast",
    "scope_class": True,
    "event_class": True,
    "fifo_semaphore": True,
    "fifo_lock": True,
    "parking": True,
    "stepped_in_caller": True,
    "quick_handler_suspended": False,
}
PLAIN = {
    "enabled": False,
    "path": "plain",
    "scope_class": False,
    "event_class": False,
    "fifo_semaphore": False,
    "fifo_lock": False,
    "parking": False,
    "stepped_in_caller": False,
    "quick_handler_suspended": True,
}


@pytest.mark.parametrize("switch", [None, "1", "0", " 0 "])
def test_the_switch_selects_every_trick_or_none(switch: str | None) -> None:
    observed = _observe(switch)
    expected = PLAIN if switch is not None and switch.strip() == "0" else FAST
    assert observed["trio"] == expected
    assert observed["asyncio"] == {**expected, "asyncio_loop": expected["enabled"]}


def test_this_process_follows_the_switch() -> None:
    assert fastpath.ENABLED == (os.environ.get(fastpath.SWITCH, "1").strip() != "0")
    assert fastpath.PATH == ("fast" if fastpath.ENABLED else "plain")


# -- falling back when a trick's preconditions fail ---------------------------------------------


class _UnmakeableScope(anyio.CancelScope):
    """A backend class as a newer anyio might have it: not constructible as the trick expects."""

    def __new__(cls, *args: Any, **kwargs: Any) -> _UnmakeableScope:
        raise TypeError("needs the backend")


class _UnmakeableEvent(anyio.Event):
    def __new__(cls) -> _UnmakeableEvent:
        raise TypeError("needs the backend")


def test_a_backend_class_that_does_not_work_alike_is_not_called_directly() -> None:
    scope = object.__new__(_UnmakeableScope)
    event = object.__new__(_UnmakeableEvent)
    assert fastpath.scope_maker(scope) is anyio.CancelScope
    assert fastpath.event_maker(event) is anyio.Event


async def test_the_backend_classes_make_what_anyio_makes() -> None:
    make_scope = fastpath.scope_maker(anyio.CancelScope())
    make_event = fastpath.event_maker(anyio.Event())
    scope = make_scope(deadline=anyio.current_time() + 0.01)
    with scope:
        await anyio.sleep(5)
    assert scope.cancelled_caught
    event = make_event()
    assert isinstance(event, anyio.Event) and not event.is_set()


async def test_asyncio_unrecognised_means_the_plain_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastpath, "_ANYIO_ASYNCIO", "anyio._backends._renamed")
    assert fastpath.asyncio_loop() is None


async def test_asyncio_loop_only_on_asyncio(anyio_backend: str) -> None:
    loop = fastpath.asyncio_loop()
    assert (loop is not None) == (fastpath.ENABLED and anyio_backend == "asyncio")


# -- stepping: the same outcome on either path -------------------------------------------------

_seen: contextvars.ContextVar[str] = contextvars.ContextVar("_seen", default="unset")


async def _stepped(coro: Any) -> Any:
    run = contextvars.copy_context().run
    done, value = fastpath.first_step(coro, run)
    if done:
        return value
    return await fastpath.finish(coro, value, run)


async def test_a_stepped_coroutine_returns_its_value_and_keeps_its_context_to_itself() -> None:
    async def sets(wait: bool) -> str:
        _seen.set("inside")
        if wait:
            await anyio.sleep(0)
        return _seen.get()

    for wait in (False, True):
        assert await _stepped(sets(wait)) == "inside"
        assert _seen.get() == "unset"


async def test_a_stepped_coroutine_raises_its_own_error() -> None:
    async def fails(wait: bool) -> None:
        if wait:
            await anyio.sleep(0)
        raise ValueError("mine")

    for wait in (False, True):
        with pytest.raises(ValueError, match="mine"):
            await _stepped(fails(wait))


async def test_a_stepped_coroutine_is_cancelled_by_the_scope_around_it() -> None:
    cancelled: list[bool] = []

    async def waits() -> None:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(True)
            raise

    with anyio.move_on_after(0.05) as scope:
        await _stepped(waits())
    assert scope.cancelled_caught and cancelled == [True]


async def test_finish_without_a_context_awaits_as_it_is() -> None:
    async def waits() -> int:
        await anyio.sleep(0)
        return 3

    coro = waits()
    done, value = fastpath.first_step(coro)
    assert not done
    assert await fastpath.finish(coro, value) == 3


# -- first come, first served ------------------------------------------------------------------


@pytest.mark.parametrize("make", [fastpath.FifoSemaphore, fastpath.new_semaphore])
async def test_a_semaphore_hands_places_out_in_order(make: Any) -> None:
    semaphore = make(1)
    semaphore.acquire_nowait()
    with pytest.raises(anyio.WouldBlock):
        semaphore.acquire_nowait()
    order: list[int] = []

    async def take(n: int) -> None:
        await semaphore.acquire()
        order.append(n)
        semaphore.release()

    async with anyio.create_task_group() as tg:
        for n in range(4):
            tg.start_soon(take, n)
            await anyio.wait_all_tasks_blocked()
        semaphore.release()
    assert order == [0, 1, 2, 3]


async def test_a_fifo_place_handed_to_a_cancelled_waiter_goes_on() -> None:
    semaphore = fastpath.FifoSemaphore(1)
    await semaphore.acquire()
    got: list[str] = []

    async def take(name: str, scope: anyio.CancelScope) -> None:
        with scope:
            await semaphore.acquire()
            got.append(name)
            semaphore.release()

    first, second = anyio.CancelScope(), anyio.CancelScope()
    async with anyio.create_task_group() as tg:
        tg.start_soon(take, "first", first)
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(take, "second", second)
        await anyio.wait_all_tasks_blocked()
        semaphore.release()  # handed to "first", which is cancelled before it runs on
        first.cancel()
    # On asyncio "first" gives up the place it was handed; on trio it was running already and
    # takes it: either way the place is not lost.
    assert got in (["second"], ["first", "second"])
    assert semaphore.value == 1


async def test_a_lock_is_held_by_one_at_a_time() -> None:
    lock = fastpath.new_lock()
    inside: list[int] = []
    most = 0

    async def hold() -> None:
        nonlocal most
        await lock.acquire()
        try:
            inside.append(1)
            most = max(most, len(inside))
            await anyio.sleep(0)
            inside.pop()
        finally:
            lock.release()

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(hold)
    assert most == 1 and not lock.locked()


async def test_parking_wakes_the_longest_waiting_first() -> None:
    parking = fastpath.Parking()
    woken: list[int] = []

    async def wait(n: int) -> None:
        assert await parking.park()
        woken.append(n)

    async with anyio.create_task_group() as tg:
        for n in range(4):
            tg.start_soon(wait, n)
            await anyio.wait_all_tasks_blocked()
        for _ in range(2):
            assert parking.wake_one()
            await anyio.wait_all_tasks_blocked()
        assert woken == [0, 1]
        parking.wake_all()  # (woken together: trio runs them in any order)
    assert sorted(woken) == [0, 1, 2, 3]
    assert not parking.wake_one()
    assert not await fastpath.NoParking().park()  # plain: a task with nothing to do ends
