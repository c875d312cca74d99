"""Vectors from any OpenAI-compatible `/v1/embeddings` server (vLLM, TEI, OpenAI...): batched, retried on the
server's failures, bounded in time. `NoEmbeddings` stands in when none is configured (keyword search only)."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Sequence
from typing import Protocol

import httpx
import orjson

log = logging.getLogger(__name__)
_RETRIED_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


class EmbeddingsFailed(Exception):
    """The server could not embed the inputs (after retries); the store file fails with `server_error`."""


class Embedder(Protocol):
    enabled: bool

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def close(self) -> None: ...


class NoEmbeddings:
    enabled = False

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbeddingsFailed("no embeddings server is configured")

    async def close(self) -> None:
        return None


def normalized(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(value * value for value in vector)) or 1.0
    return [value / norm for value in vector]


def mean_vector(vectors: Sequence[Sequence[float]]) -> list[float]:
    """The average direction of several windows' vectors (a chunk longer than the model's window)."""
    return normalized([sum(column) / len(vectors) for column in zip(*vectors, strict=True)])


class HttpEmbedder:
    enabled = True

    def __init__(self, base_url: str, model: str, api_key: str | None, *, batch_size: int, timeout: float,
                 retries: int, transport: httpx.AsyncBaseTransport | None = None) -> None:
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.AsyncClient(base_url=base_url.rstrip("/") + "/", headers=headers, timeout=timeout,
                                        transport=transport)
        self.model = model
        self.batch_size = batch_size
        self.retries = retries

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(await self._batch(list(texts[start:start + self.batch_size])))
        return vectors

    async def _batch(self, texts: list[str]) -> list[list[float]]:
        body = orjson.dumps({"model": self.model, "input": texts, "encoding_format": "float"})
        pause = 0.5
        for attempt in range(self.retries + 1):
            try:
                reply = await self.client.post("embeddings", content=body, headers={"content-type": "application/json"})
            except httpx.HTTPError as error:
                failure = f"the embeddings server could not be reached: {type(error).__name__}"
            else:
                if reply.status_code == 200:
                    return self._vectors(reply.content, len(texts))
                failure = f"the embeddings server answered {reply.status_code}: {reply.text[:300]}"
                if reply.status_code not in _RETRIED_STATUSES:
                    break
            if attempt < self.retries:
                log.warning("%s; retrying", failure)
                await asyncio.sleep(pause)
                pause *= 2
        raise EmbeddingsFailed(failure)

    @staticmethod
    def _vectors(content: bytes, expected: int) -> list[list[float]]:
        try:
            data = orjson.loads(content)["data"]
            ordered = sorted(data, key=lambda item: item["index"])
            vectors = [normalized([float(value) for value in item["embedding"]]) for item in ordered]
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            raise EmbeddingsFailed("the embeddings server's answer is not OpenAI's shape") from None
        if len(vectors) != expected or len({len(vector) for vector in vectors}) != 1:
            raise EmbeddingsFailed("the embeddings server answered with a different number or size of vectors")
        return vectors

    async def close(self) -> None:
        await self.client.aclose()
