"""The Files API's behaviour: tenant-scoped rows in `retrieval.files`, bytes behind the storage interface."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import orjson
from agentic_core.errors import NotFound

from agentic_retrieval.objects import deleted_object, file_object, list_object
from agentic_retrieval.paging import Page
from agentic_retrieval.storage import FileStorage
from agentic_retrieval.validation import file_expiry_seconds, file_purpose


def new_file_id() -> str:
    return "file-" + secrets.token_hex(16)


def file_not_found(file_id: str, param: str = "file_id") -> NotFound:
    return NotFound(f"No file found with id '{file_id}'.", param=param, code="file_not_found")


@dataclass(frozen=True)
class Upload:
    tenant: str
    filename: str
    purpose: str
    content_type: str
    expires_after_seconds: int


@dataclass(frozen=True)
class FileInfo:
    file_id: str
    filename: str
    bytes: int
    content_type: str


_LIVE = "complete AND (expires_at IS NULL OR expires_at > now())"


class FileStore:
    def __init__(self, pool: asyncpg.Pool, storage: FileStorage, max_file_bytes: int) -> None:
        self.pool = pool
        self.storage = storage
        self.max_file_bytes = max_file_bytes

    async def upload(self, upload: Upload, pieces: AsyncIterable[bytes]) -> tuple[str, bytes]:
        """Streams the pieces into storage; the file is listed only once every byte is written."""
        purpose = file_purpose(upload.purpose)
        expiry = file_expiry_seconds(upload.expires_after_seconds)
        filename = (upload.filename or "upload").replace("\x00", "")[:512]
        file_id = new_file_id()
        await self.pool.execute(
            "INSERT INTO retrieval.files (tenant, id, filename, purpose, content_type, expires_at)"
            " VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))",
            upload.tenant, file_id, filename, purpose, upload.content_type.replace("\x00", "")[:255], expiry,
        )
        try:
            size = await self.storage.write(upload.tenant, file_id, pieces, self.max_file_bytes)
        except BaseException:
            await self.pool.execute("DELETE FROM retrieval.files WHERE tenant = $1 AND id = $2", upload.tenant, file_id)
            raise
        row = await self.pool.fetchrow(
            "UPDATE retrieval.files SET bytes = $3, complete = true WHERE tenant = $1 AND id = $2 RETURNING *",
            upload.tenant, file_id, size,
        )
        assert row is not None  # the row was inserted above and only this call completes it
        return file_id, orjson.dumps(file_object(row))

    async def _row(self, tenant: str, file_id: str, param: str = "file_id") -> asyncpg.Record:
        row = await self.pool.fetchrow(f"SELECT * FROM retrieval.files WHERE tenant = $1 AND id = $2 AND {_LIVE}",
                                       tenant, file_id)
        if row is None:
            raise file_not_found(file_id, param)
        return row

    async def get(self, tenant: str, file_id: str) -> bytes:
        return orjson.dumps(file_object(await self._row(tenant, file_id)))

    async def require(self, tenant: str, file_id: str, param: str = "file_id") -> None:
        await self._row(tenant, file_id, param)

    async def info(self, tenant: str, file_id: str) -> FileInfo:
        row = await self._row(tenant, file_id)
        return FileInfo(row["id"], row["filename"], row["bytes"], row["content_type"])

    def content(self, tenant: str, file_id: str) -> AsyncIterator[bytes]:
        return self.storage.read(tenant, file_id)

    async def list_files(self, tenant: str, purpose: str, page: Page) -> bytes:
        arguments: list[Any] = [tenant, purpose or None]
        cursor = page.cursor_sql("retrieval.files", "tenant = $1", arguments)
        rows = await self.pool.fetch(
            f"SELECT * FROM retrieval.files WHERE tenant = $1 AND ($2::text IS NULL OR purpose = $2) AND {_LIVE}"
            f" {cursor} {page.order_sql()} LIMIT {page.limit + 1}", *arguments,
        )
        return list_object([file_object(row) for row in rows[: page.limit]], len(rows) > page.limit)

    async def delete(self, tenant: str, file_id: str) -> bytes:
        """The file, its bytes, and its chunks in every store (the store files go with it)."""
        async with self.pool.acquire() as connection, connection.transaction():
            deleted = await connection.fetchval(
                "DELETE FROM retrieval.files WHERE tenant = $1 AND id = $2 AND complete RETURNING id", tenant, file_id)
            if deleted is None:
                raise file_not_found(file_id)
            await connection.execute("DELETE FROM retrieval.file_parts WHERE tenant = $1 AND file_id = $2",
                                     tenant, file_id)
        return deleted_object(file_id, "file")
