"""Recording audit records off the request path: `record` encodes one record and appends it; a task sends what is
pending to the state service once a second, in batches bounded in records and bytes. A batch that fails is kept for
the next try (records have ids, so a batch that did arrive is not stored twice); a batch the state service refuses
(too large, or a record it cannot store) is halved until the record at fault is found, and that record alone is
given up. The buffer is bounded in records and bytes: past it new records are dropped, counted in
`agentic_audit_records_dropped_total` and logged at most once a minute. A process that dies loses at most its last
second."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from agentic.v1 import audit_pb2, audit_pb2_grpc, common_pb2
from agentic_core.errors import AgenticError
from prometheus_client import Counter, Gauge
from pydantic import Field
from pydantic_settings import BaseSettings

from agentic_runtime.grpc.client import Peer
from agentic_runtime.state.periodic_flush import PeriodicFlush

log = logging.getLogger(__name__)

FLUSH_SECONDS = 1.0
MAX_BATCH_RECORDS = 1_000
WARNING_SECONDS = 60.0  # the least time between two warnings of one kind

DROPPED = Counter(
    "agentic_audit_records_dropped_total",
    "Audit records given up: `buffer_full` (the state service fell behind and the pending buffer was full), "
    "`too_large` (one record over the batch bound), `refused` (a record the state service would not store).",
    ["reason"],
)
PENDING = Gauge("agentic_audit_records_pending", "Audit records waiting to be sent to the state service.")


class AuditSettings(BaseSettings):
    """The recorder's bounds (a mixin of a service's settings: env vars `AGENTIC_<SERVICE>_AUDIT_*`)."""

    audit_max_pending_records: int = Field(
        default=100_000, ge=1,
        description="Audit records kept while the state service is slow or away; past it new records are dropped "
                    "(counted in `agentic_audit_records_dropped_total{reason=\"buffer_full\"}`, logged once a minute).",
    )
    audit_max_pending_bytes: int = Field(
        default=64 * 1024 * 1024, ge=1024,
        description="Bytes of audit records kept while the state service is slow or away; past it new records are dropped.",
    )
    audit_max_batch_bytes: int = Field(
        default=1024 * 1024, ge=1024,
        description="Largest batch of audit records sent to the state service at once (at most 1000 records); a "
                    "single record over it is dropped (`reason=\"too_large\"`).",
    )


@dataclass(frozen=True, slots=True)
class AuditBounds:
    max_pending_records: int = 100_000
    max_pending_bytes: int = 64 * 1024 * 1024
    max_batch_records: int = MAX_BATCH_RECORDS
    max_batch_bytes: int = 1024 * 1024

    @classmethod
    def of(cls, settings: AuditSettings) -> AuditBounds:
        return cls(max_pending_records=settings.audit_max_pending_records,
                   max_pending_bytes=settings.audit_max_pending_bytes, max_batch_bytes=settings.audit_max_batch_bytes)


def record_id() -> str:
    """`audit_` + 16 hex digits of the Unix time in microseconds + 8 random: ids sort by time across processes."""
    return f"audit_{time.time_ns() // 1000:016x}{os.urandom(4).hex()}"


def _without_nul(value: Any) -> Any:
    """PostgreSQL's text cannot hold U+0000: a record carrying one (a client's path or model) would fail its batch."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_without_nul(key): _without_nul(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_nul(item) for item in value]
    return value


def _details_json(details: dict[str, Any]) -> bytes:
    encoded = orjson.dumps(details)
    return orjson.dumps(_without_nul(details)) if b"\\u0000" in encoded else encoded


def _size_in_batch(record: audit_pb2.AuditRecord) -> int:
    """The bytes a record adds to an `AuditBatch`: its own, its field tag and its length."""
    size = record.ByteSize()
    return 1 + (size.bit_length() + 6) // 7 + size


def _refused(error: AgenticError) -> bool:
    """The state service will never take this batch as it is (too large, or a record it cannot store); a 5xx,
    an unreachable or late service, may pass on a later try."""
    return error.http_status in (400, 413)


class _Warnings:
    """A warning of one kind at most every `WARNING_SECONDS`, naming how many occurred since the last."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self._last: dict[str, float] = {}
        self._since: dict[str, int] = {}

    def warn(self, kind: str, message: str, *args: object) -> None:
        self._since[kind] = self._since.get(kind, 0) + 1
        now = self.clock()
        last = self._last.get(kind)
        if last is not None and now - last < WARNING_SECONDS:
            return
        log.warning(message + " (%d time(s) since the last warning)", *args, self._since.pop(kind))
        self._last[kind] = now


class AuditRecorder(PeriodicFlush):
    def __init__(self, peer: Peer, bounds: AuditBounds | None = None, flush_seconds: float = FLUSH_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.peer = peer
        self.stub = audit_pb2_grpc.AuditStub(peer.channel)
        self.bounds = bounds or AuditBounds()
        self.flush_seconds = flush_seconds
        self._pending: list[audit_pb2.AuditRecord] = []
        self._pending_bytes = 0
        self._warnings = _Warnings(clock)

    def record(self, kind: str, principal: common_pb2.Principal, details: dict[str, Any]) -> None:
        """Keeps one record (encoded now, so that its size is known; sent later)."""
        record = audit_pb2.AuditRecord(id=record_id(), type=kind, principal=principal, details=_details_json(details))
        size = _size_in_batch(record)
        if size > self.bounds.max_batch_bytes:
            self._drop("too_large", "audit record dropped: %d bytes, over the batch bound of %d", size,
                       self.bounds.max_batch_bytes)
            return
        if (len(self._pending) >= self.bounds.max_pending_records
                or self._pending_bytes + size > self.bounds.max_pending_bytes):
            self._drop("buffer_full", "audit records dropped: %d records (%d bytes) already wait for the state service",
                       len(self._pending), self._pending_bytes)
            return
        self._pending.append(record)
        self._pending_bytes += size
        PENDING.set(len(self._pending))
        self._flush_soon()

    def _drop(self, reason: str, message: str, *args: object) -> None:
        DROPPED.labels(reason=reason).inc()
        self._warnings.warn(reason, message, *args)

    def _take_batch(self) -> list[audit_pb2.AuditRecord]:
        """The oldest records that fit one batch (always at least one), taken off the buffer."""
        count = size = 0
        for record in self._pending[:self.bounds.max_batch_records]:
            size += _size_in_batch(record)
            if count and size > self.bounds.max_batch_bytes:
                break
            count += 1
        batch = self._pending[:count]
        del self._pending[:count]
        self._pending_bytes -= sum(_size_in_batch(record) for record in batch)
        return batch

    def _put_back(self, records: list[audit_pb2.AuditRecord]) -> None:
        self._pending[:0] = records
        self._pending_bytes += sum(_size_in_batch(record) for record in records)

    async def flush(self) -> None:
        """Sends what is pending, in batches; on a failure that may pass, keeps the rest for the next try."""
        try:
            while self._pending:
                unsent = await self._send(self._take_batch())
                if unsent:
                    self._put_back(unsent)
                    return
        finally:
            PENDING.set(len(self._pending))

    async def _send(self, batch: list[audit_pb2.AuditRecord]) -> list[audit_pb2.AuditRecord]:
        """Sends `batch`, halving it while the state service refuses it; returns what is left to send after a
        failure that may pass (empty: everything sent, or given up)."""
        try:
            await self.peer.call(self.stub.Append, audit_pb2.AuditBatch(records=batch))
            return []
        except AgenticError as error:
            if not _refused(error):
                self._warnings.warn("retry", "recording the audit trail failed, retrying: %s", error.message)
                return batch
            if len(batch) == 1:
                self._drop("refused", "audit record dropped: the state service refused it (%d bytes): %s",
                           batch[0].ByteSize(), error.message)
                return []
        half = len(batch) // 2
        unsent = await self._send(batch[:half])
        if unsent:
            return unsent + batch[half:]
        return await self._send(batch[half:])
