"""Search over a tenant's stores: vector (cosine on the chunks' embeddings), keyword (PostgreSQL full text) and
hybrid (reciprocal rank fusion of both, weighted). Scores are in [0, 1]:

- vector: the cosine similarity of query and chunk, floored at 0;
- keyword: `ts_rank_cd` (length-normalised) mapped by rank / (rank + 1);
- hybrid: the weighted fusion sum(w / (60 + rank)) divided by its best possible value, so 1 is first in both.

`score_threshold` drops results below it. Only completed store files are searched; filters apply to their
attributes. One `Searcher` serves the Vector Stores API and (later) the file_search tool."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import orjson
from agentic_core.errors import InvalidRequest
from agentic_core.tools import search_options

from agentic_retrieval.embeddings import Embedder, EmbeddingsFailed
from agentic_retrieval.filters import filter_condition
from agentic_retrieval.ingestion import vector_text
from agentic_retrieval.query_rewrite import rewritten_queries
from agentic_retrieval.stores import VectorStores

log = logging.getLogger(__name__)
RRF_K = 60
MAX_RESULTS = 50
DEFAULT_RESULTS = 10
MAX_QUERIES = 10
MAX_QUERY_CHARS = 4096


@dataclass
class Hit:
    vector_store_id: str
    file_id: str
    position: int
    filename: str
    attributes: dict[str, Any]
    content: str
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"file_id": self.file_id, "filename": self.filename, "score": round(self.score, 6),
                "attributes": self.attributes, "content": [{"type": "text", "text": self.content}]}


@dataclass(frozen=True)
class SearchOutcome:
    queries: list[str]
    hits: list[Hit]

    def page(self) -> bytes:
        return orjson.dumps({"object": "vector_store.search_results.page", "search_query": self.queries,
                             "data": [hit.to_json() for hit in self.hits], "has_more": False, "next_page": None})


_CANDIDATE_COLUMNS = """c.vector_store_id, c.file_id, c.position, c.content, f.filename, sf.attributes"""
_CANDIDATE_JOINS = """
  FROM retrieval.chunks c
  JOIN retrieval.store_files sf ON sf.tenant = c.tenant AND sf.vector_store_id = c.vector_store_id
                               AND sf.file_id = c.file_id AND sf.status = 'completed'
  JOIN retrieval.files f ON f.tenant = c.tenant AND f.id = c.file_id
"""


class Searcher:
    def __init__(self, pool: asyncpg.Pool, stores: VectorStores, embedder: Embedder, *, vectors: bool,
                 candidates: int, ef_search: int, iterative_scan: bool, keyword_max_ranked: int = 10_000) -> None:
        self.pool = pool
        self.stores = stores
        self.embedder = embedder
        self.vectors = vectors and embedder.enabled
        self.candidates = candidates
        self.ef_search = ef_search
        self.iterative_scan = iterative_scan
        self.keyword_max_ranked = keyword_max_ranked

    async def search(self, tenant: str, store_ids: Sequence[str], queries: Sequence[str], filters: Any,
                     max_num_results: int, ranking_options: Any, rewrite_query: bool = False) -> SearchOutcome:
        queries = _queries(queries)
        if rewrite_query:
            queries = rewritten_queries(queries)
        limit = max_num_results or DEFAULT_RESULTS
        if not 1 <= limit <= MAX_RESULTS:
            raise InvalidRequest(f"Invalid 'max_num_results': expected 1 to {MAX_RESULTS}.", param="max_num_results",
                                 code="invalid_value")
        options = search_options.ranking_options(ranking_options)
        condition, filter_parameters = filter_condition(filters, "sf.attributes", 4)  # validated before any query
        if not store_ids:
            raise InvalidRequest("Name at least one vector store.", param="vector_store_ids", code="invalid_value")
        await self.stores.require_stores(tenant, store_ids)
        scope = (tenant, list(dict.fromkeys(store_ids)))
        keyword = await self._keyword(scope, queries, condition, filter_parameters)
        if not self.vectors:
            hits = keyword
        else:
            try:
                semantic = await self._vector(scope, queries, condition, filter_parameters)
            except EmbeddingsFailed as failed:  # the server is down: keywords still answer
                log.warning("vector search fell back to keywords: %s", failed)
                semantic = None
            if semantic is None:
                hits = keyword
            elif options.hybrid:
                hits = _fused(semantic, keyword, options.embedding_weight or 0.0, options.text_weight or 0.0)
            else:
                hits = semantic
        kept = [hit for hit in hits if hit.score >= options.score_threshold][:limit]
        return SearchOutcome(queries, kept)

    async def _keyword(self, scope: tuple[str, list[str]], queries: list[str], condition: str,
                       parameters: list[Any]) -> list[Hit]:
        """Chunks holding every word of a query first; when they are fewer than the candidates, chunks holding any of
        its words (questions rarely contain every term). Each pass ranks at most `keyword_max_ranked` matching chunks,
        so a query of words found in most of a large store costs a bounded scan. Scores are the same in both passes:
        `ts_rank_cd` against any of the words (stemmed)."""
        strict = await self._keyword_pass(scope, queries, condition, parameters, every_word=True)
        if len(strict) >= self.candidates:
            return _hits(strict, "keyword")
        loose = await self._keyword_pass(scope, queries, condition, parameters, every_word=False)
        rows = {(row["vector_store_id"], row["file_id"], row["position"]): row for row in [*loose, *strict]}
        ranked = sorted(rows.values(), key=lambda row: (-row["score"], row["file_id"], row["position"]))
        return _hits(ranked[:self.candidates], "keyword")

    async def _keyword_pass(self, scope: tuple[str, list[str]], queries: list[str], condition: str,
                            parameters: list[Any], every_word: bool) -> list[asyncpg.Record]:
        joiner = " & " if every_word else " | "
        return await self.pool.fetch(
            f"""WITH words AS (SELECT ARRAY(SELECT quote_literal(lexeme) FROM unnest(tsvector_to_array(
                    to_tsvector('english', query))) lexeme) AS lexemes FROM unnest($3::text[]) query),
                 q AS (SELECT to_tsquery('simple', coalesce(string_agg(array_to_string(lexemes, ' | '), ' | '), ''))
                              AS ranked,
                              to_tsquery('simple', coalesce(string_agg('(' || array_to_string(lexemes, '{joiner}') || ')', ' | '),
                                                            '')) AS matched
                       FROM words WHERE cardinality(lexemes) > 0)
            SELECT m.vector_store_id, m.file_id, m.position, m.content, m.filename, m.attributes,
                   ts_rank_cd(m.text_search, q.ranked, 1 | 32) AS score
            FROM (SELECT {_CANDIDATE_COLUMNS}, c.text_search {_CANDIDATE_JOINS} CROSS JOIN q
                  WHERE c.tenant = $1 AND c.vector_store_id = ANY($2::text[]) AND c.text_search @@ q.matched
                    AND {condition}
                  LIMIT {int(self.keyword_max_ranked)}) m CROSS JOIN q
            ORDER BY score DESC, m.file_id, m.position LIMIT {self.candidates}""",
            *scope, queries, *parameters)

    async def _vector(self, scope: tuple[str, list[str]], queries: list[str], condition: str,
                      parameters: list[Any]) -> list[Hit]:
        best: dict[tuple[str, str, int], Hit] = {}
        vectors = await self.embedder.embed(queries)
        dimensions = len(vectors[0])
        typed = f"(c.embedding::vector({dimensions}))"
        async with self.pool.acquire() as connection, connection.transaction():
            await connection.execute(f"SET LOCAL hnsw.ef_search = {int(self.ef_search)}")
            if self.iterative_scan:  # pgvector 0.8+: keep scanning the index until enough rows pass the filters
                await connection.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            for vector in vectors:
                rows = await connection.fetch(
                    f"""SELECT * FROM (SELECT {_CANDIDATE_COLUMNS}, {typed} <=> $3::vector({dimensions}) AS distance
                    {_CANDIDATE_JOINS}
                    WHERE c.tenant = $1 AND c.vector_store_id = ANY($2::text[]) AND c.dimensions = {dimensions}
                      AND {condition}
                    ORDER BY distance LIMIT {self.candidates}) ranked ORDER BY distance, file_id, position""",
                    *scope, vector_text(vector), *parameters)
                for hit in _hits(rows, "vector"):
                    key = (hit.vector_store_id, hit.file_id, hit.position)
                    if key not in best or best[key].score < hit.score:
                        best[key] = hit
        return sorted(best.values(), key=lambda hit: -hit.score)


def _queries(queries: Sequence[str]) -> list[str]:
    cleaned = [query for query in queries if query.strip()]
    if not cleaned:
        raise InvalidRequest("Invalid 'query': expected a non-empty string or list of strings.", param="query",
                             code="invalid_value")
    if len(cleaned) > MAX_QUERIES or any(len(query) > MAX_QUERY_CHARS for query in cleaned):
        raise InvalidRequest(f"Invalid 'query': at most {MAX_QUERIES} queries of {MAX_QUERY_CHARS} characters.",
                             param="query", code="invalid_value")
    return cleaned


def _hits(rows: Sequence[asyncpg.Record], ranker: str) -> list[Hit]:
    hits = []
    for rank, row in enumerate(rows, start=1):
        if ranker == "vector":
            score = max(0.0, 1.0 - float(row["distance"]))
        else:
            score = float(row["score"])
        attributes = orjson.loads(row["attributes"]) if row["attributes"] else {}
        hits.append(Hit(row["vector_store_id"], row["file_id"], row["position"], row["filename"], attributes,
                        row["content"], min(1.0, score), {ranker: rank}))
    return hits


def _fused(semantic: list[Hit], keyword: list[Hit], embedding_weight: float, text_weight: float) -> list[Hit]:
    """Reciprocal rank fusion: each ranker adds weight / (60 + rank); divided by the best possible sum."""
    fused: dict[tuple[str, str, int], Hit] = {}
    for hits, weight, name in ((semantic, embedding_weight, "vector"), (keyword, text_weight, "keyword")):
        for rank, hit in enumerate(hits, start=1):
            key = (hit.vector_store_id, hit.file_id, hit.position)
            kept = fused.setdefault(key, Hit(hit.vector_store_id, hit.file_id, hit.position, hit.filename,
                                             hit.attributes, hit.content))
            kept.ranks[name] = rank
            kept.score += weight / (RRF_K + rank)
    best = (embedding_weight + text_weight) / (RRF_K + 1)
    for hit in fused.values():
        hit.score = hit.score / best
    return sorted(fused.values(), key=lambda hit: (-hit.score, hit.file_id, hit.position))
