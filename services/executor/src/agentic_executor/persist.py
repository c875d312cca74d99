"""Storing a finished turn so that what the client is told is what the database holds.

A persist that times out (state or PostgreSQL stalled) may still commit later.
So it is retried, with the same response, while its outcome is unknown: the
state service accepts a retry of a turn that is stored byte for byte, so the
first retry that gets an answer says whether the turn is stored.
"""

from __future__ import annotations

import asyncio
import logging
import time

from agentic.v1 import state_pb2
from agentic_core.errors import AgenticError
from agentic_runtime.state.client import StateClient

log = logging.getLogger(__name__)
_UNKNOWN_OUTCOME = (503, 504)  # unreachable or too slow: the write may or may not have happened
_FIRST_RETRY_SECONDS = 0.25
_LONGEST_RETRY_SECONDS = 2.0


async def persist_until_known(state: StateClient, request: state_pb2.PersistTurnRequest, retry_seconds: float) -> None:
    """Returns once stored; raises when refused, or when the outcome stayed unknown for `retry_seconds`."""
    deadline = time.monotonic() + retry_seconds
    pause = _FIRST_RETRY_SECONDS
    while True:
        try:
            await state.persist_turn(request)
            return
        except AgenticError as error:
            if error.http_status not in _UNKNOWN_OUTCOME or time.monotonic() + pause > deadline:
                raise
            log.warning("persisting %s: outcome unknown (%s); retrying", request.response_id, error.message)
        await asyncio.sleep(pause)
        pause = min(pause * 2, _LONGEST_RETRY_SECONDS)
