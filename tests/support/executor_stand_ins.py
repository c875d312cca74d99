"""Stand-ins for the executor's unit tests of its turn: a state service that keeps what it is asked to store, and
records of what a turn audited and counted (the real ones batch them to the state service)."""

from __future__ import annotations

from typing import Any

from agentic.v1 import common_pb2, state_pb2
from agentic_core.errors import InvalidRequest
from agentic_core.responses.history import StoredHistory
from agentic_core.usage.turn_usage import TurnUsage


class StandInState:
    """Keeps the turns it is asked to store, or refuses them."""

    def __init__(self, refuse: bool = False, drop_views: bool = False) -> None:
        self.refuse = refuse
        self.drop_views = drop_views
        self.stored: list[state_pb2.PersistTurnRequest] = []

    async def persist_turn(self, request: state_pb2.PersistTurnRequest) -> None:
        if self.refuse:
            raise InvalidRequest("The response could not be stored.", code="refused")
        self.stored.append(request)

    async def rehydrate(self, principal: common_pb2.Principal, previous_response_id: str) -> StoredHistory:
        """The chain ending at `previous_response_id`, as the state service returns it (each item's stored JSON
        and model view, oldest first); `drop_views`: as rows written before model views were stored."""
        turns = {turn.response_id: turn for turn in self.stored}
        chain: list[state_pb2.PersistTurnRequest] = []
        response_id = previous_response_id
        while response_id:
            chain.insert(0, turns[response_id])
            response_id = turns[response_id].previous_response_id
        items = [item for turn in chain for item in [*turn.input_items, *turn.output_items]]
        return StoredHistory([item.data for item in items], [] if self.drop_views else [item.model_view for item in items])


class RecordingAudit:
    def __init__(self) -> None:
        self.records: list[tuple[str, dict[str, Any]]] = []

    def record(self, kind: str, principal: common_pb2.Principal, details: dict[str, Any]) -> None:
        self.records.append((kind, details))


class RecordingUsage:
    def __init__(self) -> None:
        self.records: list[tuple[str, TurnUsage]] = []

    def record(self, principal: common_pb2.Principal, model: str, usage: TurnUsage) -> None:
        self.records.append((model, usage))
