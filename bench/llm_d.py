"""llm-d split execution: hydrate and persist latency (p50/p95) and requests/s on a 20-turn history.

Starts the stack with the local launcher (llm-d, state, PostgreSQL — no model
server is called: the coordinator's inference is not what is measured),
builds one chain of 20 turns through hydrate → persist, then measures with
one aiohttp client: hydrate continuing that chain, and persist of a turn
continuing it (JSON and SSE), at concurrency 16 (the target: ≤ 5 ms p50
each) and 1. Every persist uses its own context, hydrated before timing.
`make bench` runs it after the main benchmark; alone: `python -m bench.llm_d`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import aiohttp
import uvloop
from agentic_local.stack import LocalStack, StackConfig

from bench.figures import Figures, percentile

ROOT = Path(__file__).parents[1]
MODEL = "smollm2"
CONCURRENCY = 16
HISTORY_TURNS = 20
TOKEN_HEADER = "x-agentic-workload-token"
QUESTION = "Please summarise the previous answer in two sentences and add one new fact about the topic. " * 2
ANSWER = "Here is a two-sentence summary of the earlier answer, followed by one more fact that is relevant to it. " * 3


def model_json(text: str, index: int) -> dict:
    """A completed model response as vLLM returns it (one assistant message)."""
    item = {"id": f"msg_{index:08x}{os.urandom(8).hex()}", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": None}]}
    return {"id": f"resp_{os.urandom(8).hex()}", "object": "response", "created_at": int(time.time()), "model": MODEL,
            "status": "completed", "output": [item],
            "usage": {"input_tokens": 900, "output_tokens": 60, "total_tokens": 960}}


def model_sse(text: str, index: int) -> str:
    """The same turn as the SSE stream a streaming coordinator relayed (a delta per word)."""
    final = model_json(text, index)
    item = final["output"][0]
    opening = {**final, "status": "in_progress", "output": [], "usage": None}
    events = [{"type": "response.created", "response": opening}, {"type": "response.in_progress", "response": opening},
              {"type": "response.output_item.added", "output_index": 0, "item": {**item, "status": "in_progress", "content": []}},
              {"type": "response.content_part.added", "output_index": 0, "content_index": 0, "item_id": item["id"],
               "part": {"type": "output_text", "text": "", "annotations": []}}]
    events += [{"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": item["id"],
                "delta": word + " ", "logprobs": []} for word in text.split()]
    events += [{"type": "response.output_text.done", "output_index": 0, "content_index": 0, "item_id": item["id"], "text": text},
               {"type": "response.content_part.done", "output_index": 0, "content_index": 0, "item_id": item["id"],
                "part": item["content"][0]},
               {"type": "response.output_item.done", "output_index": 0, "item": item},
               {"type": "response.completed", "response": final}]
    return "".join(f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': n})}\n\n"
                   for n, event in enumerate(events))


class Coordinator:
    def __init__(self, client: aiohttp.ClientSession, base_url: str, token: str) -> None:
        self.client = client
        self.base_url = base_url
        self.headers = {TOKEN_HEADER: token, "content-type": "application/json"}

    async def post(self, path: str, body: bytes) -> dict:
        async with self.client.post(self.base_url + path, data=body, headers=self.headers) as reply:
            payload = await reply.read()
            if reply.status != 200:
                raise RuntimeError(f"{path} answered {reply.status}: {payload[:300]!r}")
            return json.loads(payload)

    async def hydrate(self, previous_response_id: str | None) -> dict:
        body = {"model": MODEL, "input": QUESTION}
        if previous_response_id:
            body["previous_response_id"] = previous_response_id
        return await self.post("/v1alpha/responses/hydrate", json.dumps(body).encode())

    async def chain(self, turns: int) -> str:
        head = None
        for index in range(turns):
            context = (await self.hydrate(head))["context"]
            head = (await self.post("/v1alpha/responses/persist",
                                    json.dumps({"context": context, "response": model_json(ANSWER, index)}).encode()))["id"]
        assert head is not None
        return head


async def _drive(send, bodies: list[bytes], concurrency: int) -> tuple[list[float], float]:
    latencies: list[float] = []
    queue = list(reversed(bodies))

    async def worker() -> None:
        while queue:
            body = queue.pop()
            started = time.perf_counter()
            await send(body)
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies, time.perf_counter() - started


def _figures(scenario: str, concurrency: int, latencies: list[float], elapsed: float) -> Figures:
    return Figures("llm-d", scenario, concurrency, len(latencies), round(percentile(latencies, 0.5) * 1000, 2),
                   round(percentile(latencies, 0.95) * 1000, 2), round(len(latencies) / elapsed, 1))


async def measure(base_url: str, token: str, requests: int) -> list[Figures]:
    connector = aiohttp.TCPConnector(limit=CONCURRENCY)
    results: list[Figures] = []
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120)) as client:
        coordinator = Coordinator(client, base_url, token)
        head = await coordinator.chain(HISTORY_TURNS)
        hydrate_body = json.dumps({"model": MODEL, "input": QUESTION, "previous_response_id": head}).encode()

        async def hydrate(body: bytes) -> None:
            await coordinator.post("/v1alpha/responses/hydrate", body)

        async def persist(body: bytes) -> None:
            await coordinator.post("/v1alpha/responses/persist", body)

        async def contexts(count: int) -> list[str]:
            hydrated: list[str] = []

            async def one(_: bytes) -> None:
                hydrated.append((await coordinator.hydrate(head))["context"])

            await _drive(one, [b""] * count, CONCURRENCY)
            return hydrated

        await _drive(hydrate, [hydrate_body] * (CONCURRENCY * 4), CONCURRENCY)  # warm-up
        for concurrency in (CONCURRENCY, 1):
            total = requests if concurrency > 1 else requests // 2
            results.append(_figures("hydrate-20-turns", concurrency, *await _drive(hydrate, [hydrate_body] * total, concurrency)))
        for form in ("json", "sse"):
            for concurrency in (CONCURRENCY, 1):
                total = requests if concurrency > 1 else requests // 2
                bodies = [json.dumps({"context": context, **({"response": model_json(ANSWER, n)} if form == "json"
                                                              else {"sse": model_sse(ANSWER, n)})}).encode()
                          for n, context in enumerate(await contexts(total))]
                results.append(_figures(f"persist-{form}-20-turns", concurrency, *await _drive(persist, bodies, concurrency)))
    return results


def report(results: list[Figures]) -> str:
    lines = ["| llm-d scenario | concurrency | p50 / p95 ms | requests/s |", "|---|---|---|---|"]
    lines += [f"| {f.scenario} | {f.concurrency} | {f.p50_ms} / {f.p95_ms} | {f.requests_per_s} |" for f in results]
    return "\n".join(lines)


def run(requests: int = 600, out: Path = ROOT / "bench" / "results" / "llm-d.json") -> list[Figures]:
    """Start a stack, measure, print the figures and a table, and write them to `out`."""
    with tempfile.TemporaryDirectory(prefix="agentic-bench-llm-d-") as data_dir:
        stack = LocalStack(StackConfig(
            data_dir=Path(data_dir), upstream_url="http://127.0.0.1:9/v1", gateway_port=0, llm_d_port=0,
            database_url=os.environ.get("AGENTIC_DATABASE_URL"), nats_url=os.environ.get("AGENTIC_NATS_URL"),
            extra_env={"AGENTIC_LOG_LEVEL": "WARNING"},
        ))
        stack.start()
        try:
            key_and_token = (Path(data_dir) / "llm-d.secrets").read_text().split()
            token = os.environ.get("AGENTIC_LLM_D_API_TOKEN") or key_and_token[1]
            results = uvloop.run(measure(stack.urls["llm-d"], token, requests))
        finally:
            stack.stop()
    for figures in results:
        print(json.dumps(asdict(figures)), flush=True)
    print()
    print(report(results))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([asdict(f) for f in results], indent=2))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=int(os.environ.get("BENCH_REQUESTS", "600")))
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "llm-d.json")
    args = parser.parse_args()
    run(args.requests, args.out)


if __name__ == "__main__":
    main()
