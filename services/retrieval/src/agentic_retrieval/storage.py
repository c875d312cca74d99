"""Where file bytes live: one small interface, and its PostgreSQL implementation (parts of a bounded size, written
and read one at a time, so that no file is ever whole in memory). An object store can implement the same three
calls."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Protocol

import asyncpg
from agentic_core.errors import PayloadTooLarge


class FileTooLarge(PayloadTooLarge):
    default_code = "file_too_large"


class FileStorage(Protocol):
    async def write(self, tenant: str, file_id: str, pieces: AsyncIterable[bytes], max_bytes: int) -> int:
        """Store the pieces as the file's bytes; returns their size. Over `max_bytes`: `FileTooLarge`, nothing kept."""
        ...

    def read(self, tenant: str, file_id: str) -> AsyncIterator[bytes]:
        """The file's bytes, a part at a time."""
        ...

    async def delete(self, tenant: str, file_id: str) -> None: ...


class PostgresFileStorage:
    """Parts of at most `part_bytes` in `retrieval.file_parts`, each its own short statement."""

    def __init__(self, pool: asyncpg.Pool, part_bytes: int) -> None:
        self.pool = pool
        self.part_bytes = part_bytes

    async def write(self, tenant: str, file_id: str, pieces: AsyncIterable[bytes], max_bytes: int) -> int:
        size = 0
        part = 0
        buffer = bytearray()
        try:
            async for piece in pieces:
                size += len(piece)
                if size > max_bytes:
                    raise FileTooLarge(f"The file is larger than the limit of {max_bytes} bytes.", param="file")
                buffer += piece
                while len(buffer) >= self.part_bytes:
                    await self._insert(tenant, file_id, part, bytes(buffer[: self.part_bytes]))
                    del buffer[: self.part_bytes]
                    part += 1
            if buffer or part == 0:
                await self._insert(tenant, file_id, part, bytes(buffer))
        except BaseException:
            await self.delete(tenant, file_id)
            raise
        return size

    async def _insert(self, tenant: str, file_id: str, part: int, data: bytes) -> None:
        await self.pool.execute(
            "INSERT INTO retrieval.file_parts (tenant, file_id, part, data) VALUES ($1, $2, $3, $4)",
            tenant, file_id, part, data,
        )

    async def read(self, tenant: str, file_id: str) -> AsyncIterator[bytes]:
        part = 0
        while True:
            data = await self.pool.fetchval(
                "SELECT data FROM retrieval.file_parts WHERE tenant = $1 AND file_id = $2 AND part = $3",
                tenant, file_id, part,
            )
            if data is None:
                return
            yield bytes(data)
            part += 1

    async def delete(self, tenant: str, file_id: str) -> None:
        await self.pool.execute("DELETE FROM retrieval.file_parts WHERE tenant = $1 AND file_id = $2", tenant, file_id)
