"""A turn's usage as recorded: the model's tokens summed over the rounds, and the gateway tool calls it ran."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from agentic.v1 import common_pb2
from agentic_core.responses.turn_so_far import TurnSoFar
from agentic_core.tools.registry import ToolBinding
from agentic_core.usage.turn_usage import usage_of
from agentic_runtime.usage_recorder import UsageRecorder

Item = dict[str, Any]


@dataclass(slots=True)
class ToolTally:
    """Gateway tool calls of one turn by kind, and the seconds the turn waited on them."""

    calls: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @contextmanager
    def timing(self, calls: Sequence[Item], binding: Callable[[Item], ToolBinding]) -> Iterator[None]:
        for call in calls:
            kind = binding(call).kind
            self.calls[kind] = self.calls.get(kind, 0) + 1
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds += time.perf_counter() - started


def record_turn(recorder: UsageRecorder | None, principal: common_pb2.Principal, model: str, so_far: TurnSoFar,
                tally: ToolTally) -> None:
    """Every finished turn counts, stored or not (a prewarm, `generate: false`, makes no model request)."""
    if recorder is None:
        return
    usage = usage_of(so_far.usage, requests=so_far.rounds)
    usage.tool_calls, usage.tool_seconds = tally.calls, tally.seconds
    recorder.record(principal, model, usage)
