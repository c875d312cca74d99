"""The audit trail: records appended in batches (idempotently, by id) and read back newest first."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TypeAlias

import asyncpg
import grpc
from agentic.v1 import audit_pb2, audit_pb2_grpc, common_pb2
from agentic_core.errors import InvalidRequest, PayloadTooLarge

_Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"
MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20

# A retried batch inserts nothing twice. The resource is the response or conversation a record is about.
_APPEND_SQL = """
INSERT INTO audit_log (id, effective_at, type, tenant, subject, key_id, admin, resource_id, details)
SELECT t.id, t.effective_at, t.type, t.tenant, t.subject, t.key_id, t.admin,
       coalesce(t.details->>'response_id', t.details->>'conversation_id'), t.details
  FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[], $8::json[])
       AS t (id, effective_at, type, tenant, subject, key_id, admin, details)
ON CONFLICT (id) DO NOTHING
"""

# Newest first; `before` reads the other way (then reversed), so either cursor pages from where it points.
_LIST_SQL = """
SELECT id, type, tenant, subject, key_id, admin, details::text AS details,
       floor(extract(epoch FROM effective_at))::bigint AS effective_at
  FROM audit_log
 WHERE (cardinality($1::text[]) = 0 OR tenant = ANY($1)) AND (cardinality($2::text[]) = 0 OR type = ANY($2))
   AND (cardinality($3::text[]) = 0 OR resource_id = ANY($3))
   AND ($4::timestamptz IS NULL OR effective_at > $4) AND ($5::timestamptz IS NULL OR effective_at >= $5)
   AND ($6::timestamptz IS NULL OR effective_at < $6) AND ($7::timestamptz IS NULL OR effective_at <= $7)
   AND ($8::text IS NULL OR id < $8) AND ($9::text IS NULL OR id > $9)
 ORDER BY id {direction} LIMIT $10
"""


def effective_at(record_id: str) -> datetime:
    """The time an id carries ("audit_" + 16 hex digits of Unix microseconds + ...); now, for a malformed one."""
    try:
        return datetime.fromtimestamp(int(record_id[6:22], 16) / 1_000_000, UTC)
    except ValueError:
        return datetime.now(UTC)


def _time(seconds: int) -> datetime | None:
    return datetime.fromtimestamp(seconds, UTC) if seconds else None


class AuditStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def append(self, records: list[audit_pb2.AuditRecord]) -> None:
        if not records:
            return
        await self.pool.execute(
            _APPEND_SQL, [record.id for record in records], [effective_at(record.id) for record in records],
            [record.type for record in records], [record.principal.tenant for record in records],
            [record.principal.subject for record in records], [record.principal.key_id for record in records],
            [record.principal.admin for record in records], [record.details.decode() or "{}" for record in records],
        )

    async def list(self, query: audit_pb2.AuditQuery) -> audit_pb2.AuditPage:
        limit = min(query.limit or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        backwards = bool(query.before) and not query.after
        rows = await self.pool.fetch(
            _LIST_SQL.format(direction="ASC" if backwards else "DESC"),
            list(query.tenants), list(query.types), list(query.resource_ids),
            _time(query.gt), _time(query.gte), _time(query.lt), _time(query.lte),
            query.after or None, query.before or None, limit + 1,
        )
        page = rows[:limit]
        if backwards:
            page.reverse()
        return audit_pb2.AuditPage(
            records=[
                audit_pb2.AuditRecord(
                    id=row["id"], type=row["type"], details=row["details"].encode(),
                    principal=common_pb2.Principal(tenant=row["tenant"], subject=row["subject"], key_id=row["key_id"],
                                                   admin=row["admin"]),
                )
                for row in page
            ],
            effective_at=[row["effective_at"] for row in page],
            has_more=len(rows) > limit,
        )


class AuditServicer(audit_pb2_grpc.AuditServicer):
    def __init__(self, store: AuditStore, max_batch_bytes: int) -> None:
        self.store = store
        self.max_batch_bytes = max_batch_bytes

    async def Append(self, request: audit_pb2.AuditBatch, context: _Context) -> audit_pb2.AuditAppended:
        """A refused batch is never worth retrying as it is: too large (413) or holding a record PostgreSQL cannot
        store (400); the recorder splits it to find the record at fault."""
        size = request.ByteSize()
        if size > self.max_batch_bytes:
            raise PayloadTooLarge(f"The audit batch is {size} bytes; the limit is {self.max_batch_bytes} bytes.",
                                  code="audit_batch_too_large")
        try:
            await self.store.append(list(request.records))
        except asyncpg.DataError as error:  # e.g. text PostgreSQL cannot hold
            raise InvalidRequest(f"An audit record could not be stored: {type(error).__name__}.",
                                 code="invalid_audit_record") from None
        return audit_pb2.AuditAppended()

    async def List(self, request: audit_pb2.AuditQuery, context: _Context) -> audit_pb2.AuditPage:
        return await self.store.list(request)
