"""Cursor pages of OpenAI's lists (`limit`, `after`, `before`, `order`) over a table's `seq` column."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Page:
    limit: int
    after: str = ""
    before: str = ""
    ascending: bool = False

    @classmethod
    def of(cls, limit: int, after: str, before: str, ascending: bool, *, default: int = 20, most: int = 100) -> Page:
        return cls(min(limit or default, most), after, before, ascending)

    def cursor_sql(self, table: str, scope: str, arguments: list[Any]) -> str:
        """Conditions on `seq` from the `after`/`before` ids (looked up within `scope`, whose parameters are
        already in `arguments`); the ids are appended to `arguments`."""
        conditions = []
        for cursor, newer in ((self.after, self.ascending), (self.before, not self.ascending)):
            if cursor:
                arguments.append(cursor)
                operator = ">" if newer else "<"
                id_column = "file_id" if table == "retrieval.store_files" else "id"
                conditions.append(f"AND seq {operator} coalesce((SELECT seq FROM {table} WHERE {scope} AND "
                                  f"{id_column} = ${len(arguments)}), {'0' if newer else '9223372036854775807'})")
        return " ".join(conditions)

    def order_sql(self) -> str:
        return "ORDER BY seq " + ("ASC" if self.ascending else "DESC")
