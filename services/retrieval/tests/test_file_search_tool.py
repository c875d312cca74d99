"""The `file_search` tool handler over the service's own `Searcher`: the declaration's stores searched for the call's
tenant only, results with the public file ids and filenames, what the model reads, and refusals as results."""

from __future__ import annotations

from agentic_core.tools.protocol import ToolCall
from agentic_retrieval.file_search import FileSearchHandler

from .conftest import build
from .test_ingestion_and_search import DOCUMENTS, store_with, tenant


def _call(owner: str, store_ids: list[str], arguments: dict, **params: object) -> ToolCall:
    return ToolCall(call_id="resp_1/call_1", kind="file_search", tool="file_search", arguments=arguments,
                    params={"vector_store_ids": store_ids, **params}, tenant=owner)


async def test_a_call_searches_the_declared_store_and_answers_results_and_text(pool) -> None:
    retrieval = build(pool, False, embeddings=False)
    owner = tenant()
    store_id, ids = await store_with(retrieval, owner, DOCUMENTS)
    result = await FileSearchHandler(retrieval.searcher).run(
        _call(owner, [store_id], {"queries": ["pack animals in the Andes"]}, max_num_results=2))
    assert result.status == "ok" and result.details["queries"] == ["pack animals in the Andes"]
    first = result.details["results"][0]
    assert first["file_id"] == ids["llamas.txt"] and first["filename"] == "llamas.txt"
    assert "camelids" in first["text"] and 0 < first["score"] <= 1 and first["attributes"] == {}
    assert len(result.details["results"]) <= 2
    assert f"[{ids['llamas.txt']}] llamas.txt" in result.content and "camelids" in result.content


async def test_a_store_of_another_tenant_is_not_searched(pool) -> None:
    retrieval = build(pool, False, embeddings=False)
    store_id, _ = await store_with(retrieval, tenant(), DOCUMENTS)
    result = await FileSearchHandler(retrieval.searcher).run(_call(tenant(), [store_id], {"queries": ["llamas"]}))
    assert result.status == "error" and "No vector store found" in result.content
    assert "results" not in result.details


async def test_bad_arguments_and_filters_are_results_the_model_can_act_on(pool) -> None:
    retrieval = build(pool, False, embeddings=False)
    owner = tenant()
    store_id, _ = await store_with(retrieval, owner, {"a.txt": "alpha"})
    handler = FileSearchHandler(retrieval.searcher)
    assert (await handler.run(_call(owner, [store_id], {"queries": []}))).status == "hint"
    assert (await handler.run(_call(owner, [store_id], {"queries": [f"q{n}" for n in range(6)]}))).status == "hint"
    filtered = await handler.run(_call(owner, [store_id], {"queries": ["alpha"]}, filters={"type": "like"}))
    assert filtered.status == "error" and "filters" in filtered.content
    nothing = await handler.run(_call(owner, [store_id], {"queries": ["zebra"]}))
    assert nothing.status == "ok" and nothing.details["results"] == [] and nothing.content.startswith("No file search")
