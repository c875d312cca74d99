"""The audit recorder (agentic_runtime.state.audit) against the state service's Audit servicer on a real
PostgreSQL: batches bounded in bytes, a batch the state service refuses split until the record at fault is found
and only that one given up (never retried forever), a full buffer dropping visibly, and a record PostgreSQL
could not hold made storable."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from agentic.v1 import audit_pb2, audit_pb2_grpc, common_pb2
from agentic_core.errors import AgenticError
from agentic_runtime.grpc.client import Peer
from agentic_runtime.grpc.server import GrpcService
from agentic_runtime.state.audit import AuditBounds, AuditRecorder
from agentic_runtime.tls import transport_security
from agentic_state.audit import AuditServicer, AuditStore
from prometheus_client import REGISTRY

STATE_MAX_BATCH_BYTES = 4096


class CountingServicer(AuditServicer):
    """The state service's servicer, noting the size of every batch it is sent."""

    def __init__(self, store: AuditStore) -> None:
        super().__init__(store, STATE_MAX_BATCH_BYTES)
        self.batch_sizes: list[int] = []

    async def Append(self, request: audit_pb2.AuditBatch, context: Any) -> audit_pb2.AuditAppended:
        self.batch_sizes.append(request.ByteSize())
        return await super().Append(request, context)


@pytest.fixture()
async def state(pool) -> AsyncIterator[tuple[Peer, CountingServicer]]:
    servicer = CountingServicer(AuditStore(pool))
    service = GrpcService([], transport_security({}))
    service.add(lambda server: audit_pb2_grpc.add_AuditServicer_to_server(servicer, server))
    port = await service.start("127.0.0.1", 0)
    peer = Peer("state", f"127.0.0.1:{port}", 5.0, transport_security({}))
    yield peer, servicer
    await peer.close()
    await service.drain(0)


def principal() -> common_pb2.Principal:
    return common_pb2.Principal(tenant=f"t-{secrets.token_hex(4)}", subject="s", key_id="k")


async def stored(pool, tenant: str) -> list[dict[str, Any]]:
    rows = await pool.fetch("SELECT details::text AS details FROM audit_log WHERE tenant = $1 ORDER BY id", tenant)
    return [orjson.loads(row["details"]) for row in rows]


def dropped(reason: str) -> float:
    return REGISTRY.get_sample_value("agentic_audit_records_dropped_total", {"reason": reason}) or 0.0


async def test_batches_are_bounded_in_bytes(pool, state) -> None:
    peer, servicer = state
    recorder, caller = AuditRecorder(peer, AuditBounds(max_batch_bytes=STATE_MAX_BATCH_BYTES)), principal()
    for index in range(100):
        recorder.record("api.request", caller, {"route": "/v1/responses/{response_id}", "response_id": f"resp_{index:040d}"})
    await asyncio.wait_for(recorder.close(), 10)
    assert len(await stored(pool, caller.tenant)) == 100
    assert len(servicer.batch_sizes) > 1 and max(servicer.batch_sizes) <= STATE_MAX_BATCH_BYTES


async def test_a_batch_the_state_service_refuses_as_too_large_is_split_not_retried_forever(pool, state) -> None:
    peer, servicer = state
    recorder, caller = AuditRecorder(peer, AuditBounds(max_batch_bytes=1024 * 1024)), principal()
    for index in range(200):
        recorder.record("api.request", caller, {"response_id": f"resp_{index:040d}"})
    await asyncio.wait_for(recorder.flush(), 10)
    assert [details["response_id"] for details in await stored(pool, caller.tenant)] == \
        [f"resp_{index:040d}" for index in range(200)]
    assert servicer.batch_sizes[0] > STATE_MAX_BATCH_BYTES  # refused, then halved until the halves fit


async def test_a_record_the_state_service_refuses_alone_is_the_only_one_given_up(pool, state) -> None:
    peer, _ = state
    recorder, caller = AuditRecorder(peer, AuditBounds(max_batch_bytes=1024 * 1024)), principal()
    before = dropped("refused")
    recorder.record("response.turn", caller, {"n": 1})
    recorder.record("response.turn", caller, {"n": 2, "tools": ["t" * 64] * 100})  # 6.5 kB: over the state's bound
    recorder.record("response.turn", caller, {"n": 3})
    await asyncio.wait_for(recorder.flush(), 10)
    assert [details["n"] for details in await stored(pool, caller.tenant)] == [1, 3]
    assert dropped("refused") == before + 1
    await asyncio.wait_for(recorder.flush(), 10)  # nothing is left to retry
    assert recorder._pending == []


async def test_text_postgresql_cannot_hold_is_stored_replaced(pool, state) -> None:
    """A client's path parameter or model may carry U+0000, which PostgreSQL's text refuses: the batch would fail
    on every try and hold back every record behind it."""
    peer, _ = state
    recorder, caller = AuditRecorder(peer), principal()
    recorder.record("api.request", caller, {"response_id": "resp_a\x00b", "model": "m\x00"})
    recorder.record("api.request", caller, {"response_id": "resp_next"})
    await asyncio.wait_for(recorder.flush(), 10)
    assert await stored(pool, caller.tenant) == [{"response_id": "resp_a\ufffdb", "model": "m\ufffd"},
                                                 {"response_id": "resp_next"}]


async def test_the_state_service_refuses_a_record_it_cannot_store_as_invalid(state) -> None:
    peer, _ = state
    record = audit_pb2.AuditRecord(id="audit_0000000000000000deadbeef", type="api.request", principal=principal(),
                                   details=b'{"response_id": "resp_\\u0000"}')
    with pytest.raises(AgenticError) as refused:
        await peer.call(audit_pb2_grpc.AuditStub(peer.channel).Append, audit_pb2.AuditBatch(records=[record]))
    assert refused.value.http_status == 400


async def test_records_wait_while_the_state_service_is_away() -> None:
    peer = Peer("state", "127.0.0.1:9", 2.0, transport_security({}))  # nothing listens there
    recorder = AuditRecorder(peer)
    before = dropped("refused") + dropped("buffer_full")
    recorder.record("api.request", principal(), {"status": 200})
    await asyncio.wait_for(recorder.flush(), 10)
    assert len(recorder._pending) == 1 and dropped("refused") + dropped("buffer_full") == before
    await peer.close()


async def test_a_full_buffer_drops_new_records_counted_and_warned_once_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    peer = Peer("state", "127.0.0.1:9", 2.0, transport_security({}))
    recorder, caller = AuditRecorder(peer, AuditBounds(max_pending_records=3)), principal()
    before = dropped("buffer_full")
    with caplog.at_level(logging.WARNING, logger="agentic_runtime.state.audit"):
        for index in range(10):
            recorder.record("api.request", caller, {"n": index})
    assert [orjson.loads(record.details)["n"] for record in recorder._pending] == [0, 1, 2]
    assert dropped("buffer_full") == before + 7
    warnings = [record for record in caplog.records if "dropped" in record.getMessage()]
    assert len(warnings) == 1
    recorder._pending.clear()
    await peer.close()


async def test_a_record_over_the_batch_bound_is_dropped_as_too_large() -> None:
    peer = Peer("state", "127.0.0.1:9", 2.0, transport_security({}))
    recorder = AuditRecorder(peer, AuditBounds(max_batch_bytes=2048))
    before = dropped("too_large")
    recorder.record("response.turn", principal(), {"tools": ["t" * 100] * 30})
    assert recorder._pending == [] and dropped("too_large") == before + 1
    await peer.close()
