"""The background-turn queue's layout, shared by the executors (who queue and take turns) and the gateways (who
count each tenant's turns against its concurrency quota).

Each tenant's queued turns are the messages of its own subject on the `BACKGROUND` work queue; a message stays
there until the turn has ended (the executor that ran it acknowledges it then; a lost executor's is redelivered
after the lease and settled by the next). So the messages of a tenant's subject are its background turns not yet
ended, queued or running, and each subject is a lane the executors take from in turn."""

from __future__ import annotations

from agentic_core.usage.quotas import tenant_token
from nats.aio.client import Client
from nats.js.errors import NotFoundError

from agentic_runtime.nats.broker import BACKGROUND_STREAM

STREAM = str(BACKGROUND_STREAM.name)
SUBJECT_PREFIX = "background.turns"
# A core NATS message sent after each turn is queued: idle executors look at the queue at once.
WAKE_SUBJECT = "background.wake"
_DURABLE_PREFIX = "executor-background"


def tenant_subject(tenant: str) -> str:
    return f"{SUBJECT_PREFIX}.{tenant_token(tenant)}"


def lane_durable(subject: str) -> str:
    """The durable consumer that takes one lane's turns (`executor-background` for the unsplit subject)."""
    _, _, token = subject.partition(SUBJECT_PREFIX)
    return _DURABLE_PREFIX + token.replace(".", "-")


async def turns_per_subject(client: Client) -> dict[str, int]:
    """The messages of each subject of the queue (none before an executor has made it)."""
    try:
        info = await client.jetstream().stream_info(STREAM, subjects_filter=">")
    except NotFoundError:
        return {}
    return {subject: count for subject, count in (info.state.subjects or {}).items() if count > 0}


def turns_per_tenant(subjects: dict[str, int]) -> dict[str, int]:
    """By tenant token: each tenant's background turns not yet ended."""
    prefix = SUBJECT_PREFIX + "."
    return {subject[len(prefix):]: count for subject, count in subjects.items() if subject.startswith(prefix)}
