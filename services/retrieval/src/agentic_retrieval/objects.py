"""The public OpenAI objects, from rows: files, vector stores, store files, batches, lists and deletions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import asyncpg
import orjson

Row = asyncpg.Record
STATUSES = ("in_progress", "completed", "failed", "cancelled")


def _seconds(moment: datetime | None) -> int | None:
    return int(moment.timestamp()) if moment is not None else None


def _json(value: Any) -> Any:
    """A jsonb column as asyncpg hands it (text) → Python."""
    return orjson.loads(value) if isinstance(value, (str, bytes)) else value


def file_object(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"], "object": "file", "bytes": row["bytes"], "created_at": _seconds(row["created_at"]),
        "filename": row["filename"], "purpose": row["purpose"], "status": "processed",
        "expires_at": _seconds(row["expires_at"]), "status_details": None,
    }


def file_counts(counts: Mapping[str, int]) -> dict[str, int]:
    shown = {status: int(counts.get(status, 0)) for status in STATUSES}
    return {**shown, "total": sum(shown.values())}


def vector_store_object(row: Row, counts: Mapping[str, int], usage_bytes: int) -> dict[str, Any]:
    expires_after = _json(row["expires_after"])
    expires_at = None
    if expires_after is not None:
        expires_at = int(row["last_active_at"].timestamp()) + expires_after["days"] * 86400
    expired = expires_at is not None and expires_at <= int(datetime.now().timestamp())
    status = "expired" if expired else "in_progress" if counts.get("in_progress") else "completed"
    return {
        "id": row["id"], "object": "vector_store", "created_at": _seconds(row["created_at"]), "name": row["name"],
        "usage_bytes": usage_bytes, "file_counts": file_counts(counts), "status": status,
        "expires_after": expires_after, "expires_at": expires_at, "last_active_at": _seconds(row["last_active_at"]),
        "metadata": _json(row["metadata"]),
    }


def store_file_object(row: Row) -> dict[str, Any]:
    error = None
    if row["last_error_code"]:
        error = {"code": row["last_error_code"], "message": row["last_error_message"] or ""}
    return {
        "id": row["file_id"], "object": "vector_store.file", "usage_bytes": row["usage_bytes"],
        "created_at": _seconds(row["created_at"]), "vector_store_id": row["vector_store_id"], "status": row["status"],
        "last_error": error, "chunking_strategy": _json(row["chunking_strategy"]),
        "attributes": _json(row["attributes"]) or {},
    }


def batch_status(cancelled: bool, counts: Mapping[str, int]) -> str:
    if counts.get("in_progress"):
        return "in_progress"
    if cancelled:
        return "cancelled"
    total = sum(counts.values())
    return "failed" if total and counts.get("failed") == total else "completed"


def batch_object(row: Row, counts: Mapping[str, int]) -> dict[str, Any]:
    return {
        "id": row["id"], "object": "vector_store.files_batch", "created_at": _seconds(row["created_at"]),
        "vector_store_id": row["vector_store_id"], "status": batch_status(row["cancelled"], counts),
        "file_counts": file_counts(counts),
    }


def list_object(data: Sequence[dict[str, Any]], has_more: bool) -> bytes:
    return orjson.dumps({"object": "list", "data": list(data), "first_id": data[0]["id"] if data else None,
                         "last_id": data[-1]["id"] if data else None, "has_more": has_more})


def deleted_object(object_id: str, kind: str) -> bytes:
    return orjson.dumps({"id": object_id, "object": kind, "deleted": True})
