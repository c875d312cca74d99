"""Plain records passed between the servicer and the stores."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TurnRecord:
    tenant: str
    response_id: str
    previous_response_id: str | None
    model: str
    status: str
    response: str
    input_items: list[tuple[str, str]]  # (item id, item JSON)
    output_items: list[tuple[str, str]]
    store_response: bool = True
    conversation_id: str | None = None
    lease_token: str | None = None
    conversation_items: list[tuple[str, str, str, str]] | None = None  # (item id, JSON, visibility, linked item id)


@dataclass(frozen=True, slots=True)
class ItemPage:
    items: list[tuple[str, str]]  # (item id, item JSON)
    has_more: bool
