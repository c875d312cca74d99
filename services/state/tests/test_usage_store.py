"""The usage table on a real PostgreSQL: batches upserted and summed, buckets grouped and filtered."""

from __future__ import annotations

import secrets

import pytest
from agentic.v1 import usage_pb2
from agentic_state.usage_store import UsageStore

DAY = 86400
T0 = 1_700_000_000 - 1_700_000_000 % DAY  # a UTC midnight


def _entry(tenant: str, model: str, minute: int, tokens: int, key_id: str = "k1", **tools: int) -> usage_pb2.UsageEntry:
    return usage_pb2.UsageEntry(tenant=tenant, subject="s", key_id=key_id, model=model, start_time=minute,
                                input_tokens=tokens, cached_tokens=1, output_tokens=2 * tokens, reasoning_tokens=1,
                                requests=1, tool_calls=tools, tool_seconds=0.5 if tools else 0.0)


async def test_batches_add_up_and_group_by_bucket_tenant_and_model(pool) -> None:
    store, tenant, other = UsageStore(pool), f"t-{secrets.token_hex(4)}", f"t-{secrets.token_hex(4)}"
    # The same key twice in one batch, again in a second batch, and in another day.
    await store.record([_entry(tenant, "m1", T0 + 60, 10, web_search=1), _entry(tenant, "m1", T0 + 75, 5, web_search=2)])
    await store.record([_entry(tenant, "m1", T0 + 60, 1, operator=1), _entry(tenant, "m2", T0 + 3600, 7, key_id="k2"),
                        _entry(other, "m1", T0 + 60, 100), _entry(tenant, "m1", T0 + DAY + 5, 3)])
    rows = await store.query(usage_pb2.UsageQuery(start_time=T0, end_time=T0 + 2 * DAY, bucket_seconds=DAY,
                                                  by_model=True, tenants=[tenant]))
    summary = [(row.start_time, row.tenant, row.model, row.input_tokens, row.output_tokens, row.requests) for row in rows]
    assert summary == [(T0, "", "m1", 16, 32, 3), (T0, "", "m2", 7, 14, 1), (T0 + DAY, "", "m1", 3, 6, 1)]
    assert dict(rows[0].tool_calls) == {"web_search": 3, "operator": 1} and rows[0].tool_seconds == pytest.approx(1.5)
    assert rows[0].cached_tokens == 3 and rows[0].reasoning_tokens == 3

    by_key = await store.query(usage_pb2.UsageQuery(start_time=T0, end_time=T0 + DAY, bucket_seconds=3600,
                                                    by_tenant=True, by_key_id=True, tenants=[tenant, other]))
    assert sorted((row.start_time - T0, row.tenant == tenant, row.key_id, row.input_tokens) for row in by_key) == [
        (0, False, "k1", 100), (0, True, "k1", 16), (3600, True, "k2", 7)]
    only_m2 = await store.query(usage_pb2.UsageQuery(start_time=T0, end_time=T0 + DAY, bucket_seconds=60,
                                                     models=["m2"], tenants=[tenant]))
    assert [(row.start_time, row.input_tokens) for row in only_m2] == [(T0 + 3600, 7)]
