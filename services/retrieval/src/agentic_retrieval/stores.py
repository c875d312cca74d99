"""The Vector Stores API's behaviour: stores, their files and file batches, tenant-scoped. Adding a file queues
its ingestion (`IngestQueue`); the row's status is what clients poll."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

import asyncpg
import orjson
from agentic_core.errors import InvalidRequest, NotFound

from agentic_retrieval.files import file_not_found
from agentic_retrieval.objects import (
    STATUSES,
    batch_object,
    deleted_object,
    list_object,
    store_file_object,
    vector_store_object,
)
from agentic_retrieval.paging import Page
from agentic_retrieval.validation import AUTO, Chunking

log = logging.getLogger(__name__)
Connection: TypeAlias = asyncpg.Connection | asyncpg.pool.PoolConnectionProxy
Queryable: TypeAlias = Connection | asyncpg.Pool
MAX_BATCH_FILES = 500
MAX_CREATE_FILES = 500


class IngestQueue(Protocol):
    async def publish(self, tenant: str, vector_store_id: str, file_id: str, attempt: int) -> None: ...


def new_store_id() -> str:
    return "vs_" + secrets.token_hex(16)


def new_batch_id() -> str:
    return "vsfb_" + secrets.token_hex(16)


def store_not_found(store_id: str) -> NotFound:
    return NotFound(f"No vector store found with id '{store_id}'.", param="vector_store_id", code="vector_store_not_found")


def store_file_not_found(store_id: str, file_id: str) -> NotFound:
    return NotFound(f"No file found with id '{file_id}' in vector store '{store_id}'.", param="file_id",
                    code="file_not_found")


def batch_not_found(batch_id: str) -> NotFound:
    return NotFound(f"No file batch found with id '{batch_id}'.", param="batch_id", code="file_batch_not_found")


def _status_filter(status: str) -> str | None:
    if not status:
        return None
    if status not in STATUSES:
        raise InvalidRequest(f"Invalid value for 'filter': expected one of {', '.join(STATUSES)}.", param="filter",
                             code="invalid_value")
    return status


@dataclass(frozen=True)
class NewStoreFile:
    file_id: str
    attributes: dict[str, Any] | None
    chunking: Chunking | None


_COUNTS_SQL = """
SELECT status, count(*) AS files, coalesce(sum(usage_bytes), 0) AS usage FROM retrieval.store_files
 WHERE tenant = $1 AND vector_store_id = $2 GROUP BY status
"""


class VectorStores:
    def __init__(self, pool: asyncpg.Pool, queue: IngestQueue) -> None:
        self.pool = pool
        self.queue = queue

    # -- stores ------------------------------------------------------------------------------------------------

    async def _render(self, connection: Queryable, row: asyncpg.Record) -> bytes:
        counts = {record["status"]: record["files"] for record in await connection.fetch(_COUNTS_SQL, row["tenant"], row["id"])}
        usage = await connection.fetchval(
            "SELECT coalesce(sum(usage_bytes), 0) FROM retrieval.store_files WHERE tenant = $1 AND vector_store_id = $2",
            row["tenant"], row["id"])
        return orjson.dumps(vector_store_object(row, counts, int(usage)))

    async def _store(self, connection: Queryable, tenant: str, store_id: str,
                     *, touch: bool = False) -> asyncpg.Record:
        sql = ("UPDATE retrieval.vector_stores SET last_active_at = now() WHERE tenant = $1 AND id = $2 RETURNING *"
               if touch else "SELECT * FROM retrieval.vector_stores WHERE tenant = $1 AND id = $2")
        row = await connection.fetchrow(sql, tenant, store_id)
        if row is None:
            raise store_not_found(store_id)
        return row

    async def create(self, tenant: str, name: str, metadata: dict[str, str], expires_after: dict[str, Any] | None,
                     chunking: Chunking | None, file_ids: Sequence[str]) -> tuple[str, bytes]:
        if len(file_ids) > MAX_CREATE_FILES:
            raise InvalidRequest(f"At most {MAX_CREATE_FILES} file_ids at once.", param="file_ids", code="invalid_value")
        store_id = new_store_id()
        async with self.pool.acquire() as connection:
            async with connection.transaction():
                await connection.execute(
                    "INSERT INTO retrieval.vector_stores (tenant, id, name, metadata, expires_after, chunking_strategy)"
                    " VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6::jsonb)",
                    tenant, store_id, name, orjson.dumps(metadata).decode(),
                    orjson.dumps(expires_after).decode() if expires_after else None,
                    orjson.dumps(chunking.to_json()).decode() if chunking else None,
                )
                added = await self._insert_files(connection, tenant, store_id,
                                                 [NewStoreFile(file_id, None, chunking) for file_id in file_ids], None)
            await self._queue(tenant, store_id, added)
            return store_id, await self._render(connection, await self._store(connection, tenant, store_id))

    async def get(self, tenant: str, store_id: str) -> bytes:
        return await self._render(self.pool, await self._store(self.pool, tenant, store_id))

    async def update(self, tenant: str, store_id: str, name: str | None, metadata: dict[str, str] | None,
                     set_expiry: bool, expires_after: dict[str, Any] | None) -> bytes:
        row = await self.pool.fetchrow(
            "UPDATE retrieval.vector_stores SET name = coalesce($3, name), metadata = coalesce($4::jsonb, metadata),"
            " expires_after = CASE WHEN $5 THEN $6::jsonb ELSE expires_after END, last_active_at = now()"
            " WHERE tenant = $1 AND id = $2 RETURNING *",
            tenant, store_id, name, orjson.dumps(metadata).decode() if metadata is not None else None, set_expiry,
            orjson.dumps(expires_after).decode() if expires_after else None,
        )
        if row is None:
            raise store_not_found(store_id)
        return await self._render(self.pool, row)

    async def list_stores(self, tenant: str, page: Page) -> bytes:
        arguments: list[Any] = [tenant]
        cursor = page.cursor_sql("retrieval.vector_stores", "tenant = $1", arguments)
        rows = await self.pool.fetch(f"SELECT * FROM retrieval.vector_stores WHERE tenant = $1 {cursor}"
                                     f" {page.order_sql()} LIMIT {page.limit + 1}", *arguments)
        data = [orjson.loads(await self._render(self.pool, row)) for row in rows[: page.limit]]
        return list_object(data, len(rows) > page.limit)

    async def delete(self, tenant: str, store_id: str) -> bytes:
        deleted = await self.pool.fetchval(
            "DELETE FROM retrieval.vector_stores WHERE tenant = $1 AND id = $2 RETURNING id", tenant, store_id)
        if deleted is None:
            raise store_not_found(store_id)
        return deleted_object(store_id, "vector_store.deleted")

    async def require_stores(self, tenant: str, store_ids: Sequence[str]) -> None:
        """Every id a store of this tenant (NOT_FOUND names the first that is not); touches them (expiry). A search
        reads; it writes only a store last touched over a minute ago: expiry counts days, and a write per search
        (its commit waits for the WAL to reach disk, and concurrent searches of one store queue on its row) would
        cost more than the search."""
        rows = await self.pool.fetch(
            "SELECT id, last_active_at < now() - interval '1 minute' AS stale FROM retrieval.vector_stores"
            " WHERE tenant = $1 AND id = ANY($2::text[])", tenant, list(store_ids))
        found = {row["id"] for row in rows}
        for store_id in store_ids:
            if store_id not in found:
                raise store_not_found(store_id)
        stale = [row["id"] for row in rows if row["stale"]]
        if stale:
            await self.pool.execute("UPDATE retrieval.vector_stores SET last_active_at = now() WHERE tenant = $1"
                                    " AND id = ANY($2::text[])", tenant, stale)

    # -- store files -------------------------------------------------------------------------------------------

    async def _insert_files(self, connection: Connection, tenant: str, store_id: str,
                            files: Sequence[NewStoreFile], batch_id: str | None) -> list[str]:
        """Rows for the files (a file already in the store is taken again: re-ingested with the new settings)."""
        store = await self._store(connection, tenant, store_id, touch=True)
        default = Chunking.from_json(orjson.loads(store["chunking_strategy"])) if store["chunking_strategy"] else AUTO
        added = []
        for index, new in enumerate(files):
            exists = await connection.fetchval(
                "SELECT 1 FROM retrieval.files WHERE tenant = $1 AND id = $2 AND complete"
                " AND (expires_at IS NULL OR expires_at > now())", tenant, new.file_id)
            if exists is None:
                raise file_not_found(new.file_id, "file_id" if batch_id is None and len(files) == 1
                                     else f"file_ids[{index}]")
            await connection.execute(
                "DELETE FROM retrieval.store_files WHERE tenant = $1 AND vector_store_id = $2 AND file_id = $3",
                tenant, store_id, new.file_id)
            await connection.execute(
                "INSERT INTO retrieval.store_files (tenant, vector_store_id, file_id, batch_id, attributes,"
                " chunking_strategy) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)",
                tenant, store_id, new.file_id, batch_id,
                orjson.dumps(new.attributes).decode() if new.attributes is not None else None,
                orjson.dumps((new.chunking or default).to_json()).decode(),
            )
            added.append(new.file_id)
        return added

    async def _queue(self, tenant: str, store_id: str, file_ids: Sequence[str]) -> None:
        """Publishes each file's ingestion; one that cannot be queued ends `failed` (never stuck `in_progress`)."""
        for file_id in file_ids:
            try:
                await self.queue.publish(tenant, store_id, file_id, 1)
            except Exception as exc:
                log.error("queueing the ingestion of %s failed: %r", file_id, exc)
                await self.pool.execute(
                    "UPDATE retrieval.store_files SET status = 'failed', last_error_code = 'server_error',"
                    " last_error_message = 'The file could not be queued for processing.', updated_at = now()"
                    " WHERE tenant = $1 AND vector_store_id = $2 AND file_id = $3 AND status = 'in_progress'",
                    tenant, store_id, file_id)

    async def add_file(self, tenant: str, store_id: str, new: NewStoreFile) -> tuple[str, bytes]:
        async with self.pool.acquire() as connection, connection.transaction():
            await self._insert_files(connection, tenant, store_id, [new], None)
        await self._queue(tenant, store_id, [new.file_id])
        return await self.get_file(tenant, store_id, new.file_id)

    async def _file_row(self, tenant: str, store_id: str, file_id: str) -> asyncpg.Record:
        await self._store(self.pool, tenant, store_id)
        row = await self.pool.fetchrow(
            "SELECT * FROM retrieval.store_files WHERE tenant = $1 AND vector_store_id = $2 AND file_id = $3",
            tenant, store_id, file_id)
        if row is None:
            raise store_file_not_found(store_id, file_id)
        return row

    async def get_file(self, tenant: str, store_id: str, file_id: str) -> tuple[str, bytes]:
        row = await self._file_row(tenant, store_id, file_id)
        return row["status"], orjson.dumps(store_file_object(row))

    async def list_files(self, tenant: str, store_id: str, status: str, page: Page, batch_id: str | None = None) -> bytes:
        await self._store(self.pool, tenant, store_id)
        arguments: list[Any] = [tenant, store_id, _status_filter(status), batch_id]
        cursor = page.cursor_sql("retrieval.store_files", "tenant = $1 AND vector_store_id = $2", arguments)
        rows = await self.pool.fetch(
            "SELECT * FROM retrieval.store_files WHERE tenant = $1 AND vector_store_id = $2"
            " AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR batch_id = $4)"
            f" {cursor} {page.order_sql()} LIMIT {page.limit + 1}", *arguments)
        return list_object([store_file_object(row) for row in rows[: page.limit]], len(rows) > page.limit)

    async def update_file(self, tenant: str, store_id: str, file_id: str, attributes: dict[str, Any] | None) -> tuple[str, bytes]:
        await self._store(self.pool, tenant, store_id, touch=True)
        row = await self.pool.fetchrow(
            "UPDATE retrieval.store_files SET attributes = $4::jsonb WHERE tenant = $1 AND vector_store_id = $2"
            " AND file_id = $3 RETURNING *",
            tenant, store_id, file_id, orjson.dumps(attributes).decode() if attributes is not None else None)
        if row is None:
            raise store_file_not_found(store_id, file_id)
        return row["status"], orjson.dumps(store_file_object(row))

    async def delete_file(self, tenant: str, store_id: str, file_id: str) -> bytes:
        await self._store(self.pool, tenant, store_id, touch=True)
        deleted = await self.pool.fetchval(
            "DELETE FROM retrieval.store_files WHERE tenant = $1 AND vector_store_id = $2 AND file_id = $3 RETURNING 1",
            tenant, store_id, file_id)
        if deleted is None:
            raise store_file_not_found(store_id, file_id)
        return deleted_object(file_id, "vector_store.file.deleted")

    async def file_content(self, tenant: str, store_id: str, file_id: str) -> bytes:
        row = await self._file_row(tenant, store_id, file_id)
        chunks = await self.pool.fetch(
            "SELECT content FROM retrieval.chunks WHERE tenant = $1 AND vector_store_id = $2 AND file_id = $3"
            " ORDER BY position", tenant, store_id, file_id)
        filename = await self.pool.fetchval("SELECT filename FROM retrieval.files WHERE tenant = $1 AND id = $2",
                                            tenant, file_id)
        return orjson.dumps({
            "object": "vector_store.file_content.page", "file_id": file_id, "filename": filename,
            "attributes": orjson.loads(row["attributes"]) if row["attributes"] else {},
            "data": [{"type": "text", "text": chunk["content"]} for chunk in chunks], "has_more": False,
            "next_page": None,
        })

    # -- batches -----------------------------------------------------------------------------------------------

    async def _batch(self, tenant: str, store_id: str, batch_id: str) -> tuple[str, bytes]:
        row = await self.pool.fetchrow(
            "SELECT * FROM retrieval.file_batches WHERE tenant = $1 AND vector_store_id = $2 AND id = $3",
            tenant, store_id, batch_id)
        if row is None:
            raise batch_not_found(batch_id)
        counts = {record["status"]: record["count"] for record in await self.pool.fetch(
            "SELECT status, count(*) FROM retrieval.store_files WHERE tenant = $1 AND batch_id = $2 GROUP BY status",
            tenant, batch_id)}
        shown = batch_object(row, counts)
        return shown["status"], orjson.dumps(shown)

    async def create_batch(self, tenant: str, store_id: str, files: Sequence[NewStoreFile]) -> tuple[str, bytes]:
        if not files or len(files) > MAX_BATCH_FILES:
            raise InvalidRequest(f"A batch has 1 to {MAX_BATCH_FILES} files.", param="file_ids", code="invalid_value")
        batch_id = new_batch_id()
        async with self.pool.acquire() as connection, connection.transaction():
            await self._store(connection, tenant, store_id)
            await connection.execute(
                "INSERT INTO retrieval.file_batches (tenant, vector_store_id, id) VALUES ($1, $2, $3)",
                tenant, store_id, batch_id)
            added = await self._insert_files(connection, tenant, store_id, files, batch_id)
        await self._queue(tenant, store_id, added)
        return await self._batch(tenant, store_id, batch_id)

    async def get_batch(self, tenant: str, store_id: str, batch_id: str) -> tuple[str, bytes]:
        await self._store(self.pool, tenant, store_id)
        return await self._batch(tenant, store_id, batch_id)

    async def cancel_batch(self, tenant: str, store_id: str, batch_id: str) -> tuple[str, bytes]:
        """Files not yet done end `cancelled` (a worker on one stops at its next batch of chunks); a batch with
        nothing left to do keeps its status."""
        async with self.pool.acquire() as connection, connection.transaction():
            found = await connection.fetchval(
                "SELECT 1 FROM retrieval.file_batches WHERE tenant = $1 AND vector_store_id = $2 AND id = $3"
                " FOR UPDATE", tenant, store_id, batch_id)
            if found is None:
                raise batch_not_found(batch_id)
            stopped = await connection.fetch(
                "UPDATE retrieval.store_files SET status = 'cancelled', updated_at = now()"
                " WHERE tenant = $1 AND batch_id = $2 AND status = 'in_progress' RETURNING 1", tenant, batch_id)
            if stopped:
                await connection.execute("UPDATE retrieval.file_batches SET cancelled = true WHERE tenant = $1"
                                         " AND id = $2", tenant, batch_id)
        return await self._batch(tenant, store_id, batch_id)

    async def list_batch_files(self, tenant: str, store_id: str, batch_id: str, status: str, page: Page) -> bytes:
        await self.get_batch(tenant, store_id, batch_id)
        return await self.list_files(tenant, store_id, status, page, batch_id)
