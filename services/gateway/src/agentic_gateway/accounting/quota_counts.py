"""Per-tenant counters shared by every gateway replica through a NATS JetStream key-value bucket.

Each replica counts locally and writes only its own keys (`<counter>.<replica>`), soon after a change and again
every `REFRESH_SECONDS`; it watches the others' keys. A check reads memory only: its own count plus the others'
last values. So a check costs no round trip, and the replicas agree within the time a write takes to reach
the others (about a millisecond on one network): requests admitted at the same moment by different replicas may
pass a limit by at most one per replica. A replica that dies stops refreshing its keys; the others ignore them
after `STALE_SECONDS`. With NATS unreachable each replica goes on with what it knows (its own counts).

Background turns are counted where they wait and run: `BackgroundHolds` reads each tenant's messages on the
executors' `BACKGROUND` work queue (agentic_runtime/nats/background_queue.py) every `BACKGROUND_SYNC_SECONDS`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable

from agentic_runtime.nats import broker
from agentic_runtime.nats.background_queue import turns_per_subject, turns_per_tenant
from nats.aio.client import Client
from nats.js.kv import KeyValue

log = logging.getLogger(__name__)

BUCKET = "GATEWAY_QUOTAS"
REFRESH_SECONDS = 5.0
STALE_SECONDS = 3 * REFRESH_SECONDS  # also the bucket's age limit: a dead replica's keys go by themselves
BACKGROUND_SYNC_SECONDS = 1.0


class SharedCounts:
    def __init__(self, kv: KeyValue | None, replica: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.kv = kv
        self.replica = replica or uuid.uuid4().hex[:16]
        self.clock = clock
        self._own: dict[str, int] = {}
        self._others: dict[str, dict[str, tuple[int, float]]] = {}  # counter → replica → (count, seen at)
        self._dirty: set[str] = set()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    @classmethod
    async def connect(cls, client: Client) -> SharedCounts:
        kv = await broker.ensure_key_value(client, BUCKET, ttl_seconds=STALE_SECONDS, in_memory=True)
        counts = cls(kv)
        watcher = await kv.watchall()
        loop = asyncio.get_running_loop()
        counts._tasks = [loop.create_task(counts._watch(watcher)), loop.create_task(counts._write())]
        return counts

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def total(self, counter: str) -> int:
        """This replica's count plus the others' latest, fresh ones."""
        total = self._own.get(counter, 0)
        others = self._others.get(counter)
        if others:
            fresh_after = self.clock() - STALE_SECONDS
            total += sum(count for count, seen in others.values() if seen >= fresh_after)
        return total

    def add(self, counter: str, delta: int) -> None:
        self._own[counter] = self._own.get(counter, 0) + delta
        self._dirty.add(counter)
        self._wake.set()

    def forget(self, keep: Callable[[str], bool]) -> None:
        """Drops the counters `keep` refuses (e.g. past minutes), ours and the others'."""
        for counter in [counter for counter in self._own if not keep(counter)]:
            del self._own[counter]
            self._dirty.discard(counter)
        for counter in [counter for counter in self._others if not keep(counter)]:
            del self._others[counter]

    async def _watch(self, watcher: KeyValue.KeyWatcher) -> None:
        async for entry in watcher:
            if entry is None or not entry.key:
                continue
            counter, _, replica = entry.key.rpartition(".")
            if replica == self.replica or not counter:
                continue
            try:
                count = int(entry.value or b"0") if entry.operation is None else 0
            except ValueError:
                continue
            self._others.setdefault(counter, {})[replica] = (count, self.clock())

    async def _write(self) -> None:
        """Writes changed counters at once (coalesced), and every counter again each `REFRESH_SECONDS`."""
        assert self.kv is not None
        next_refresh = self.clock() + REFRESH_SECONDS
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(0.0, next_refresh - self.clock()))
            self._wake.clear()
            if self.clock() >= next_refresh:
                counters, next_refresh = set(self._own), self.clock() + REFRESH_SECONDS
            else:
                counters = self._dirty
            self._dirty = set()
            for counter in counters:
                count = self._own.get(counter)
                if count is None:
                    continue
                try:
                    await self.kv.put(f"{counter}.{self.replica}", str(count).encode())
                except Exception as error:  # NATS down, slow or reconnecting
                    log.warning("sharing quota counts failed (each replica counts alone meanwhile): %r", error)
                    self._dirty |= counters
                    await asyncio.sleep(1.0)
                    break


class BackgroundHolds:
    """Each tenant's background turns not yet ended (queued or running), by tenant token: the messages of its
    subject on the `BACKGROUND` work queue, read every `sync_seconds`. A turn's message stays there until the
    turn has ended (a lost executor's until the next one has failed it, about a lease later), so every gateway
    counts it, however many there are, and no count outlives its turn.

    The gateway that queued a turn keeps its own slot until its next reading, one that started after the turn
    was queued (`hand_over`), so its count has no gap; other replicas count it from their next reading."""

    def __init__(self, client: Client | None, sync_seconds: float = BACKGROUND_SYNC_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client, self.sync_seconds, self.clock = client, sync_seconds, clock
        self.held: dict[str, int] = {}
        self._handed: list[Callable[[], None]] = []
        self._read_at = clock()
        self._task: asyncio.Task[None] | None = None

    def of(self, token: str) -> int:
        return self.held.get(token, 0)

    def hand_over(self, release: Callable[[], None]) -> None:
        """`release` (a slot's) is called after the next reading that started after now."""
        self._handed.append(release)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._sync_forever())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._release_handed(self._handed)

    async def sync(self) -> None:
        handed, self._handed = self._handed, []
        assert self.client is not None
        try:
            self.held = turns_per_tenant(await turns_per_subject(self.client))
            self._read_at = self.clock()
        except Exception as error:  # NATS slow or reconnecting: the last figures, for a while
            if self.clock() - self._read_at < STALE_SECONDS:
                log.warning("reading queued background turns failed, keeping the last figures: %r", error)
                self._handed = handed + self._handed
                return
            log.warning("reading queued background turns failed; counting them from the next reading: %r", error)
            self.held = {}
        self._release_handed(handed)

    @staticmethod
    def _release_handed(handed: list[Callable[[], None]]) -> None:
        for release in handed:
            release()
        handed.clear()

    async def _sync_forever(self) -> None:
        while True:
            await self.sync()
            await asyncio.sleep(self.sync_seconds)
