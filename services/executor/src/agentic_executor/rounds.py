"""The rounds of one turn: infer, run the gateway-owned calls, infer again, until a round ends the turn.

A round is a function of the upstream body and the turn so far: it returns the
turn with the round added and either how the turn ended (`TurnDone`) or the
next round's body (`NextRound`); streamed, it yields its public events first.
What a round's output means is decided in `agentic_core.responses.round_outcome`.
In a stream, one `EventSequencer` numbers the turn's events (the turn owns it),
output indexes are rebased across rounds, and hidden gateway calls reappear as
their public items with OpenAI's lifecycle events.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

from agentic_core.errors import AgenticError
from agentic_core.json_types import Event, Item
from agentic_core.responses.round_outcome import RoundReading, TurnEnding, read_round
from agentic_core.responses.round_request import next_round_request
from agentic_core.responses.stream import EventSequencer, PublicEvent, RoundOutcome, StreamTranslator, outcome_from_json
from agentic_core.responses.turn_so_far import TurnSoFar
from agentic_core.routing import ModelRoute

from agentic_executor.compaction import ContextGuard, Guarded
from agentic_executor.gateway_calls import GatewayCalls, PlacedCall, Shown, ToolPolicy
from agentic_executor.metrics import TOOL_ROUNDS, UPSTREAM_FIRST_EVENT_SECONDS
from agentic_executor.reasoning_seal import ReasoningSealer
from agentic_executor.upstream import UpstreamClient
from agentic_executor.usage import TurnMeter

__all__ = ["NextRound", "PublicEvent", "RoundResult", "Rounds", "ToolPolicy", "TurnDone"]


@dataclass(frozen=True, slots=True)
class TurnDone:
    """The round ended the turn."""

    so_far: TurnSoFar
    ending: TurnEnding


@dataclass(frozen=True, slots=True)
class NextRound:
    """Another round follows, with this upstream body."""

    so_far: TurnSoFar
    body: dict[str, Any]


RoundResult = TurnDone | NextRound


@dataclass(frozen=True, slots=True)
class _OpenRound:
    """A round read, its items shown up to its gateway calls, which are placed but not run yet."""

    reading: RoundReading
    shown: Shown
    placed: list[PlacedCall]


class Rounds:
    def __init__(
        self, upstream: UpstreamClient, calls: GatewayCalls, policy: ToolPolicy, *, route: ModelRoute,
        guard: ContextGuard | None = None, reasoning: ReasoningSealer | None = None,
    ) -> None:
        self.upstream = upstream
        # The public form of reasoning items (sealed when asked for); the model's continuation keeps its own.
        self.reasoning = reasoning or ReasoningSealer()
        self.calls = calls
        self.policy = policy
        self.route = route
        self.guard = guard  # before each round: compaction over the threshold, the context window
        self.meter = TurnMeter()  # the turn as of its last round answered: its usage, should it be cut short

    async def run_json(self, body: dict[str, Any], so_far: TurnSoFar) -> TurnDone:
        """Rounds until one ends the turn (the last allowed round always does)."""
        while True:
            guarded = await self._guarded(body, so_far, started=so_far.rounds > 0)
            if isinstance(guarded, TurnDone):
                return guarded
            body, so_far = guarded.body, guarded.so_far
            result = await self.json_round(body, so_far)
            if isinstance(result, TurnDone):
                TOOL_ROUNDS.observe(result.so_far.rounds)
                return result
            body, so_far = result.body, result.so_far

    async def run_stream(
        self, body: dict[str, Any], so_far: TurnSoFar, opening: list[Event], events: EventSequencer
    ) -> AsyncIterator[PublicEvent | TurnDone]:
        """The turn's public events, `opening` first once the model server answered, then how it ended. `events`:
        the turn's one sequencer, which numbers them."""
        pending_opening: list[Event] | None = opening
        while True:
            guarded = await self._guarded(body, so_far, started=pending_opening is None)
            if isinstance(guarded, TurnDone):
                yield guarded
                return
            body, so_far = guarded.body, guarded.so_far
            if pending_opening is not None:
                pending_opening = [*pending_opening, *guarded.events]
            else:
                for event in guarded.events:
                    yield events.emit(event)
            result: RoundResult | None = None
            async for step in self.stream_round(body, so_far, pending_opening, events):
                if isinstance(step, tuple):
                    yield step
                else:
                    result = step
            assert result is not None, "a round always ends with its result"
            if isinstance(result, TurnDone):
                TOOL_ROUNDS.observe(result.so_far.rounds)
                yield result
                return
            body, so_far, pending_opening = result.body, result.so_far, None

    async def _guarded(self, body: dict[str, Any], so_far: TurnSoFar, *, started: bool) -> Guarded | TurnDone:
        """The context checks before a round; their refusal is a plain error until the turn has started, then ends
        it failed (rounds already ran)."""
        if self.guard is None:
            return Guarded(body, so_far, [])
        try:
            return await self.guard.before_round(body, so_far)
        except AgenticError as error:
            if not started:
                raise
            return TurnDone(so_far, TurnEnding("failed", error={"code": error.code or "invalid_request",
                                                                "message": error.message}))

    async def json_round(self, body: dict[str, Any], so_far: TurnSoFar) -> RoundResult:
        so_far = replace(so_far, rounds=so_far.rounds + 1)
        clock = time.perf_counter()
        outcome = outcome_from_json(await self.upstream.create_response(self.route, body), self.calls.registry.public_item)
        self._observe_first_answer(so_far, clock)
        opened = self._open(outcome, so_far)
        finished = self.calls.finish(opened.placed, await self.calls.run(opened.reading.gateway_calls), opened.shown.so_far)
        return self._result(body, outcome, opened.reading, finished.so_far.shown(opened.reading.shown_last), finished.outputs)

    async def stream_round(
        self, body: dict[str, Any], so_far: TurnSoFar, opening: list[Event] | None, sequencer: EventSequencer
    ) -> AsyncIterator[PublicEvent | RoundResult]:
        """Yields the round's public events, then its `RoundResult`. `opening`: the events that start the public
        stream, or None once it has started. Errors before it starts propagate (a plain error for the client);
        later ones fail the turn."""
        so_far = replace(so_far, rounds=so_far.rounds + 1)
        translator = StreamTranslator(sequencer, index_offset=so_far.next_index, is_hidden=self.calls.is_gateway_call,
                                      present=self.calls.registry.public_item, show=self.reasoning,
                                      annotate=self.calls.citations.stream_events if self.calls.cites_files else None)
        clock = time.perf_counter()
        upstream_events = self.upstream.stream_response(self.route, body)
        started = opening is None
        try:
            first_event = await anext(upstream_events, None)
            self._observe_first_answer(so_far, clock)
            self.meter.answered(so_far)  # answered: a request made, should the round be cut before its usage arrives
            for event in opening or []:
                yield sequencer.emit(event)
            started = True
            async for public_event in _translated(first_event, upstream_events, translator):
                yield public_event
            outcome = translator.outcome() or _ended_early()
        except AgenticError as error:
            if not started:
                raise
            outcome = RoundOutcome(status="failed", output=[], error={"code": error.code or "upstream_error",
                                                                      "message": error.message})
        finally:
            await upstream_events.aclose()
        opened = self._open(outcome, so_far)
        for event in opened.shown.events + [event for call in opened.placed for event in call.opening()]:
            yield sequencer.emit(event)
        finished = self.calls.finish(opened.placed, await self.calls.run(opened.reading.gateway_calls), opened.shown.so_far)
        for event in [event for closing in finished.closings for event in closing]:
            yield sequencer.emit(event)
        # The round's items after its first gateway call follow that call's public items (the model's order).
        for public_event in translator.release_deferred(finished.so_far.next_index):
            yield public_event
        yield self._result(body, outcome, opened.reading, finished.so_far.shown(opened.reading.shown_last),
                           finished.outputs)

    def _open(self, outcome: RoundOutcome, so_far: TurnSoFar) -> _OpenRound:
        outcome.output = self.calls.annotated(outcome.output)
        reading = read_round(outcome, self.calls.registry, round_number=so_far.rounds, max_rounds=self.policy.max_rounds)
        reading = replace(reading, shown_first=self.reasoning.all(reading.shown_first),
                          shown_last=self.reasoning.all(reading.shown_last))
        so_far = so_far.counted(outcome.usage).shown(reading.shown_first).continued(reading.continuation)
        self.meter.answered(so_far)
        shown = self.calls.approval_requests(reading.awaiting_approval, so_far)
        return _OpenRound(reading, shown, self.calls.place(reading.gateway_calls, shown.so_far.next_index))

    @staticmethod
    def _result(
        body: dict[str, Any], outcome: RoundOutcome, reading: RoundReading, so_far: TurnSoFar, call_outputs: list[Item]
    ) -> RoundResult:
        so_far = so_far.continued(call_outputs)
        if reading.ending is not None:
            return TurnDone(so_far, reading.ending)
        return NextRound(so_far, next_round_request(body, outcome.output, call_outputs))

    @staticmethod
    def _observe_first_answer(so_far: TurnSoFar, clock: float) -> None:
        if so_far.rounds == 1:
            UPSTREAM_FIRST_EVENT_SECONDS.observe(time.perf_counter() - clock)


async def _translated(
    first_event: dict[str, Any] | None, upstream_events: AsyncIterator[dict[str, Any]], translator: StreamTranslator
) -> AsyncIterator[PublicEvent]:
    """The public events of one upstream stream, up to its terminal event."""
    if first_event is None:
        return
    for translated in translator.translate(first_event):
        yield translated
    async for event in upstream_events:
        for translated in translator.translate(event):
            yield translated
        if translator.finished:
            break


def _ended_early() -> RoundOutcome:
    return RoundOutcome(status="failed", output=[], error={"code": "upstream_incomplete",
                                                           "message": "The model server's stream ended before the "
                                                                      "response finished."})
