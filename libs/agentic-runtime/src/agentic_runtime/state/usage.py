"""Recording usage off the request path: each turn's usage is summed in memory per (tenant, subject, key id,
model, minute) and sent to the state service in one batch a second. A batch that fails is kept and sent with the
next (up to `MAX_PENDING_GROUPS` groups); a process that dies loses at most its last second of usage."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from agentic.v1 import common_pb2, usage_pb2, usage_pb2_grpc
from agentic_core.errors import AgenticError
from agentic_core.usage.turn_usage import TurnUsage

from agentic_runtime.grpc.client import Peer
from agentic_runtime.state.periodic_flush import PeriodicFlush
from agentic_runtime.state.usage_metrics import UsageMetrics

log = logging.getLogger(__name__)

FLUSH_SECONDS = 1.0
MAX_PENDING_GROUPS = 100_000
_Key = tuple[str, str, str, str, int]


class UsageRecorder(PeriodicFlush):
    def __init__(self, peer: Peer, metrics: UsageMetrics | None = None, flush_seconds: float = FLUSH_SECONDS,
                 clock: Callable[[], float] = time.time) -> None:
        self.peer = peer
        self.stub = usage_pb2_grpc.UsageStub(peer.channel)
        self.metrics = metrics or UsageMetrics()
        self.flush_seconds = flush_seconds
        self.clock = clock
        self._pending: dict[_Key, usage_pb2.UsageEntry] = {}

    def record(self, principal: common_pb2.Principal, model: str, usage: TurnUsage) -> None:
        """Counts one turn (a few dictionary updates; the batch is sent later)."""
        self.metrics.count(principal.tenant, model, usage)
        now = int(self.clock())
        key = (principal.tenant, principal.subject, principal.key_id, model, now - now % 60)
        entry = self._pending.get(key)
        if entry is None:
            if len(self._pending) >= MAX_PENDING_GROUPS:
                log.warning("usage not recorded: %d groups already wait for the state service", len(self._pending))
                return
            entry = self._pending[key] = usage_pb2.UsageEntry(
                tenant=key[0], subject=key[1], key_id=key[2], model=model, start_time=key[4])
        entry.input_tokens += usage.input_tokens
        entry.cached_tokens += usage.cached_tokens
        entry.output_tokens += usage.output_tokens
        entry.reasoning_tokens += usage.reasoning_tokens
        entry.requests += usage.requests
        entry.tool_seconds += usage.tool_seconds
        for kind, calls in usage.tool_calls.items():
            entry.tool_calls[kind] += calls
        self._flush_soon()

    async def flush(self) -> None:
        """Sends what is pending; on failure keeps it for the next try."""
        if not self._pending:
            return
        batch, self._pending = self._pending, {}
        try:
            await self.peer.call(self.stub.Record, usage_pb2.UsageBatch(entries=batch.values()))
        except AgenticError as error:
            log.warning("recording usage failed, retrying with the next batch: %s", error.message)
            for key, entry in batch.items():
                if key in self._pending:
                    _add(entry, self._pending[key])
                self._pending[key] = entry



def _add(into: usage_pb2.UsageEntry, more: usage_pb2.UsageEntry) -> None:
    """`more`'s counts added to `into`'s (MergeFrom would overwrite them)."""
    for name in ("input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens", "requests", "tool_seconds"):
        setattr(into, name, getattr(into, name) + getattr(more, name))
    for kind, calls in more.tool_calls.items():
        into.tool_calls[kind] += calls
