"""Stand-ins for the executor's unit tests of its turn: a state service that keeps what it is asked to store, and
records of what a turn audited and counted (the real ones batch them to the state service)."""

from __future__ import annotations

from typing import Any

from agentic.v1 import common_pb2, state_pb2
from agentic_core.errors import InvalidRequest
from agentic_core.usage.turn_usage import TurnUsage


class StandInState:
    """Keeps the turns it is asked to store, or refuses them."""

    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.stored: list[state_pb2.PersistTurnRequest] = []

    async def persist_turn(self, request: state_pb2.PersistTurnRequest) -> None:
        if self.refuse:
            raise InvalidRequest("The response could not be stored.", code="refused")
        self.stored.append(request)


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
