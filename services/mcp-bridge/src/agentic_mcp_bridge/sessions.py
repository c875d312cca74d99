"""The session pool: one MCP client session per (tenant, server, credentials), reused, closed when idle.

A session's transport and `ClientSession` are async context managers that must
be entered and left by one task, so each session has an owner task that holds
them open; callers run their requests on it from their own tasks, and learn
at once when it dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol, TypeVar

from agentic_core.errors import ServiceUnavailable
from mcp import ClientSession

from agentic_mcp_bridge.metrics import SESSIONS_OPEN, SESSIONS_OPENED

log = logging.getLogger(__name__)
T = TypeVar("T")


class Connector(Protocol):
    """How a session reaches its server (see `connect.Connection`)."""

    @property
    def refusal(self) -> Exception | None: ...

    @property
    def session_gone(self) -> bool: ...

    def open(self) -> AbstractAsyncContextManager[ClientSession]: ...

CLOSE_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class SessionKey:
    tenant: str
    server: str        # the target's identity (URL or connector)
    credentials: str   # the headers' fingerprint


class SessionLost(Exception):
    """The session ended (or never started); `cause` is what ended it, when known."""

    def __init__(self, cause: BaseException | None) -> None:
        super().__init__(repr(cause))
        self.cause = cause


class PooledSession:
    def __init__(self, key: SessionKey, connector: Connector) -> None:
        self.key = key
        self.connector = connector
        self.in_use = 0
        self.uses = 0
        self.last_used = time.monotonic()
        self.failure: BaseException | None = None
        self._session: ClientSession | None = None
        self._ready = asyncio.Event()
        self._closing = asyncio.Event()
        self._ended = asyncio.Event()
        self._task = asyncio.create_task(self._own(), name="mcp-session")

    @property
    def ready(self) -> bool:
        return self._session is not None and self._ready.is_set()

    @property
    def alive(self) -> bool:
        return not self._ended.is_set() and not self._closing.is_set()

    async def _own(self) -> None:
        SESSIONS_OPEN.inc()
        try:
            async with self.connector.open() as session:
                self._session = session
                SESSIONS_OPENED.inc()
                self._ready.set()
                await self._closing.wait()
        except asyncio.CancelledError:
            self.failure = self.failure or asyncio.CancelledError()
            raise
        except BaseException as exc:  # whatever ended the session is the callers' error
            self.failure = self.connector.refusal or exc
        finally:
            SESSIONS_OPEN.dec()
            self._ended.set()
            self._ready.set()

    async def wait_ready(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(self._ready.wait(), max(timeout, 0.0))
        except TimeoutError:
            raise SessionLost(TimeoutError()) from None
        if self._session is None or self._ended.is_set():
            raise SessionLost(self.failure)

    async def run(self, operation: Callable[[ClientSession], Awaitable[T]], timeout: float) -> T:
        """`operation` on this session within `timeout`; `SessionLost` when the session ends under it."""
        if self._session is None or not self.alive:
            raise SessionLost(self.failure)
        self.uses += 1
        operation_task = asyncio.ensure_future(operation(self._session))
        ended = asyncio.ensure_future(self._ended.wait())
        try:
            done, _ = await asyncio.wait({operation_task, ended}, timeout=max(timeout, 0.0),
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
            if not operation_task.done():
                operation_task.cancel()
                with contextlib.suppress(BaseException):
                    await operation_task
        if operation_task in done:
            return operation_task.result()
        if ended in done:
            raise SessionLost(self.failure)
        raise TimeoutError

    async def close(self) -> None:
        self._closing.set()
        if not self._ready.is_set():  # still opening: nothing to close politely
            self._task.cancel()
        done, _ = await asyncio.wait({self._task}, timeout=CLOSE_SECONDS)
        if not done:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=1.0)


class SessionPool:
    """At most `max_sessions` sessions; the least recently used idle one makes room for a new one."""

    def __init__(self, *, max_sessions: int, idle_seconds: float) -> None:
        self.max_sessions = max_sessions
        self.idle_seconds = idle_seconds
        self._sessions: OrderedDict[SessionKey, PooledSession] = OrderedDict()
        self._released = asyncio.Event()
        self._closing: set[asyncio.Task[None]] = set()
        self._reaper: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, key: SessionKey) -> PooledSession | None:
        return self._sessions.get(key)

    def start(self) -> None:
        self._reaper = asyncio.create_task(self._reap_idle(), name="mcp-session-reaper")

    @contextlib.asynccontextmanager
    async def lease(self, key: SessionKey, connector: Connector, timeout: float) -> AsyncIterator[PooledSession]:
        session = await self.acquire(key, connector, timeout)
        try:
            yield session
        finally:
            self.release(session)

    async def acquire(self, key: SessionKey, connector: Connector, timeout: float) -> PooledSession:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            session = self._sessions.get(key)
            if session is not None and not session.alive:
                self._forget(session)
                session = None
            if session is None:
                if len(self._sessions) >= self.max_sessions and not self._evict_one_idle():
                    self._released.clear()
                    try:
                        await asyncio.wait_for(self._released.wait(), max(deadline - loop.time(), 0.0))
                    except TimeoutError:
                        raise ServiceUnavailable(
                            "Every MCP session of this bridge is busy; try again shortly.", code="mcp_sessions_exhausted"
                        ) from None
                    continue
                session = PooledSession(key, connector)
                self._sessions[key] = session
            self._sessions.move_to_end(key)
            session.in_use += 1
            try:
                await session.wait_ready(deadline - loop.time())
            except BaseException:
                self.release(session)
                if not session.alive or (session.in_use == 0 and not session.ready):
                    self._forget(session)
                raise
            return session

    def release(self, session: PooledSession) -> None:
        session.in_use -= 1
        session.last_used = time.monotonic()
        self._released.set()

    def discard(self, session: PooledSession) -> None:
        """Close a session that failed; the next caller opens a fresh one."""
        self._forget(session)

    def _forget(self, session: PooledSession) -> None:
        if self._sessions.get(session.key) is session:
            del self._sessions[session.key]
            self._released.set()
        task = asyncio.create_task(session.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _evict_one_idle(self) -> bool:
        for session in self._sessions.values():
            if session.in_use == 0:
                self._forget(session)
                return True
        return False

    def close_idle(self, now: float | None = None) -> int:
        """Close sessions unused for `idle_seconds` (and dead ones); returns how many went."""
        now = time.monotonic() if now is None else now
        stale = [
            session for session in self._sessions.values()
            if session.in_use == 0 and (not session.alive or now - session.last_used >= self.idle_seconds)
        ]
        for session in stale:
            self._forget(session)
        return len(stale)

    async def _reap_idle(self) -> None:
        interval = min(max(self.idle_seconds / 4, 0.05), 5.0)
        while True:
            await asyncio.sleep(interval)
            self.close_idle()

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        for session in list(self._sessions.values()):
            self._forget(session)
        if self._closing:
            await asyncio.wait(set(self._closing), timeout=CLOSE_SECONDS + 2)
