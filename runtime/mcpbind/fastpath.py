"""The speed tricks that lean on how anyio and asyncio work inside, each beside its plain-anyio
equivalent: the one module allowed to know such things.

The switch: ``MCPBIND_FASTPATH=0`` in the environment when this module is first imported selects
the plain equivalents everywhere (for the life of the process); :data:`ENABLED` says which path
is in use, and :data:`PATH` names it (``"fast"`` or ``"plain"``). The test suite runs on both
(``nox -s tests``). Whatever the switch says, a trick whose preconditions do not hold (a newer
anyio that changed what it relies on) is not used: the plain equivalent runs instead, slower
but correct.

The tricks, and what the plain path does instead:

* **Backend classes called directly** (:func:`scope_maker`, :func:`event_maker`):
  ``anyio.CancelScope()`` and ``anyio.Event()`` look the running backend up on each call, which
  costs about as much again as making the object; the class of one they returned is called
  directly after that. Plain: ``anyio.CancelScope`` and ``anyio.Event`` each time.
* **Handlers stepped by hand** (:func:`first_step`, :func:`finish`, :func:`resume`): the first
  step of a coroutine is taken with ``send(None)`` in the task that awaits it, so a handler that
  finishes at once (most do) costs no task, no context switch and no watch for the peer, and
  every step can run in a ``contextvars.Context`` of its own. Plain: the coroutine is never
  stepped by hand; it runs in a task of its own, spawned in a task group (a copy of the
  current context, as every new task gets), or is awaited as it is when no context is asked for.
* **asyncio recognised** (:func:`asyncio_loop`, :func:`readable_watch`, :func:`flag_maker`):
  the running loop is used directly for a file descriptor's readiness when anyio runs on
  asyncio, recognised by the module of anyio's backend classes, and the descriptor stays
  registered with the loop between waits (:class:`ReadableWatch`); an event that one task
  waits on (a request's caller waiting for its answer) is a future of the loop's
  (:class:`LoopFlag`). Plain: never (``anyio.wait_readable``, ``anyio.Event``).
* **Hand-rolled first-come-first-served waits** (:class:`FifoLock`, :class:`FifoSemaphore`,
  :class:`Parking`): taking a free place costs a flag, not a checkpoint and a look-up of the
  current task. Plain: ``anyio.Lock``, ``anyio.Semaphore``, and no parking at all (a task with
  nothing to do ends, and a new one is spawned when work comes).
"""

from __future__ import annotations

import functools
import math
import os
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Generator
from types import coroutine
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

import anyio

if TYPE_CHECKING:
    from asyncio import AbstractEventLoop, Future

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = [
    "ENABLED",
    "PATH",
    "SWITCH",
    "FifoLock",
    "FifoSemaphore",
    "Flag",
    "FlagMaker",
    "LoopFlag",
    "Lock",
    "Parking",
    "Semaphore",
    "ReadableWatch",
    "asyncio_loop",
    "awaited",
    "readable_watch",
    "event_maker",
    "finish",
    "first_step",
    "flag_maker",
    "new_lock",
    "new_parking",
    "new_semaphore",
    "resume",
    "scope_maker",
]

R = TypeVar("R")

SWITCH: Final = "MCPBIND_FASTPATH"
"""The environment variable that turns the fast path off (``MCPBIND_FASTPATH=0``)."""

ENABLED: Final[bool] = os.environ.get(SWITCH, "1").strip() != "0"
"""Whether the speed tricks are used (read once, at import)."""

PATH: Final[str] = "fast" if ENABLED else "plain"


# --------------------------------------------------------------------------------------------
# anyio's backend classes, called directly
# --------------------------------------------------------------------------------------------

ScopeMaker = Callable[..., anyio.CancelScope]
"""Makes a cancel scope: called as ``make(deadline=...)``."""

EventMaker = Callable[[], anyio.Event]

# Backend classes checked already: whether each behaves as anyio's own constructor would.
_checked: dict[type, bool] = {}


def _scope_class_works(cls: type[Any]) -> bool:
    try:
        probe = cls(deadline=math.inf)
        timed = cls(deadline=1e18)  # (a deadline passed counts as cancel_called on trio)
        return (
            isinstance(probe, anyio.CancelScope)
            and type(probe) is cls
            and probe.deadline == math.inf
            and timed.deadline == 1e18
            and not probe.shield
            and not probe.cancel_called
        )
    except Exception:
        return False


def _event_class_works(cls: type[Any]) -> bool:
    try:
        probe = cls()
        if not (isinstance(probe, anyio.Event) and type(probe) is cls and not probe.is_set()):
            return False
        probe.set()
        return bool(probe.is_set())
    except Exception:
        return False


def scope_maker(scope: anyio.CancelScope) -> ScopeMaker:
    """What to call for the next cancel scopes on the backend that made ``scope`` (one that
    ``anyio.CancelScope()`` returned, on the backend running now).

    Fast: the backend's own class, called directly. Plain, or when that class does not behave
    as ``anyio.CancelScope(deadline=...)`` does: ``anyio.CancelScope``. A caller keeps the
    result for as long as it runs on one event loop (a session: its whole life)."""
    cls = type(scope)
    if ENABLED and cls is not anyio.CancelScope:
        works = _checked.get(cls)
        if works is None:
            works = _checked[cls] = _scope_class_works(cls)
        if works:
            return cls
    return anyio.CancelScope


def event_maker(event: anyio.Event) -> EventMaker:
    """As :func:`scope_maker`, for events: the class of ``event`` (one ``anyio.Event()``
    returned) when the fast path is on and it works alike, else ``anyio.Event``."""
    cls = type(event)
    if ENABLED and cls is not anyio.Event:
        works = _checked.get(cls)
        if works is None:
            works = _checked[cls] = _event_class_works(cls)
        if works:
            return cls
    return anyio.Event


class Flag(Protocol):
    """What :func:`flag_maker`'s makers return: an event that one task at a time waits on
    (``anyio.Event`` is one)."""

    def set(self) -> None: ...

    def is_set(self) -> bool: ...

    async def wait(self) -> None: ...


FlagMaker = Callable[[], Flag]


class LoopFlag:
    """An event for a single waiter on an asyncio loop: one future of the loop's, made only if
    the task waits before it is set (an ``anyio.Event`` on asyncio is an ``asyncio.Event``
    inside a wrapper, with a deque of waiters and a loop look-up on each wait). Waiting when it
    is set already returns at once, without a checkpoint. Two tasks must not wait at once
    (cancelling one would cancel the future they share). The fast path only, made by
    :func:`flag_maker`."""

    __slots__ = ("_future", "_loop", "_set")

    def __init__(self, loop: AbstractEventLoop) -> None:
        self._loop = loop
        self._future: Future[None] | None = None
        self._set = False

    def set(self) -> None:
        if not self._set:
            self._set = True
            future = self._future
            if future is not None and not future.done():
                future.set_result(None)

    def is_set(self) -> bool:
        return self._set

    async def wait(self) -> None:
        if self._set:
            return
        future = self._future
        if future is None or future.cancelled():  # (a wait cancelled before cancels its future)
            future = self._future = self._loop.create_future()
        await future


def flag_maker() -> FlagMaker:
    """What makes a :class:`Flag` on the event loop running now (a caller keeps it for as long
    as it runs on that loop). Fast, on asyncio: a :class:`LoopFlag` of the running loop.
    Plain, or on trio: ``anyio.Event``, made as :func:`event_maker` makes it."""
    loop = asyncio_loop()
    if loop is not None:
        return functools.partial(LoopFlag, loop)
    return event_maker(anyio.Event())


# --------------------------------------------------------------------------------------------
# Coroutines stepped by hand
# --------------------------------------------------------------------------------------------

Runner = Callable[..., Any]
"""Runs a step: ``run(function, *args)``; ``contextvars.Context.run`` runs it in a context."""


def _call(function: Callable[..., Any], *args: Any) -> Any:
    """Run a step as it is, in the current context."""
    return function(*args)


@coroutine
def resume(coro: Coroutine[Any, Any, R], value: Any, run: Runner = _call) -> Generator[Any, Any, R]:
    """Go on with ``coro`` after its first step was taken by hand and yielded ``value``: what the
    event loop sends or throws in goes to ``coro``, what it yields goes to the event loop. Each
    step runs through ``run``: a plain call by default; a ``Context.run`` runs every step in that
    context.

    Taking a coroutine's first step by hand (``coro.send(None)``, in the task that awaits it, so
    inside the caller's cancel scopes exactly as ``await`` would run it) tells whether it
    finishes at once, as most handlers do, or waits for something: only then does the caller
    need to do something about it (hand reading over to another task, watch for the client
    going away), and it learns so just before the first wait. Stepping by hand is also what
    runs a handler in a context of its own while the task stays the caller's. Only the public
    coroutine protocol (``send``, ``throw``) is used. The fast path only (see :func:`finish`)."""
    while True:
        try:
            sent = yield value
        except BaseException as exc:  # a cancellation, or GeneratorExit on close: it decides
            try:
                value = run(coro.throw, exc)
            except StopIteration as stop:
                result: R = stop.value
                return result
        else:
            try:
                value = run(coro.send, sent)
            except StopIteration as stop:
                result = stop.value
                return result


async def awaited(awaitable: Awaitable[R]) -> R:
    """A coroutine around an awaitable that is not one, so that its steps can be taken by hand."""
    return await awaitable


def _first_step_by_hand(coro: Coroutine[Any, Any, Any], run: Runner | None = None) -> tuple[bool, Any]:
    try:
        value = coro.send(None) if run is None else run(coro.send, None)
    except StopIteration as stop:
        return True, stop.value
    return False, value


def _no_first_step(coro: Coroutine[Any, Any, Any], run: Runner | None = None) -> tuple[bool, Any]:
    return False, None


def _finish_by_hand(coro: Coroutine[Any, Any, R], value: Any, run: Runner | None = None) -> Awaitable[R]:
    return resume(coro, value, _call if run is None else run)


class _Outcome:
    __slots__ = ("error", "value")

    def __init__(self) -> None:
        self.value: Any = None
        self.error: BaseException | None = None


async def _outcome_of(coro: Coroutine[Any, Any, Any], outcome: _Outcome) -> None:
    try:
        outcome.value = await coro
    except anyio.get_cancelled_exc_class():
        raise
    except BaseException as exc:  # given to the awaiting task, which raises it as itself
        outcome.error = exc


async def _finish_in_a_task(coro: Coroutine[Any, Any, R], value: Any, run: Runner | None = None) -> R:
    if run is None:
        return await coro
    outcome = _Outcome()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_outcome_of, coro, outcome)
    except BaseExceptionGroup as group_error:
        # Only cancellations get here (the task keeps every other error for us): one of them.
        raise group_error.exceptions[0] from None
    if outcome.error is not None:
        error, outcome.error = outcome.error, None
        raise error
    result: R = outcome.value
    return result


class FirstStep(Protocol):
    def __call__(self, coro: Coroutine[Any, Any, Any], run: Runner | None = None) -> tuple[bool, Any]: ...


class Finish(Protocol):
    def __call__(
        self, coro: Coroutine[Any, Any, R], value: Any, run: Runner | None = None
    ) -> Awaitable[R]: ...


first_step: FirstStep = _first_step_by_hand if ENABLED else _no_first_step
"""``first_step(coro, run=None) -> (done, value)``: take the first step of the coroutine
``coro`` (through ``run``, see :data:`Runner`). ``(True, result)`` if it finished in it;
else ``(False, value)``, and ``await finish(coro, value, run)`` goes on with it. What the first
step raises comes out of here. Plain: ``(False, None)`` (nothing is run: :func:`finish` runs it
all)."""

finish: Finish = _finish_by_hand if ENABLED else _finish_in_a_task
"""``await finish(coro, value, run=None)``: what ``coro`` returns (or raises), after a
:func:`first_step` that did not finish it. Fast: :func:`resume`, every step through ``run``.
Plain: with ``run`` (a context asked for), ``coro`` runs in a task of its own in a task group
(so in a copy of the current context: the caller passes a fresh copy of the current context,
which is the same); without, it is simply awaited."""


# --------------------------------------------------------------------------------------------
# asyncio recognised
# --------------------------------------------------------------------------------------------

# The module of anyio's asyncio backend classes (anyio 4).
_ANYIO_ASYNCIO = "anyio._backends._asyncio"


def asyncio_loop() -> AbstractEventLoop | None:
    """The running asyncio event loop when anyio runs on asyncio here and the fast path is on
    (a caller may then use the loop's own readiness callbacks), else ``None``: the caller uses
    plain anyio. Recognised by the module of the class ``anyio.Event()`` returns: when a newer
    anyio moves it, this returns ``None`` and the plain path runs."""
    if not ENABLED:
        return None
    asyncio_module = sys.modules.get("asyncio")  # not imported: the loop is not asyncio's
    if asyncio_module is None or type(anyio.Event()).__module__ != _ANYIO_ASYNCIO:
        return None
    try:
        loop: AbstractEventLoop = asyncio_module.get_running_loop()
    except RuntimeError:
        return None
    return loop


class ReadableWatch:
    """Waits for a descriptor to be readable on an asyncio loop, staying registered with the
    loop between waits: anyio's ``wait_readable`` adds and removes the reader for each wait,
    two ``epoll_ctl`` calls and the selector's bookkeeping per message.

    The loop reports the descriptor for as long as data is unread, so a report with nobody
    waiting is expected once (the reader was woken and has not read yet); after two in a row
    (nobody reads: the session is busy elsewhere) the watch unregisters until the next wait.

    Made by :func:`readable_watch` (fast path, asyncio only); the plain-anyio equivalent is
    ``anyio.wait_readable``, which trio always uses.
    """

    __slots__ = ("_fd", "_idle_reports", "_loop", "_waiter", "_watching")

    def __init__(self, fd: int, loop: AbstractEventLoop) -> None:
        self._fd = fd
        self._loop = loop
        self._waiter: Future[None] | None = None
        self._watching = False
        self._idle_reports = 0

    def _readable(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            self._idle_reports = 0
            if not waiter.done():
                waiter.set_result(None)
            return
        self._idle_reports += 1
        if self._idle_reports >= 2:
            self._loop.remove_reader(self._fd)
            self._watching = False

    def stale(self) -> bool:
        """Whether this watch belongs to an event loop that is not the one running now (asked
        on each wait: asyncio's private ``_get_running_loop``, which answers without raising)."""
        return sys.modules["asyncio"]._get_running_loop() is not self._loop

    async def wait(self) -> None:
        if self._waiter is not None:
            raise anyio.BusyResourceError("reading from")
        waiter = self._waiter = self._loop.create_future()
        if not self._watching:
            self._loop.add_reader(self._fd, self._readable)
            self._watching = True
            self._idle_reports = 0
        try:
            await waiter
        finally:
            if self._waiter is waiter:
                self._waiter = None

    def close(self) -> None:
        if self._watching:
            self._loop.remove_reader(self._fd)
            self._watching = False
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(anyio.ClosedResourceError())


def readable_watch(fd: int) -> ReadableWatch | None:
    """A :class:`ReadableWatch` of ``fd`` on the running asyncio loop, or ``None`` (trio, the
    plain path, or an anyio whose asyncio backend is no longer recognised): the caller then
    waits with ``anyio.wait_readable``."""
    loop = asyncio_loop()
    return None if loop is None else ReadableWatch(fd, loop)


# --------------------------------------------------------------------------------------------
# First come, first served
# --------------------------------------------------------------------------------------------


class Lock(Protocol):
    """What :func:`new_lock` returns (``anyio.Lock`` is one)."""

    async def acquire(self) -> None: ...

    def release(self) -> None: ...

    def locked(self) -> bool: ...


class Semaphore(Protocol):
    """What :func:`new_semaphore` returns (``anyio.Semaphore`` is one)."""

    async def acquire(self) -> None: ...

    def acquire_nowait(self) -> None: ...

    def release(self) -> None: ...


class FifoSemaphore:
    """A semaphore whose free places cost a counter: taking one neither yields nor checks for
    cancellation (anyio's look up the current task and checkpoint, which costs more than a small
    handler). Waiters queue in order, and a freed place is handed to the first of them."""

    __slots__ = ("_value", "_waiters")

    def __init__(self, value: int) -> None:
        self._value = value
        self._waiters: deque[anyio.Event] | None = None  # made when first someone waits

    def acquire_nowait(self) -> None:
        if self._value <= 0:
            raise anyio.WouldBlock
        self._value -= 1

    async def acquire(self) -> None:
        if self._value > 0:
            self._value -= 1
            return
        turn = anyio.Event()
        waiters = self._waiters
        if waiters is None:
            waiters = self._waiters = deque()
        waiters.append(turn)
        try:
            await turn.wait()
        except BaseException:
            if turn.is_set():
                self.release()  # handed the place while leaving: it goes on
            else:
                waiters.remove(turn)
            raise

    def release(self) -> None:
        waiters = self._waiters
        if waiters:
            waiters.popleft().set()  # the place goes to the first waiting: it stays taken
        else:
            self._value += 1

    @property
    def value(self) -> int:
        return self._value


class FifoLock(FifoSemaphore):
    """A lock (a :class:`FifoSemaphore` of one place) that any task may release."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(1)

    def locked(self) -> bool:
        return self._value <= 0


def new_semaphore(value: int) -> Semaphore:
    """A semaphore of ``value`` places, handed out first come first served: a
    :class:`FifoSemaphore` (fast) or ``anyio.Semaphore(value)`` (plain)."""
    return FifoSemaphore(value) if ENABLED else anyio.Semaphore(value)


def new_lock() -> Lock:
    """A lock handed out first come first served: a :class:`FifoLock` (fast) or
    ``anyio.Lock()`` (plain, released only by the task holding it)."""
    return FifoLock() if ENABLED else anyio.Lock()


class Parking:
    """Where tasks with nothing to do wait to be handed work, the longest waiting first (a
    session's idle workers), so that work costs no new task. The fast path only: plain, a
    :class:`NoParking` turns every task away, and a new one is spawned when work comes."""

    __slots__ = ("_waiting",)

    def __init__(self) -> None:
        self._waiting: deque[anyio.Event] = deque()

    async def park(self) -> bool:
        """Wait until :meth:`wake_one` or :meth:`wake_all` wakes this task: True (it goes on
        working)."""
        turn = anyio.Event()
        self._waiting.append(turn)
        await turn.wait()
        return True

    def wake_one(self) -> bool:
        """Wake the task that has waited longest; False if none waits (spawn one)."""
        if self._waiting:
            self._waiting.popleft().set()
            return True
        return False

    def wake_all(self) -> None:
        waiting = self._waiting
        while waiting:
            waiting.popleft().set()


class NoParking(Parking):
    """The plain path's :class:`Parking`: nobody waits; a task with nothing to do ends."""

    __slots__ = ()

    async def park(self) -> bool:
        return False


def new_parking() -> Parking:
    return Parking() if ENABLED else NoParking()
