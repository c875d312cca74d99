"""The `files.ingest` consumer: a durable JetStream pull consumer shared by every retrieval replica, each running
up to `concurrency` jobs. A running job tells NATS it is alive; a job whose worker dies (or stalls) is redelivered
after the ack wait; `RetryLater` is redelivered after a pause, a job cut by a drain at once; deliveries are bounded
(one more than the attempts, so that the last one can mark the file failed).

A job whose file another attempt holds is neither acknowledged nor refused: an acknowledgement from any delivery
removes the message from the work queue, so the one from a worker that stalled and was taken over would leave the
holder's file without a message should the holder die too."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from agentic_runtime.nats.worker import PullWorker, in_progress
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import BadRequestError
from prometheus_client import Counter

from agentic_retrieval.ingestion import Ingestor, Outcome, RetryLater
from agentic_retrieval.queue import DURABLE, FILES_STREAM_NAME, INGEST_SUBJECT, IngestJob

log = logging.getLogger(__name__)
FETCH_SECONDS = 1.0  # a pull request's life at the server, which outlives a cancelled fetch
JOBS = Counter("agentic_retrieval_ingest_jobs_total", "Ingestion jobs taken, by outcome.", ["outcome"])


class IngestConsumer:
    def __init__(self, client: Client, ingestor: Ingestor, *, concurrency: int, ack_wait: float, max_attempts: int,
                 durable: str = DURABLE) -> None:
        self.jetstream = client.jetstream()
        self.ingestor = ingestor
        self.concurrency = concurrency
        self.ack_wait = ack_wait
        self.max_deliver = max_attempts + 1
        self.durable = durable
        self.worker = PullWorker(self._fetch, self._handle, concurrency=concurrency, what="ingestion jobs")

    async def start(self) -> None:
        config = ConsumerConfig(name=self.durable, durable_name=self.durable, filter_subject=INGEST_SUBJECT,
                                ack_policy=AckPolicy.EXPLICIT, deliver_policy=DeliverPolicy.ALL,
                                ack_wait=self.ack_wait, max_deliver=self.max_deliver)
        try:
            await self.jetstream.add_consumer(FILES_STREAM_NAME, config)
        except BadRequestError as exc:
            log.warning("the %s consumer keeps its own settings: %s", self.durable, exc)
        self.subscription = await self.jetstream.pull_subscribe(INGEST_SUBJECT, durable=self.durable,
                                                                stream=FILES_STREAM_NAME, config=config)
        self.worker.start()

    async def stop(self, grace_seconds: float) -> None:
        """No new jobs; running ones get the grace time, then are cut and handed back (redelivered elsewhere at
        once). The grace is at least a pull request's life: a job handed back sooner would be delivered into this
        replica's last pull request, which nobody reads, and wait out the ack wait."""
        await self.worker.stop(max(grace_seconds, FETCH_SECONDS))
        with contextlib.suppress(Exception):
            await self.subscription.unsubscribe()

    async def _fetch(self, free: int) -> list[Msg]:
        return await self.subscription.fetch(free, timeout=FETCH_SECONDS)

    async def _handle(self, message: Msg) -> None:
        try:
            job = IngestJob.from_json(message.data)
        except (ValueError, KeyError, TypeError):
            log.warning("dropping a malformed ingestion job")
            await message.term()
            return
        beating = in_progress([message], self.ack_wait / 3, f"ingestion job {job.file_id}")
        try:
            outcome = await self.ingestor.ingest(job)
        except RetryLater as retry:
            JOBS.labels(outcome="retry").inc()
            log.warning("ingestion of %s will be retried: %s", job.file_id, retry)
            await _quietly(message.nak(delay=min(30.0, self.ack_wait)))
            return
        except asyncio.CancelledError:  # cut by a drain: another replica takes it now (the lease was given up)
            await asyncio.shield(_quietly(message.nak()))
            raise
        finally:
            beating.cancel()
        if outcome is Outcome.HELD_ELSEWHERE:
            JOBS.labels(outcome="held_elsewhere").inc()
            log.info("ingestion of %s is held by another attempt: its message is left to that one", job.file_id)
            return
        JOBS.labels(outcome="done").inc()
        await _quietly(message.ack())


async def _quietly(call: object) -> None:
    try:
        await call  # type: ignore[misc]
    except Exception as exc:  # the connection is gone: the job is redelivered
        log.warning("answering an ingestion job failed: %r", exc)
