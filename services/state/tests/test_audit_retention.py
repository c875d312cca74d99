"""The audit trail and retention on a real PostgreSQL: batches appended once, filtered pages both ways; a purge
that deletes what is old in batches, keeps a chain's history while a later turn needs it, and runs on one
replica at a time."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta

import orjson
import pytest
from agentic.v1 import audit_pb2, common_pb2
from agentic_core.errors import NotFound
from agentic_state.audit import AuditStore
from agentic_state.conversations import ConversationStore
from agentic_state.retention import _PURGE_LOCK_KEY, Retention, purge
from agentic_state.store import StateStore, TurnRecord

NOW = datetime.now(UTC)


def _record(tenant: str, kind: str, at: datetime, **details: object) -> audit_pb2.AuditRecord:
    micros = int(at.timestamp() * 1_000_000)
    return audit_pb2.AuditRecord(id=f"audit_{micros:016x}{secrets.token_hex(4)}", type=kind,
                                 principal=common_pb2.Principal(tenant=tenant, subject="s", key_id="k"),
                                 details=orjson.dumps(details))


async def test_audit_pages_filter_and_cursor_both_ways(pool) -> None:
    store, tenant, other = AuditStore(pool), f"t-{secrets.token_hex(4)}", f"t-{secrets.token_hex(4)}"
    records = [_record(tenant, "api.request" if i % 2 else "response.turn", NOW - timedelta(minutes=10 - i),
                       response_id=f"resp_{i}") for i in range(6)]
    await store.append(records)
    await store.append(records[:2] + [_record(other, "api.request", NOW)])  # a retried batch adds nothing twice
    newest_first = [record.id for record in reversed(records)]

    page = await store.list(audit_pb2.AuditQuery(tenants=[tenant], limit=4))
    assert [record.id for record in page.records] == newest_first[:4] and page.has_more
    assert page.effective_at[0] == int(records[-1].id[6:22], 16) // 1_000_000
    rest = await store.list(audit_pb2.AuditQuery(tenants=[tenant], limit=4, after=page.records[-1].id))
    assert [record.id for record in rest.records] == newest_first[4:] and not rest.has_more
    back = await store.list(audit_pb2.AuditQuery(tenants=[tenant], limit=2, before=rest.records[0].id))
    assert [record.id for record in back.records] == newest_first[2:4] and back.has_more

    turns = await store.list(audit_pb2.AuditQuery(tenants=[tenant], types=["response.turn"]))
    assert [orjson.loads(record.details)["response_id"] for record in turns.records] == ["resp_4", "resp_2", "resp_0"]
    since = int((NOW - timedelta(minutes=7, seconds=30)).timestamp())
    recent = await store.list(audit_pb2.AuditQuery(tenants=[tenant], gte=since))
    assert len(recent.records) == 3
    one = await store.list(audit_pb2.AuditQuery(resource_ids=["resp_3"], tenants=[tenant]))
    assert [record.principal.tenant for record in one.records] == [tenant]
    both = await store.list(audit_pb2.AuditQuery(tenants=[tenant, other], limit=100))
    assert len(both.records) == 7


def _turn(tenant: str, response_id: str, previous: str | None, text: str) -> TurnRecord:
    item = orjson.dumps({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}).decode()
    return TurnRecord(tenant=tenant, response_id=response_id, previous_response_id=previous, model="m",
                      status="completed", response=orjson.dumps({"id": response_id}).decode(),
                      input_items=[(f"msg_{secrets.token_hex(6)}", item)], output_items=[])


async def _age(pool, table: str, column: str, days: float, where: str, *arguments: object) -> None:
    await pool.execute(f"UPDATE {table} SET {column} = {column} - make_interval(days => {days}) WHERE {where}", *arguments)


async def test_purge_expires_old_rows_and_keeps_a_chains_history(pool) -> None:
    tenant = f"t-{secrets.token_hex(4)}"
    store, conversations = StateStore(pool, max_chain_depth=50), ConversationStore(pool)
    for response_id, previous in (("resp_a", None), ("resp_b", "resp_a"), ("resp_c", "resp_b")):
        await store.persist_turn(_turn(tenant, response_id, previous, response_id))
    await _age(pool, "responses", "created_at", 10, "tenant = $1 AND id <> 'resp_c'", tenant)
    await conversations.create(tenant, "conv_old", "{}", [("msg_1", '{"type":"message"}')])
    await conversations.create(tenant, "conv_new", "{}", [("msg_2", '{"type":"message"}')])
    await _age(pool, "conversations", "created_at", 10, "tenant = $1", tenant)
    await _age(pool, "conversation_items", "created_at", 10, "tenant = $1 AND conversation_id = 'conv_old'", tenant)
    await AuditStore(pool).append([_record(tenant, "api.request", NOW - timedelta(days=40)),
                                   _record(tenant, "api.request", NOW)])
    await pool.execute("INSERT INTO usage (minute, tenant, key_id, subject, model) VALUES ($1, $2, 'k', 's', 'm'),"
                       " ($3, $2, 'k', 's', 'm')", NOW - timedelta(days=100), tenant, NOW)

    retention = Retention(response_days=5, conversation_days=5, audit_days=30, usage_days=90, batch_size=1)
    deleted = await purge(pool, retention)
    assert deleted is not None and deleted["responses"] >= 2 and deleted["conversations"] >= 1
    for gone in ("resp_a", "resp_b"):
        with pytest.raises(NotFound):
            await store.get_response(tenant, gone)
    # Deleted as DELETE deletes: the later turn still sees the whole chain.
    history = [orjson.loads(item)["content"][0]["text"] for item in (await store.rehydrate(tenant, "resp_c")).items]
    assert history == ["resp_a", "resp_b", "resp_c"]
    assert await pool.fetchval("SELECT count(*) FROM responses WHERE tenant = $1", tenant) == 3
    assert [row["id"] for row in await pool.fetch("SELECT id FROM conversations WHERE tenant = $1", tenant)] == ["conv_new"]
    assert await pool.fetchval("SELECT count(*) FROM audit_log WHERE tenant = $1", tenant) == 1
    assert await pool.fetchval("SELECT count(*) FROM usage WHERE tenant = $1", tenant) == 1

    # Once the last turn expires too, nobody needs the chain: rows and items go, from its end.
    await _age(pool, "responses", "created_at", 10, "tenant = $1 AND id = 'resp_c'", tenant)
    await purge(pool, retention)
    assert await pool.fetchval("SELECT count(*) FROM responses WHERE tenant = $1", tenant) == 0
    assert await pool.fetchval("SELECT count(*) FROM response_items WHERE tenant = $1", tenant) == 0


async def test_purge_runs_on_one_replica_at_a_time(pool) -> None:
    async with pool.acquire() as holder:
        await holder.execute("SELECT pg_advisory_lock($1)", _PURGE_LOCK_KEY)
        try:
            assert await purge(pool, Retention(audit_days=30)) is None
        finally:
            await holder.execute("SELECT pg_advisory_unlock($1)", _PURGE_LOCK_KEY)
    assert await purge(pool, Retention(audit_days=30)) is not None
