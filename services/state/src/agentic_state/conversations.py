"""Tenant-scoped conversations and their items, and the lease that serialises turns on one."""

from __future__ import annotations

from datetime import datetime
from typing import NoReturn, TypeAlias

import asyncpg
import asyncpg.pool
import orjson
from agentic_core.errors import Conflict, InvalidRequest, NotFound

from agentic_state.records import ItemPage, StoredItems

_LIVE = "deleted_at IS NULL"

# What a query runs on: a connection of its own, or one acquired from the pool.
Connection: TypeAlias = asyncpg.Connection | asyncpg.pool.PoolConnectionProxy


def conversation_not_found(conversation_id: str, param: str = "conversation_id") -> NotFound:
    return NotFound(f"No conversation found with id '{conversation_id}'.", param=param, code="conversation_not_found")


def conversation_locked(conversation_id: str) -> Conflict:
    return Conflict(
        f"Another response is in progress on conversation '{conversation_id}'; retry when it has finished.",
        param="conversation",
        code="conversation_locked",
    )


def conversation_json(conversation_id: str, created_at: datetime, metadata: str) -> bytes:
    """The conversation object, assembled around the stored metadata bytes."""
    return (
        b'{"id":' + orjson.dumps(conversation_id) + b',"object":"conversation","created_at":'
        + str(int(created_at.timestamp())).encode() + b',"metadata":' + metadata.encode() + b"}"
    )


_HISTORY_SQL = (
    "SELECT item, model_view FROM conversation_items WHERE tenant = $1 AND conversation_id = $2 AND visibility <> 'public'"
    " ORDER BY position"
)
# What listings show: the client's view of the conversation.
_SHOWN = "visibility <> 'model'"

# The history is read only when the lease was taken; item writes need the lease, so it is stable.
_BEGIN_TURN_SQL = f"""
WITH leased AS (
    UPDATE conversations SET lease_token = $3, lease_expires_at = now() + make_interval(secs => $4)
     WHERE tenant = $1 AND id = $2 AND {_LIVE} AND (lease_token IS NULL OR lease_expires_at < now())
    RETURNING id
)
SELECT EXISTS (SELECT 1 FROM leased) AS leased, history.items, history.model_views
  FROM (SELECT coalesce(array_agg(item::text ORDER BY position), '{{}}') AS items,
               coalesce(array_agg(model_view ORDER BY position), '{{}}') AS model_views
          FROM conversation_items
         WHERE tenant = $1 AND conversation_id = $2 AND visibility <> 'public' AND EXISTS (SELECT 1 FROM leased)
       ) AS history
"""

_APPEND_ITEMS_SQL = """
INSERT INTO conversation_items (tenant, conversation_id, position, item_id, item, model_view)
SELECT $1, $2, $3 + t.offset_in_batch - 1, t.item_id, t.item, t.model_view
  FROM unnest($4::text[], $5::json[], $6::text[]) WITH ORDINALITY AS t (item_id, item, model_view, offset_in_batch)
"""


async def append_items_locked(
    connection: Connection, tenant: str, conversation_id: str, items: list[tuple[str, str]],
    model_views: list[str | None] | None = None,
) -> None:
    """Append client-written items under the conversation's row lock; refused while a turn holds the lease.

    The caller holds a transaction. (A turn's own items are written by `StateStore.persist_turn`.)
    """
    start = await connection.fetchval(
        "UPDATE conversations SET next_position = next_position + $3, revision = revision + 1"
        f" WHERE tenant = $1 AND id = $2 AND {_LIVE} AND (lease_token IS NULL OR lease_expires_at < now())"
        " RETURNING next_position - $3",
        tenant, conversation_id, len(items),
    )
    if start is None:
        await raise_missing_or_locked(connection, tenant, conversation_id)
    if items:
        await connection.execute(
            _APPEND_ITEMS_SQL, tenant, conversation_id, start, [item_id for item_id, _ in items], [item for _, item in items],
            model_views if model_views is not None and len(model_views) == len(items) else [None] * len(items),
        )


async def raise_missing_or_locked(connection: Connection, tenant: str, conversation_id: str) -> NoReturn:
    exists = await connection.fetchval(
        f"SELECT 1 FROM conversations WHERE tenant = $1 AND id = $2 AND {_LIVE}", tenant, conversation_id
    )
    if exists is None:
        raise conversation_not_found(conversation_id)
    raise conversation_locked(conversation_id)


class ConversationStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def create(self, tenant: str, conversation_id: str, metadata: str, items: list[tuple[str, str]],
                     model_views: list[str | None] | None = None) -> bytes:
        async with self.pool.acquire() as connection, connection.transaction():
            row = await connection.fetchrow(
                "INSERT INTO conversations (tenant, id, metadata) VALUES ($1, $2, $3)"
                " ON CONFLICT DO NOTHING RETURNING created_at",
                tenant, conversation_id, metadata,
            )
            if row is None:
                raise Conflict(f"Conversation '{conversation_id}' already exists.", code="conversation_exists")
            if items:
                await append_items_locked(connection, tenant, conversation_id, items, model_views)
        return conversation_json(conversation_id, row["created_at"], metadata)

    async def get(self, tenant: str, conversation_id: str) -> bytes:
        row = await self.pool.fetchrow(
            f"SELECT created_at, metadata FROM conversations WHERE tenant = $1 AND id = $2 AND {_LIVE}",
            tenant, conversation_id,
        )
        if row is None:
            raise conversation_not_found(conversation_id)
        return conversation_json(conversation_id, row["created_at"], row["metadata"])

    async def update_metadata(self, tenant: str, conversation_id: str, metadata: str) -> bytes:
        row = await self.pool.fetchrow(
            f"UPDATE conversations SET metadata = $3 WHERE tenant = $1 AND id = $2 AND {_LIVE} RETURNING created_at",
            tenant, conversation_id, metadata,
        )
        if row is None:
            raise conversation_not_found(conversation_id)
        return conversation_json(conversation_id, row["created_at"], metadata)

    async def delete(self, tenant: str, conversation_id: str) -> None:
        status = await self.pool.execute(
            f"UPDATE conversations SET deleted_at = now() WHERE tenant = $1 AND id = $2 AND {_LIVE}",
            tenant, conversation_id,
        )
        if status == "UPDATE 0":
            raise conversation_not_found(conversation_id)

    async def append(self, tenant: str, conversation_id: str, items: list[tuple[str, str]],
                     model_views: list[str | None] | None = None) -> list[tuple[str, str]]:
        async with self.pool.acquire() as connection, connection.transaction():
            await append_items_locked(connection, tenant, conversation_id, items, model_views)
        return items

    async def list_items(
        self, tenant: str, conversation_id: str, *, limit: int, after: str | None, ascending: bool
    ) -> ItemPage:
        async with self.pool.acquire() as connection:
            await self._require(connection, tenant, conversation_id)
            cursor = None
            if after:
                cursor = await connection.fetchval(
                    "SELECT max(position) FROM conversation_items"
                    f" WHERE tenant = $1 AND conversation_id = $2 AND item_id = $3 AND {_SHOWN}",
                    tenant, conversation_id, after,
                )
                if cursor is None:
                    raise InvalidRequest(f"No item with id '{after}' in this conversation.", param="after", code="invalid_cursor")
            comparison, direction = (">", "ASC") if ascending else ("<", "DESC")
            rows = await connection.fetch(
                f"SELECT item_id, item FROM conversation_items WHERE tenant = $1 AND conversation_id = $2 AND {_SHOWN}"
                f" AND ($3::bigint IS NULL OR position {comparison} $3) ORDER BY position {direction} LIMIT $4",
                tenant, conversation_id, cursor, limit + 1,
            )
        items = [(row["item_id"], row["item"]) for row in rows]
        return ItemPage(items=items[:limit], has_more=len(items) > limit)

    async def get_item(self, tenant: str, conversation_id: str, item_id: str) -> str:
        async with self.pool.acquire() as connection:
            await self._require(connection, tenant, conversation_id)
            item: str | None = await connection.fetchval(
                "SELECT item FROM conversation_items WHERE tenant = $1 AND conversation_id = $2 AND item_id = $3"
                f" AND {_SHOWN} ORDER BY position DESC LIMIT 1",
                tenant, conversation_id, item_id,
            )
        if item is None:
            raise NotFound(f"No item with id '{item_id}' in this conversation.", param="item_id", code="item_not_found")
        return item

    async def delete_item(self, tenant: str, conversation_id: str, item_id: str) -> bytes:
        """Removes the item from the conversation; responses that stored it keep their own copy."""
        async with self.pool.acquire() as connection, connection.transaction():
            row = await connection.fetchrow(
                "UPDATE conversations SET revision = revision + 1"
                f" WHERE tenant = $1 AND id = $2 AND {_LIVE} AND (lease_token IS NULL OR lease_expires_at < now())"
                " RETURNING created_at, metadata",
                tenant, conversation_id,
            )
            if row is None:
                await raise_missing_or_locked(connection, tenant, conversation_id)
            status = await connection.execute(
                "DELETE FROM conversation_items WHERE tenant = $1 AND conversation_id = $2"
                " AND (item_id = $3 OR linked_item_id = $3)",
                tenant, conversation_id, item_id,
            )
            if status == "DELETE 0":
                raise NotFound(f"No item with id '{item_id}' in this conversation.", param="item_id", code="item_not_found")
        return conversation_json(conversation_id, row["created_at"], row["metadata"])

    async def begin_turn(self, tenant: str, conversation_id: str, lease_token: str, lease_seconds: float
                         ) -> StoredItems:
        """Take the lease and read the history in one statement (one round trip)."""
        row = await self.pool.fetchrow(_BEGIN_TURN_SQL, tenant, conversation_id, lease_token, lease_seconds)
        assert row is not None  # the SELECT always returns its one row
        if not row["leased"]:
            async with self.pool.acquire() as connection:
                await raise_missing_or_locked(connection, tenant, conversation_id)
        return StoredItems(row["items"], row["model_views"])

    async def history(self, tenant: str, conversation_id: str) -> StoredItems:
        async with self.pool.acquire() as connection:
            await self._require(connection, tenant, conversation_id)
            rows = await connection.fetch(_HISTORY_SQL, tenant, conversation_id)
        return StoredItems([row["item"] for row in rows], [row["model_view"] for row in rows])

    async def renew_turn(self, tenant: str, conversation_id: str, lease_token: str, lease_seconds: float) -> None:
        status = await self.pool.execute(
            "UPDATE conversations SET lease_expires_at = now() + make_interval(secs => $4)"
            " WHERE tenant = $1 AND id = $2 AND lease_token = $3",
            tenant, conversation_id, lease_token, lease_seconds,
        )
        if status == "UPDATE 0":
            raise Conflict("This turn no longer holds the conversation: its lease expired and may have been taken.",
                           param="conversation", code="conversation_lease_lost")

    async def end_turn(self, tenant: str, conversation_id: str, lease_token: str) -> None:
        await self.pool.execute(
            "UPDATE conversations SET lease_token = NULL, lease_expires_at = NULL"
            " WHERE tenant = $1 AND id = $2 AND lease_token = $3",
            tenant, conversation_id, lease_token,
        )

    @staticmethod
    async def _require(connection: Connection, tenant: str, conversation_id: str) -> None:
        exists = await connection.fetchval(
            f"SELECT 1 FROM conversations WHERE tenant = $1 AND id = $2 AND {_LIVE}", tenant, conversation_id
        )
        if exists is None:
            raise conversation_not_found(conversation_id)
