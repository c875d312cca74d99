"""The `file_search` tool's calls from JetStream (`tools.exec.file_search`): a thin adapter over the same `Searcher`
the gRPC Search uses. The stores are the request's declaration's, searched for the call's tenant only: a store of
another tenant is not found here either (the executor checked them as the turn started; this checks again)."""

from __future__ import annotations

import logging
from typing import Any, Protocol

from agentic_core.errors import AgenticError
from agentic_core.tools import file_search
from agentic_core.tools.protocol import ToolCall, ToolResult

from agentic_retrieval.search import SearchOutcome

log = logging.getLogger(__name__)


class Searches(Protocol):
    async def search(self, tenant: str, store_ids: list[str], queries: list[str], filters: Any,
                     max_num_results: int, ranking_options: Any) -> SearchOutcome: ...


class FileSearchHandler:
    """A tool handler for the shared JetStream consumer (`kind`, `run`, `close`)."""

    kind = file_search.NAME

    def __init__(self, searcher: Searches) -> None:
        self.searcher = searcher

    async def run(self, call: ToolCall) -> ToolResult:
        queries = file_search.queries_of(call.arguments)
        if not queries:
            return ToolResult.hint(call.call_id, 'file_search takes "queries": a list of 1 to 5 non-empty search strings.')
        if len(queries) > file_search.MAX_QUERIES:
            return ToolResult.hint(call.call_id, f"file_search takes at most {file_search.MAX_QUERIES} queries per call; "
                                                 f"this call had {len(queries)}. Split them across several calls.")
        params = call.params or {}
        store_ids = [store_id for store_id in params.get("vector_store_ids") or [] if isinstance(store_id, str)]
        if not call.tenant or not store_ids:
            return ToolResult.error(call.call_id, "file_search names no vector store of this tenant.", queries=queries)
        try:
            outcome = await self.searcher.search(call.tenant, store_ids, queries, params.get("filters"),
                                                 int(params.get("max_num_results") or 0), params.get("ranking_options"))
        except AgenticError as error:  # a store not found (another tenant's), a malformed filter: the model is told
            return ToolResult.error(call.call_id, error.message, queries=queries)
        results = [{"file_id": hit.file_id, "filename": hit.filename, "score": round(hit.score, 6),
                    "attributes": hit.attributes, "text": hit.content} for hit in outcome.hits]
        return ToolResult.ok(call.call_id, file_search.result_text(queries, results), queries=queries, results=results)

    async def close(self) -> None:
        """The searcher's pool and embedder belong to the service, which closes them after the consumer drained."""
