"""Retrieval: ingestion chunks per second with one worker, and search latency on a large store; then ingestion by
one worker against two.

    .venv/bin/python -m bench.retrieval [--corpus-mb 2] [--store-seconds 150] [--searches 300]
    .venv/bin/python -m bench.retrieval --parts workers [--workers-files 8] [--workers-file-mb 1]

Runs twice on a stack of its own (the local launcher, embedded PostgreSQL and NATS, one retrieval replica ingesting
one file at a time: AGENTIC_RETRIEVAL_INGEST_CONCURRENCY=1): keyword only (no embeddings server), then with the
fake model server's deterministic embeddings (tests/support/fake_upstream.py, model `fake-embedder`, 64
dimensions: the figures are the pipeline's, not an embedding model's). Each run indexes a generated text corpus of
`--corpus-mb` end to end (upload, add to a store, until `completed`), then grows the store with more such files for
about `--store-seconds` and times searches through the gateway (`POST /v1/vector_stores/{id}/search`, 10 results):
keyword, vector and hybrid as the run allows. Chunk counts are read from retrieval's own table. With embeddings it
also measures the HNSW index's recall@10 against exact search on the same store and queries (the query vectors are
the fake server's, computed here by the same function; ties at the tenth distance count as found).

The workers part runs a fresh stack per figure with one retrieval replica, then two (`LocalStack.add_retrieval`),
each taking one file at a time, and times one batch of `--workers-files` corpus files of `--workers-file-mb` from
its creation until `completed`, keyword only and with the fake embeddings (answered at once, so that the
embeddings server is not the limit); it reports chunks/s, the ratio of two workers to one, and the CPU seconds
the retrieval replicas (with their extraction processes), PostgreSQL and the fake embeddings server spent on it.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import numpy as np
from agentic_local import model_server
from agentic_local.processes import free_port, tcp_accepts, wait_until
from agentic_local.stack import LocalStack, StackConfig
from agentic_retrieval.settings import RetrievalSettings
from openai import OpenAI

from bench.figures import percentile
from bench.vector_search import recall_at_10

ROOT = Path(__file__).parents[1]
EMBEDDING_MODEL = "fake-embedder"  # tests/support/fake_upstream.py's embedding model
BUILT_IN_EMBEDDING_MODEL = model_server.EMBEDDING_SERVED_NAME  # `built-in` mode: what make run serves
_SYLLABLES = ["ka", "lo", "mi", "ren", "tas", "vo", "qui", "bel", "dor", "fen", "gra", "hul", "ist", "jo", "nym",
              "pra", "sel", "tur", "ux", "wen", "yar", "zo", "che", "dra"]


def _vocabulary(size: int, seed: int = 7) -> list[str]:
    chooser = random.Random(seed)
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(chooser.choice(_SYLLABLES) for _ in range(chooser.randint(1, 3))))
    return sorted(words)


VOCABULARY = _vocabulary(5000)


def corpus(megabytes: float, seed: int) -> bytes:
    """Sentences of words drawn with a skewed frequency (a few common, many rare), as text is."""
    chooser = random.Random(seed)
    weights = [1.0 / (rank + 1) for rank in range(len(VOCABULARY))]
    target = int(megabytes * 1024 * 1024)
    parts: list[str] = []
    size = 0
    while size < target:
        sentence = " ".join(chooser.choices(VOCABULARY, weights, k=chooser.randint(8, 20))).capitalize() + ". "
        if chooser.random() < 0.1:
            sentence += "\n\n"
        parts.append(sentence)
        size += len(sentence)
    return "".join(parts).encode()


@dataclass
class Run:
    mode: str
    corpus_bytes: int
    corpus_chunks: int
    corpus_seconds: float
    store_chunks: int
    store_files: int
    store_seconds: float
    search_ms: dict[str, tuple[float, float]]  # ranking -> (p50, p95)
    recall_at_10: float | None = None


async def _chunks(database_url: str, store_id: str) -> int:
    connection = await asyncpg.connect(database_url)
    try:
        return int(await connection.fetchval("SELECT count(*) FROM retrieval.chunks WHERE vector_store_id = $1", store_id))
    finally:
        await connection.close()


def _queries(count: int) -> list[str]:
    chooser = random.Random(11)
    return [" ".join(chooser.choices(VOCABULARY[:2000], k=chooser.randint(2, 5))) for _ in range(count)]


async def _recall_at_10(database_url: str, store_id: str, queries: list[str]) -> float:
    """The service's vector query with its HNSW index against exact search, for the fake embedder's query vectors."""
    from tests.support.fake_upstream import hashed_embedding

    ef_search = RetrievalSettings.model_fields["hnsw_ef_search"].default
    return await recall_at_10(database_url, store_id, np.array([hashed_embedding(query) for query in queries]),
                              int(os.environ.get("AGENTIC_RETRIEVAL_HNSW_EF_SEARCH", ef_search)))


def _wait_store_file(client: OpenAI, store_id: str, file_id: str) -> None:
    while (done := client.vector_stores.files.retrieve(file_id, vector_store_id=store_id)).status == "in_progress":
        time.sleep(0.02)
    if done.status != "completed":
        raise RuntimeError(f"ingestion ended {done.status}: {done.last_error}")


def _wait_batch(client: OpenAI, store_id: str, batch_id: str) -> None:
    while (batch := client.vector_stores.file_batches.retrieve(batch_id, vector_store_id=store_id)).status == "in_progress":
        time.sleep(0.2)
    if batch.file_counts.completed != batch.file_counts.total:
        raise RuntimeError(f"batch ended {batch.status}: {batch.file_counts}")


def _searches(base_url: str, store_id: str, count: int, rankings: dict[str, dict[str, Any]]) -> dict[str, tuple[float, float]]:
    queries = _queries(count)
    figures = {}
    with httpx.Client(base_url=base_url, timeout=60) as http:
        for name, options in rankings.items():
            latencies = []
            for index, query in enumerate(queries[:20] + queries):  # the first 20: warm-up, not counted
                body = {"query": query, "max_num_results": 10, **options}
                started = time.perf_counter()
                reply = http.post(f"/vector_stores/{store_id}/search", json=body)
                elapsed = time.perf_counter() - started
                reply.raise_for_status()
                if index >= 20:
                    latencies.append(elapsed * 1000)
            figures[name] = (percentile(latencies, 0.5), percentile(latencies, 0.95))
    return figures


def _stack(data_dir: Path, upstream_url: str, embeddings_url: str | None, embeddings_model: str) -> LocalStack:
    """A stack of its own with one retrieval replica taking one file at a time; keyword only without embeddings."""
    extra_env = {"AGENTIC_LOG_LEVEL": "WARNING", "AGENTIC_RETRIEVAL_INGEST_CONCURRENCY": "1",
                 "AGENTIC_GATEWAY_MAX_FILE_BYTES": str(64 * 1024 * 1024)}
    extra_env |= ({"AGENTIC_EMBEDDINGS_URL": embeddings_url, "AGENTIC_EMBEDDINGS_MODEL": embeddings_model}
                  if embeddings_url else {"AGENTIC_EMBEDDINGS_URL": ""})
    return LocalStack(StackConfig(
        data_dir=data_dir, upstream_url=upstream_url, gateway_port=0, llm_d_port=0,
        database_url=os.environ.get("AGENTIC_DATABASE_URL"), nats_url=os.environ.get("AGENTIC_NATS_URL"),
        extra_env=extra_env,
    ))


def run_mode(mode: str, embeddings_url: str | None, upstream_url: str, corpus_mb: float, store_seconds: float,
             searches: int, data_dir: Path) -> Run:
    model = BUILT_IN_EMBEDDING_MODEL if mode == "built-in" else EMBEDDING_MODEL
    stack = _stack(data_dir, upstream_url, embeddings_url, model)
    stack.start()
    try:
        with OpenAI(base_url=stack.base_url, api_key="none", max_retries=0, timeout=600) as client:
            store = client.vector_stores.create(name=f"bench-{mode}")
            text = corpus(corpus_mb, seed=1)
            uploaded = client.files.create(file=("corpus-1.txt", io.BytesIO(text)), purpose="assistants")
            started = time.perf_counter()
            client.vector_stores.files.create(vector_store_id=store.id, file_id=uploaded.id)
            _wait_store_file(client, store.id, uploaded.id)
            corpus_seconds = time.perf_counter() - started
            corpus_chunks = asyncio.run(_chunks(stack.database_url, store.id))

            # Grow the store for about `store_seconds`: batches of a few corpus files, one worker, until time is up.
            started = time.perf_counter()
            files, seed = 1, 2
            per_file = max(1.0, corpus_seconds)
            while time.perf_counter() - started + per_file * 2 < store_seconds:
                batch_files = max(1, min(8, int((store_seconds - (time.perf_counter() - started)) / per_file) // 2))
                ids = []
                for _ in range(batch_files):
                    ids.append(client.files.create(file=(f"corpus-{seed}.txt", io.BytesIO(corpus(corpus_mb, seed))),
                                                   purpose="assistants").id)
                    seed += 1
                batch = client.vector_stores.file_batches.create(vector_store_id=store.id, file_ids=ids)
                _wait_batch(client, store.id, batch.id)
                files += batch_files
            store_seconds_taken = time.perf_counter() - started + corpus_seconds
            store_chunks = asyncio.run(_chunks(stack.database_url, store.id))

        rankings: dict[str, dict[str, Any]] = {"keyword" if not embeddings_url else "vector": {}}
        if embeddings_url:
            rankings["hybrid"] = {"ranking_options": {"hybrid_search": {"embedding_weight": 0.5, "text_weight": 0.5}}}
        search_ms = _searches(stack.base_url, store.id, searches, rankings)
        recall = (asyncio.run(_recall_at_10(stack.database_url, store.id, _queries(min(searches, 200))))
                  if mode == "embeddings" else None)  # hashed query vectors: the fake embedder's only
    finally:
        stack.stop()
    return Run(mode, len(text), corpus_chunks, corpus_seconds, store_chunks, files, store_seconds_taken, search_ms, recall)


def report(runs: list[Run]) -> str:
    lines = ["", "Retrieval (one ingestion worker, AGENTIC_RETRIEVAL_INGEST_CONCURRENCY=1):", "",
             "| mode | corpus | chunks | indexed in | chunks/s | KB/s |", "|---|---|---|---|---|---|"]
    for run in runs:
        lines.append(f"| {run.mode} | {run.corpus_bytes / 1024 / 1024:.1f} MB | {run.corpus_chunks} | "
                     f"{run.corpus_seconds:.2f} s | {run.corpus_chunks / run.corpus_seconds:.0f} | "
                     f"{run.corpus_bytes / 1024 / run.corpus_seconds:.0f} |")
    lines += ["", "| mode | store | ranking | search p50 | p95 |", "|---|---|---|---|---|"]
    for run in runs:
        for ranking, (p50, p95) in run.search_ms.items():
            lines.append(f"| {run.mode} | {run.store_chunks} chunks ({run.store_files} files, built in "
                         f"{run.store_seconds:.0f} s) | {ranking} | {p50:.1f} ms | {p95:.1f} ms |")
    for run in runs:
        if run.recall_at_10 is not None:
            lines.append(f"\nHNSW recall@10 against exact search ({run.mode}, {run.store_chunks} chunks, ef_search 100): "
                         f"{run.recall_at_10:.3f}")
    return "\n".join(lines)


@dataclass
class WorkersRun:
    mode: str
    workers: int
    files: int
    corpus_bytes: int
    chunks: int
    seconds: float
    cpu_seconds: dict[str, float]  # by process (retrieval replicas with their extraction children, postgres, ...)

    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.seconds


def _cpu_ticks(pid: int) -> int:
    """User + system ticks of a process and of its children it waited for (retrieval's extraction processes)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15])


def _cpu(stack: LocalStack, embedder_pid: int | None) -> dict[str, float]:
    from bench.cpu import cpu_seconds, stack_pids

    pids = stack_pids(stack)
    totals = cpu_seconds({name: pid for name, pid in pids.items() if name in ("postgres", "nats", "gateway")})
    tick = 1.0 / os.sysconf("SC_CLK_TCK")
    totals["retrieval"] = sum(_cpu_ticks(pid) for name, pid in pids.items() if name.startswith("retrieval")) * tick
    if embedder_pid is not None:
        totals["embeddings server"] = _cpu_ticks(embedder_pid) * tick
    return totals


def run_workers(mode: str, embeddings_url: str | None, upstream_url: str, workers: int, files: int, file_mb: float,
                data_dir: Path, embedder_pid: int | None = None) -> WorkersRun:
    """`files` corpus files added in one batch to a store, ingested by `workers` replicas taking one file at a time
    each; timed from the batch's creation until it is `completed`."""
    stack = _stack(data_dir, upstream_url, embeddings_url, EMBEDDING_MODEL)
    stack.start()
    try:
        for _ in range(workers - 1):
            stack.add_retrieval()
        with OpenAI(base_url=stack.base_url, api_key="none", max_retries=0, timeout=600) as client:
            store = client.vector_stores.create(name=f"bench-workers-{mode}-{workers}")
            texts = [corpus(file_mb, seed=100 + index) for index in range(files)]
            ids = [client.files.create(file=(f"part-{index}.txt", io.BytesIO(text)), purpose="assistants").id
                   for index, text in enumerate(texts)]
            before = _cpu(stack, embedder_pid)
            started = time.perf_counter()
            batch = client.vector_stores.file_batches.create(vector_store_id=store.id, file_ids=ids)
            _wait_batch(client, store.id, batch.id)
            seconds = time.perf_counter() - started
            after = _cpu(stack, embedder_pid)
        chunks = asyncio.run(_chunks(stack.database_url, store.id))
    finally:
        stack.stop()
    spent = {name: after[name] - before.get(name, 0.0) for name in after}
    return WorkersRun(mode, workers, files, sum(len(text) for text in texts), chunks, seconds, spent)


def workers_report(runs: list[WorkersRun]) -> str:
    """The figures, and what CPU alone would allow: a worker takes one file at a time and waits for PostgreSQL
    between its own steps, so one worker's pipeline is serial; two can at best keep every core busy."""
    cores = os.cpu_count() or 1
    lines = ["", "Ingestion by one and by two retrieval workers (AGENTIC_RETRIEVAL_INGEST_CONCURRENCY=1 each; one batch):",
             "", "| mode | workers | files | chunks | indexed in | chunks/s | two / one | CPU s: retrieval, postgres, "
             "embeddings server | CPU ms per chunk, all |", "|---|---|---|---|---|---|---|---|---|"]
    one = {run.mode: run for run in runs if run.workers == 1}
    for run in runs:
        ratio = f"{run.chunks_per_second / one[run.mode].chunks_per_second:.2f}x" \
            if run.workers > 1 and run.mode in one else ""
        cpu = ", ".join(f"{run.cpu_seconds.get(name, 0.0):.1f}" for name in ("retrieval", "postgres", "embeddings server"))
        lines.append(f"| {run.mode} | {run.workers} | {run.files} x {run.corpus_bytes / run.files / 1024 / 1024:.1f} MB | "
                     f"{run.chunks} | {run.seconds:.2f} s | {run.chunks_per_second:.0f} | {ratio} | {cpu} | "
                     f"{1000 * sum(run.cpu_seconds.values()) / run.chunks:.2f} |")
    for run in runs:
        if run.workers > 1 and run.mode in one:
            ceiling = cores * run.chunks / sum(run.cpu_seconds.values())
            serial = one[run.mode].chunks / sum(one[run.mode].cpu_seconds.values())
            lines.append(f"\n{run.mode}: on {cores} free cores CPU alone would allow {ceiling:.0f} chunks/s with "
                         f"{run.workers} workers and {serial:.0f} with one (its steps in turn): at best "
                         f"{ceiling / serial:.2f}x.")
    return "\n".join(lines)


def run_workers_benchmarks(files: int = 8, file_mb: float = 1.0, modes: tuple[str, ...] = ("keyword", "embeddings"),
                           worker_counts: tuple[int, ...] = (1, 2)) -> str:
    port = free_port()
    fake = subprocess.Popen([sys.executable, "-m", "tests.support.fake_upstream", "--port", str(port)], cwd=ROOT)
    runs = []
    try:
        wait_until(lambda: tcp_accepts(port), 30, "fake model server")
        upstream_url = f"http://127.0.0.1:{port}/v1"
        for mode in modes:
            for workers in worker_counts:
                with tempfile.TemporaryDirectory(prefix=f"agentic-bench-workers-{mode}-") as folder:
                    runs.append(run_workers(mode, upstream_url if mode == "embeddings" else None, upstream_url,
                                            workers, files, file_mb, Path(folder),
                                            fake.pid if mode == "embeddings" else None))
                    print(runs[-1], flush=True)
    finally:
        fake.terminate()
        fake.wait()
    return workers_report(runs)


def run_retrieval_benchmarks(corpus_mb: float = 2.0, store_seconds: float = 150.0, searches: int = 300,
                             modes: tuple[str, ...] = ("keyword", "embeddings")) -> str:
    port = free_port()
    fake = subprocess.Popen([sys.executable, "-m", "tests.support.fake_upstream", "--port", str(port)], cwd=ROOT)
    runs = []
    try:
        wait_until(lambda: tcp_accepts(port), 30, "fake model server")
        upstream_url = f"http://127.0.0.1:{port}/v1"
        for mode in modes:
            with tempfile.TemporaryDirectory(prefix=f"agentic-bench-retrieval-{mode}-") as folder:
                if mode == "built-in":  # all-MiniLM-L6-v2 on vLLM's pooling runner, as `make run` serves it
                    embeddings_port = free_port()
                    embeddings = model_server.start_embeddings(embeddings_port, Path(folder) / "embeddings.log",
                                                               model_server.prepare(progress=lambda line: None))
                    try:
                        runs.append(run_mode(mode, model_server.base_url(embeddings_port), upstream_url, corpus_mb,
                                             store_seconds, searches, Path(folder)))
                    finally:
                        embeddings.stop(30.0)
                else:
                    runs.append(run_mode(mode, upstream_url if mode == "embeddings" else None, upstream_url,
                                         corpus_mb, store_seconds, searches, Path(folder)))
                print(runs[-1], flush=True)
    finally:
        fake.terminate()
        fake.wait()
    return report(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus-mb", type=float, default=2.0)
    parser.add_argument("--store-seconds", type=float, default=150.0)
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--modes", default="keyword,embeddings",
                        help="keyword, embeddings (the fake model server's), built-in (all-MiniLM-L6-v2 on vLLM as "
                             "make run serves it; prepared once, about 3.7 GB)")
    parser.add_argument("--parts", default="search,workers",
                        help="search: one worker's ingestion and search; workers: one worker against two")
    parser.add_argument("--workers-files", type=int, default=8)
    parser.add_argument("--workers-file-mb", type=float, default=1.0)
    args = parser.parse_args()
    modes, parts = tuple(args.modes.split(",")), args.parts.split(",")
    if "search" in parts:
        print(run_retrieval_benchmarks(args.corpus_mb, args.store_seconds, args.searches, modes))
    if "workers" in parts:
        print(run_workers_benchmarks(args.workers_files, args.workers_file_mb, modes))


if __name__ == "__main__":
    main()
