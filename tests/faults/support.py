"""What the fault scenarios observe: clients of the stack, its database, its metrics, and the faults to inject."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from typing import Any

import asyncpg
import httpx
import orjson
from agentic_local.infra import EmbeddedNats, EmbeddedPostgres
from agentic_local.stack import LocalStack
from openai import OpenAI
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from tests.support.fake_upstream import FakeUpstream

TENANT = "tenant-faults"
API_KEY = "sk-faults"
MODEL = "smollm2"


class FaultStack:
    def __init__(self, stack: LocalStack) -> None:
        self.stack = stack

    @property
    def nats(self) -> EmbeddedNats:
        assert self.stack.nats is not None, "the fault suite's stack runs its own NATS"
        return self.stack.nats

    @property
    def postgres(self) -> EmbeddedPostgres:
        assert self.stack.postgres is not None, "the fault suite's stack runs its own PostgreSQL"
        return self.stack.postgres

    def client(self, timeout: float = 60.0) -> OpenAI:
        """No retries: what a scenario sees is what the gateway answered."""
        return OpenAI(base_url=self.stack.base_url, api_key=API_KEY, max_retries=0, timeout=timeout)

    def kill(self, name: str) -> None:
        """SIGKILL a service: no drain, no goodbye."""
        child = self.stack.service(name)
        child.process.send_signal(signal.SIGKILL)
        child.process.wait()

    def terminate(self, name: str) -> None:
        """SIGTERM a service (a rollout's stop), without waiting for it to exit."""
        self.stack.service(name).process.send_signal(signal.SIGTERM)

    def stall(self, name: str) -> None:
        """SIGSTOP a service: alive to the kernel and to its peers' sockets, silent to everyone."""
        self.stack.service(name).process.send_signal(signal.SIGSTOP)

    def unstall(self, name: str) -> None:
        self.stack.service(name).process.send_signal(signal.SIGCONT)

    def restart(self, name: str) -> None:
        self.stack.restart_service(name)

    def query(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        async def run() -> list[asyncpg.Record]:
            connection = await asyncpg.connect(self.stack.database_url)
            try:
                return list(await connection.fetch(sql, *args))
            finally:
                await connection.close()

        return asyncio.run(run())

    def stored_status(self, response_id: str) -> str | None:
        rows = self.query("SELECT status FROM responses WHERE id = $1", response_id)
        return str(rows[0]["status"]) if rows else None

    def stored_count(self) -> int:
        return int(self.query("SELECT count(*) AS n FROM responses")[0]["n"])

    def output_items(self, response_id: str) -> list[Any]:
        rows = self.query("SELECT item::text AS item FROM response_items WHERE response_id = $1 AND kind = 'output' "
                          "ORDER BY position", response_id)
        return [orjson.loads(row["item"]) for row in rows]

    def post(self, path: str, body: dict[str, Any], timeout: float = 60.0) -> httpx.Response:
        return httpx.post(self.stack.base_url + path, json=body, headers={"authorization": f"Bearer {API_KEY}"},
                          timeout=timeout)

    def stream(self, body: dict[str, Any], timeout: float = 90.0) -> tuple[int, list[dict[str, Any]]]:
        """A streamed turn: its status and its events (none when it was refused)."""
        with httpx.stream("POST", self.stack.base_url + "/responses", json={**body, "stream": True}, timeout=timeout,
                          headers={"authorization": f"Bearer {API_KEY}"}) as reply:
            text = reply.read().decode()
        events = [orjson.loads(line[len("data: "):]) for line in text.splitlines() if line.startswith("data: ")]
        return reply.status_code, events

    def conversation_items(self, conversation: str) -> int:
        return int(self.query("SELECT count(*) AS n FROM conversation_items WHERE conversation_id = $1",
                              conversation)[0]["n"])

    def metric(self, service: str, name: str) -> float:
        """The sum of a metric's samples (0 when it has none yet)."""
        text = httpx.get(self.stack.metrics_urls[service], timeout=5).text
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith(name) and (line[len(name):][:1] in (" ", "{")))


class SlowEmbeddings(FakeUpstream):
    """The fake model server whose embedding model takes `delay` seconds per request (settable while it runs): an
    ingestion that lasts long enough to be cut."""

    def __init__(self) -> None:
        super().__init__()
        self.delay = 0.0

    async def _embeddings(self, request: Request) -> Response:
        try:
            await request.body()  # read (and kept) before the pause
        except ClientDisconnect:  # a worker killed as it sent the request
            return Response(status_code=499)
        await asyncio.sleep(self.delay)
        return await super()._embeddings(request)


def wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)
