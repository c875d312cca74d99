"""Recording audit records off the request path: `record` appends to a list; a task sends the list to the
state service once a second. A batch that fails is kept for the next try (records have ids, so a batch that
did arrive is not stored twice), up to `MAX_PENDING` records; a process that dies loses at most its last second.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

import orjson
from agentic.v1 import audit_pb2, audit_pb2_grpc, common_pb2
from agentic_core.errors import AgenticError

from agentic_runtime.grpc_client import Peer
from agentic_runtime.periodic_flush import PeriodicFlush

log = logging.getLogger(__name__)

FLUSH_SECONDS = 1.0
MAX_PENDING = 100_000
MAX_BATCH = 1_000


def record_id() -> str:
    """`audit_` + 16 hex digits of the Unix time in microseconds + 8 random: ids sort by time across processes."""
    return f"audit_{time.time_ns() // 1000:016x}{os.urandom(4).hex()}"


class AuditRecorder(PeriodicFlush):
    def __init__(self, peer: Peer, flush_seconds: float = FLUSH_SECONDS) -> None:
        self.peer = peer
        self.stub = audit_pb2_grpc.AuditStub(peer.channel)
        self.flush_seconds = flush_seconds
        self._pending: list[tuple[str, str, common_pb2.Principal, dict[str, Any]]] = []

    def record(self, kind: str, principal: common_pb2.Principal, details: dict[str, Any]) -> None:
        """Keeps one record (a list append; it is encoded and sent later)."""
        if len(self._pending) >= MAX_PENDING:
            log.warning("audit record dropped: %d records already wait for the state service", len(self._pending))
            return
        self._pending.append((record_id(), kind, principal, details))
        self._flush_soon()

    async def flush(self) -> None:
        """Sends what is pending, in batches; on failure keeps the rest for the next try."""
        while self._pending:
            batch = self._pending[:MAX_BATCH]
            records = [audit_pb2.AuditRecord(id=record_id, type=kind, principal=principal, details=orjson.dumps(details))
                       for record_id, kind, principal, details in batch]
            try:
                await self.peer.call(self.stub.Append, audit_pb2.AuditBatch(records=records))
            except AgenticError as error:
                log.warning("recording the audit trail failed, retrying: %s", error.message)
                return
            del self._pending[:len(batch)]

