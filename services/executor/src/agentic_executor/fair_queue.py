"""Taking queued background turns fairly between tenants, on any number of executors.

Each tenant's turns wait on its own subject of the `BACKGROUND` work queue (agentic_runtime/nats/background_queue.py),
taken through its own durable pull consumer (a lane). An executor with a free slot works in rounds: it lists the
lanes that hold messages, then asks each lane in turn, least recently served first, for one turn (a pull that
answers at once, with a turn or with none). So a tenant's first turn waits for at most one turn of every other
tenant with work, whatever their backlogs, and executors need no coordination: each lane hands a message to one
of them. Messages that wait for redelivery (an executor was lost) are taken by the same pulls. An idle executor
looks again when a turn is queued (`WAKE_SUBJECT`) or after `IDLE_SECONDS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Iterable

import orjson
from agentic_runtime.nats.background_queue import STREAM, WAKE_SUBJECT, lane_durable, tenant_subject, turns_per_subject
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.errors import NoRespondersError
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError

log = logging.getLogger(__name__)

IDLE_SECONDS = 1.0  # also how soon a lost executor's turn is seen once its lease has run out
MAX_DELIVERIES = 20
LANE_IDLE_SECONDS = 86400.0  # a lane nobody has pulled for a day goes (made again when its tenant queues a turn)
_PULL = orjson.dumps({"batch": 1, "no_wait": True})
_PULL_TIMEOUT_SECONDS = 5.0


class LaneRotation:
    """The order lanes are asked in: each round visits every lane that has turns once, least recently served
    first (a lane never served, or idle since, goes first)."""

    def __init__(self) -> None:
        self._round: deque[str] = deque()
        self._served: dict[str, int] = {}
        self._takes = 0

    def start_round(self, lanes: Iterable[str]) -> None:
        present = set(lanes)
        self._served = {lane: take for lane, take in self._served.items() if lane in present}
        self._round = deque(sorted(present, key=lambda lane: (self._served.get(lane, -1), lane)))

    def next_lane(self) -> str | None:
        return self._round.popleft() if self._round else None

    def served(self, lane: str) -> None:
        self._takes += 1
        self._served[lane] = self._takes


class FairQueue:
    def __init__(self, client: Client, lease_seconds: float) -> None:
        self.client = client
        self.lease_seconds = lease_seconds
        self.rotation = LaneRotation()
        self._lanes: set[str] = set()  # lanes whose consumer this executor has made
        self._wake = asyncio.Event()
        self._wake_subscription: Subscription | None = None

    async def start(self) -> None:
        async def wake(_: Msg) -> None:
            self._wake.set()

        self._wake_subscription = await self.client.subscribe(WAKE_SUBJECT, cb=wake)

    async def close(self) -> None:
        if self._wake_subscription is not None:
            with contextlib.suppress(Exception):  # already gone with the connection
                await self._wake_subscription.unsubscribe()

    async def take(self) -> Msg:
        """The next turn to run, waiting for one."""
        took_any = True
        while True:
            lane = self.rotation.next_lane()
            if lane is None:
                if not took_any:  # a whole round found nothing: wait for a queued turn (or a lease to run out)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), IDLE_SECONDS)
                self._wake.clear()
                self.rotation.start_round(await self._lanes_with_turns())
                took_any = False
                continue
            message = await self._pull(lane)
            if message is not None:
                self.rotation.served(lane)
                took_any = True
                return message

    async def _lanes_with_turns(self) -> list[str]:
        try:
            return list(await turns_per_subject(self.client))
        except Exception as error:  # NATS reconnecting: look again shortly
            log.warning("listing queued background turns failed: %r", error)
            await asyncio.sleep(IDLE_SECONDS)
            return []

    async def _pull(self, lane: str) -> Msg | None:
        """One message of the lane if it has one now (a pull that does not wait), else None."""
        for _ in range(2):
            try:
                if lane not in self._lanes:
                    await self._make_lane(lane)
                # A reply of its own per pull (old-style request): the message comes on the lane's subject.
                message = await self.client.request(f"$JS.API.CONSUMER.MSG.NEXT.{STREAM}."
                                                    f"{lane_durable(lane)}", _PULL, timeout=_PULL_TIMEOUT_SECONDS,
                                                    old_style=True)
            except NoRespondersError:  # its consumer went (idle for a day): made again
                self._lanes.discard(lane)
                continue
            except Exception as error:  # NATS slow or reconnecting: the next round asks again
                log.warning("taking a background turn failed: %r", error)
                return None
            return None if (message.headers or {}).get("Status") else message  # a status: no message now
        return None

    async def _make_lane(self, lane: str) -> None:
        config = ConsumerConfig(durable_name=lane_durable(lane), filter_subject=lane, ack_policy=AckPolicy.EXPLICIT,
                                deliver_policy=DeliverPolicy.ALL, ack_wait=self.lease_seconds, max_ack_pending=-1,
                                max_deliver=MAX_DELIVERIES, inactive_threshold=LANE_IDLE_SECONDS)
        await self.client.jetstream().add_consumer(STREAM, config)
        self._lanes.add(lane)


async def drop_queued(client: Client, tenant: str, response_id: str) -> None:
    """Removes a cancelled turn's message before any executor took it, so that it stops holding its tenant's
    concurrency slot at once (the tenant's subject holds at most its queued and running turns)."""
    jetstream, subject, after = client.jetstream(), tenant_subject(tenant), 0
    try:
        while True:
            message = await jetstream.get_msg(STREAM, seq=after + 1, subject=subject, next=True)
            if message.seq is None:
                return
            if (message.headers or {}).get("Nats-Msg-Id") == response_id:
                await jetstream.delete_msg(STREAM, message.seq)
                return
            after = message.seq
    except NotFoundError:  # not there (taken meanwhile): its executor acknowledges it once it sees the cancel
        return
    except Exception as error:  # the executor that takes it acknowledges it after its claim sees the cancel
        log.warning("removing a cancelled background turn from the queue failed: %r", error)
