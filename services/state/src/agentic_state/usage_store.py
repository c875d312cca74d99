"""The usage table: batches of per-minute sums upserted in one statement, and bucketed sums read back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg
import orjson
from agentic.v1 import usage_pb2

# Batches are summed per key first: one statement may not update a row twice.
_UPSERT_SQL = """
INSERT INTO usage (minute, tenant, key_id, subject, model, input_tokens, cached_tokens, output_tokens,
                   reasoning_tokens, requests, tool_calls, tool_seconds)
SELECT to_timestamp(m), t, k, s, mo, i, c, o, r, q, tc::jsonb, ts
  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[],
              $8::bigint[], $9::bigint[], $10::bigint[], $11::text[], $12::float8[])
       AS batch (m, t, k, s, mo, i, c, o, r, q, tc, ts)
ON CONFLICT (minute, tenant, key_id, subject, model) DO UPDATE SET
    input_tokens = usage.input_tokens + EXCLUDED.input_tokens,
    cached_tokens = usage.cached_tokens + EXCLUDED.cached_tokens,
    output_tokens = usage.output_tokens + EXCLUDED.output_tokens,
    reasoning_tokens = usage.reasoning_tokens + EXCLUDED.reasoning_tokens,
    requests = usage.requests + EXCLUDED.requests,
    tool_calls = usage_add_counts(usage.tool_calls, EXCLUDED.tool_calls),
    tool_seconds = usage.tool_seconds + EXCLUDED.tool_seconds
"""

# $1/$2: the time range; $3: bucket seconds (buckets aligned to multiples of it); $4–$6: group by tenant, model,
# key id; $7–$9: filters (NULL: all).
_QUERY_SQL = """
SELECT (extract(epoch FROM minute)::bigint / $3) * $3 AS bucket,
       CASE WHEN $4 THEN tenant ELSE '' END AS tenant,
       CASE WHEN $5 THEN model ELSE '' END AS model,
       CASE WHEN $6 THEN key_id ELSE '' END AS key_id,
       sum(input_tokens)::bigint AS input_tokens, sum(cached_tokens)::bigint AS cached_tokens,
       sum(output_tokens)::bigint AS output_tokens, sum(reasoning_tokens)::bigint AS reasoning_tokens,
       sum(requests)::bigint AS requests, sum(tool_seconds) AS tool_seconds,
       jsonb_agg(tool_calls) FILTER (WHERE tool_calls <> '{}') AS tool_calls
  FROM usage
 WHERE minute >= to_timestamp($1) AND minute < to_timestamp($2)
   AND ($7::text[] IS NULL OR tenant = ANY($7))
   AND ($8::text[] IS NULL OR model = ANY($8))
   AND ($9::text[] IS NULL OR key_id = ANY($9))
 GROUP BY 1, 2, 3, 4
 ORDER BY 1, 2, 3, 4
"""

_Key = tuple[int, str, str, str, str]


def _summed(entries: Sequence[usage_pb2.UsageEntry]) -> dict[_Key, list[Any]]:
    rows: dict[_Key, list[Any]] = {}
    for entry in entries:
        key = (entry.start_time - entry.start_time % 60, entry.tenant, entry.key_id, entry.subject, entry.model)
        row = rows.setdefault(key, [0, 0, 0, 0, 0, {}, 0.0])
        for index, value in enumerate((entry.input_tokens, entry.cached_tokens, entry.output_tokens,
                                       entry.reasoning_tokens, entry.requests)):
            row[index] += value
        for kind, calls in entry.tool_calls.items():
            row[5][kind] = row[5].get(kind, 0) + calls
        row[6] += entry.tool_seconds
    return rows


class UsageStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def record(self, entries: Sequence[usage_pb2.UsageEntry]) -> None:
        rows = _summed(entries)
        if not rows:
            return
        keys, sums = list(rows), list(rows.values())
        columns: list[list[Any]] = [[key[index] for key in keys] for index in range(5)]
        columns += [[row[index] for row in sums] for index in range(5)]
        columns.append([orjson.dumps(row[5]).decode() for row in sums])
        columns.append([row[6] for row in sums])
        await self.pool.execute(_UPSERT_SQL, *columns)

    async def query(self, query: usage_pb2.UsageQuery) -> list[usage_pb2.UsageEntry]:
        records = await self.pool.fetch(
            _QUERY_SQL, query.start_time, query.end_time, max(60, query.bucket_seconds),
            query.by_tenant, query.by_model, query.by_key_id,
            list(query.tenants) or None, list(query.models) or None, list(query.key_ids) or None,
        )
        return [_entry(record) for record in records]


def _entry(record: asyncpg.Record) -> usage_pb2.UsageEntry:
    tool_calls: dict[str, int] = {}
    for counts in orjson.loads(record["tool_calls"]) if record["tool_calls"] else []:
        for kind, calls in counts.items():
            tool_calls[kind] = tool_calls.get(kind, 0) + int(calls)
    return usage_pb2.UsageEntry(
        start_time=record["bucket"], tenant=record["tenant"], model=record["model"], key_id=record["key_id"],
        input_tokens=record["input_tokens"], cached_tokens=record["cached_tokens"],
        output_tokens=record["output_tokens"], reasoning_tokens=record["reasoning_tokens"],
        requests=record["requests"], tool_seconds=record["tool_seconds"], tool_calls=tool_calls,
    )
