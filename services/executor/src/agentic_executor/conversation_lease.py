"""A turn on a conversation renews its lease while it runs, so the lease can be short.

A crashed executor then locks the conversation for one short lease at most,
not for the longest a turn may take. A renewal that fails because state is
briefly unreachable is retried at the next beat; a lease found lost (expired and
maybe taken) is logged, and the turn's persist will be refused.
"""

from __future__ import annotations

import logging

from agentic.v1 import common_pb2
from agentic_core.errors import AgenticError
from agentic_runtime.heartbeat import Heartbeat
from agentic_runtime.state.client import StateClient

log = logging.getLogger(__name__)
_BEATS_PER_LEASE = 3  # two renewals may fail (state restarting) before the lease runs out


class LeaseHeartbeat:
    def __init__(self, state: StateClient, principal: common_pb2.Principal, conversation_id: str, lease_token: str,
                 lease_seconds: float) -> None:
        self.state = state
        self.principal = principal
        self.conversation_id = conversation_id
        self.lease_token = lease_token
        self.lease_seconds = lease_seconds
        self._beat = Heartbeat(lease_seconds / _BEATS_PER_LEASE, self._renew, f"renewing the lease on {conversation_id}")

    async def stop(self) -> None:
        await self._beat.stop()

    async def _renew(self) -> bool:
        """False once the lease is lost: nothing is renewed after that."""
        try:
            await self.state.renew_conversation_turn(self.principal, self.conversation_id, self.lease_token,
                                                     self.lease_seconds)
        except AgenticError as error:
            if error.code == "conversation_lease_lost":
                log.error("the turn on %s lost its lease: %s", self.conversation_id, error.message)
                return False
            log.warning("renewing the lease on %s failed (retried): %s", self.conversation_id, error.message)
        return True
