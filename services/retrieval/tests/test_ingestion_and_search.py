"""Files into stores, ingestion to a terminal status (also when a worker dies or the embeddings server fails), and
search: keyword, vector, hybrid, filters, thresholds, tenant isolation."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import orjson
import pytest
from agentic_core.errors import InvalidRequest, NotFound
from agentic_retrieval.files import Upload
from agentic_retrieval.paging import Page
from agentic_retrieval.stores import NewStoreFile

from .conftest import Retrieval, build

DOCUMENTS = {
    "llamas.txt": "Llamas are domesticated South American camelids used as pack animals by Andean cultures.",
    "volcanoes.md": "# Volcanoes\n\nA volcano is a rupture in the crust through which lava and ash erupt.",
    "pasta.txt": "Boil the pasta in salted water for nine minutes, then add the tomato sauce.",
}


def tenant() -> str:
    return "t-" + secrets.token_hex(4)


async def _pieces(data: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(data), 3000):
        yield data[start:start + 3000]


async def upload(retrieval: Retrieval, owner: str, filename: str, data: bytes) -> str:
    file_id, _ = await retrieval.files.upload(Upload(owner, filename, "assistants", "", 0), _pieces(data))
    return file_id


async def store_with(retrieval: Retrieval, owner: str, documents: dict[str, str],
                     attributes: dict[str, dict] | None = None) -> tuple[str, dict[str, str]]:
    store_id, _ = await retrieval.stores.create(owner, "docs", {}, None, None, [])
    ids = {}
    for filename, text in documents.items():
        ids[filename] = await upload(retrieval, owner, filename, text.encode())
        await retrieval.stores.add_file(owner, store_id, NewStoreFile(ids[filename], (attributes or {}).get(filename), None))
    await retrieval.ingest_all()
    return store_id, ids


async def status_of(retrieval: Retrieval, owner: str, store_id: str, file_id: str) -> dict:
    _, body = await retrieval.stores.get_file(owner, store_id, file_id)
    return orjson.loads(body)


async def test_an_upload_is_streamed_into_parts_and_read_back_whole(retrieval: Retrieval, pool) -> None:
    owner = tenant()
    data = secrets.token_bytes(10_000)
    file_id = await upload(retrieval, owner, "blob.bin", data)
    assert await pool.fetchval("SELECT count(*) FROM retrieval.file_parts WHERE file_id = $1", file_id) == 3
    assert b"".join([part async for part in retrieval.files.content(owner, file_id)]) == data
    shown = orjson.loads(await retrieval.files.get(owner, file_id))
    assert shown["bytes"] == 10_000 and shown["id"].startswith("file-") and shown["object"] == "file"


async def test_an_upload_over_the_limit_keeps_nothing(pool, vectors) -> None:
    retrieval = build(pool, vectors)
    retrieval.files.max_file_bytes = 5000
    owner = tenant()
    with pytest.raises(Exception) as raised:
        await upload(retrieval, owner, "big.bin", b"x" * 6000)
    assert getattr(raised.value, "http_status", None) == 413
    assert await pool.fetchval("SELECT count(*) FROM retrieval.files WHERE tenant = $1", owner) == 0
    assert await pool.fetchval("SELECT count(*) FROM retrieval.file_parts WHERE tenant = $1", owner) == 0


async def test_files_end_completed_with_their_chunks_and_usage(retrieval: Retrieval) -> None:
    owner = tenant()
    store_id, ids = await store_with(retrieval, owner, DOCUMENTS)
    for file_id in ids.values():
        shown = await status_of(retrieval, owner, store_id, file_id)
        assert shown["status"] == "completed" and shown["last_error"] is None and shown["usage_bytes"] > 0
    store = orjson.loads(await retrieval.stores.get(owner, store_id))
    assert store["file_counts"] == {"in_progress": 0, "completed": 3, "failed": 0, "cancelled": 0, "total": 3}
    assert store["status"] == "completed" and store["usage_bytes"] > 0
    content = orjson.loads(await retrieval.stores.file_content(owner, store_id, ids["pasta.txt"]))
    assert content["data"] == [{"type": "text", "text": DOCUMENTS["pasta.txt"]}]


async def test_an_unsupported_or_broken_file_ends_failed_with_its_reason(retrieval: Retrieval) -> None:
    owner = tenant()
    store_id, _ = await retrieval.stores.create(owner, "", {}, None, None, [])
    image = await upload(retrieval, owner, "photo.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    broken = await upload(retrieval, owner, "report.pdf", b"%PDF-1.7 truncated")
    for file_id in (image, broken):
        await retrieval.stores.add_file(owner, store_id, NewStoreFile(file_id, None, None))
    await retrieval.ingest_all()
    assert (await status_of(retrieval, owner, store_id, image))["last_error"]["code"] == "unsupported_file"
    failed = await status_of(retrieval, owner, store_id, broken)
    assert failed["status"] == "failed" and failed["last_error"]["code"] == "invalid_file"


async def test_a_worker_that_died_mid_way_is_taken_over_once_its_lease_lapses(pool, vectors) -> None:
    retrieval = build(pool, vectors, lease_seconds=0.2)
    owner = tenant()
    store_id, _ = await retrieval.stores.create(owner, "", {}, None, None, [])
    file_id = await upload(retrieval, owner, "llamas.txt", DOCUMENTS["llamas.txt"].encode())
    await retrieval.stores.add_file(owner, store_id, NewStoreFile(file_id, None, None))
    [job] = retrieval.queue.take()
    # A worker claimed it and died: the row holds its lease, nothing else.
    await pool.execute("UPDATE retrieval.store_files SET worker_token = 'dead', attempts = 1 WHERE file_id = $1", file_id)
    await retrieval.ingestor.ingest(job)  # the lease is still live: a duplicate, left alone
    assert (await status_of(retrieval, owner, store_id, file_id))["status"] == "in_progress"
    await pool.execute("UPDATE retrieval.store_files SET updated_at = now() - interval '1 second' WHERE file_id = $1",
                       file_id)
    await retrieval.ingestor.ingest(job)  # the redelivery
    assert (await status_of(retrieval, owner, store_id, file_id))["status"] == "completed"


async def test_out_of_attempts_a_file_ends_failed_with_server_error(pool, vectors) -> None:
    from agentic_retrieval.ingestion import RetryLater

    retrieval = build(pool, vectors, max_attempts=2)
    owner = tenant()
    store_id, _ = await retrieval.stores.create(owner, "", {}, None, None, [])
    file_id = await upload(retrieval, owner, "llamas.txt", DOCUMENTS["llamas.txt"].encode())
    await retrieval.stores.add_file(owner, store_id, NewStoreFile(file_id, None, None))
    [job] = retrieval.queue.take()
    if vectors:  # the embeddings server keeps failing
        retrieval.embedder.failures = 10
        with pytest.raises(RetryLater):
            await retrieval.ingestor.ingest(job)
        await retrieval.ingestor.ingest(job)
    else:  # two workers died on it
        await pool.execute("UPDATE retrieval.store_files SET attempts = 2 WHERE file_id = $1", file_id)
        await retrieval.ingestor.ingest(job)
    failed = await status_of(retrieval, owner, store_id, file_id)
    assert failed["status"] == "failed" and failed["last_error"]["code"] == "server_error"


async def test_keyword_search_finds_the_file_that_holds_the_words(pool) -> None:
    retrieval = build(pool, False, embeddings=False)
    owner = tenant()
    store_id, ids = await store_with(retrieval, owner, DOCUMENTS)
    outcome = await retrieval.searcher.search(owner, [store_id], ["Which animals carry packs in the Andes?"], None, 5, None)
    assert outcome.hits[0].file_id == ids["llamas.txt"] and outcome.hits[0].filename == "llamas.txt"
    assert all(0 <= hit.score <= 1 for hit in outcome.hits)
    page = orjson.loads(outcome.page())
    assert page["object"] == "vector_store.search_results.page" and page["data"][0]["content"][0]["type"] == "text"


async def test_keyword_search_ranks_chunks_with_every_word_and_bounds_what_it_ranks(pool) -> None:
    documents = {f"common-{n}.txt": f"Report {n}: the harbour crane moved containers all night." for n in range(30)}
    documents["both.txt"] = "The harbour crane broke down, and the tugboat towed the barge out."
    documents["tug.txt"] = "A tugboat is a small powerful boat."
    owner = tenant()
    retrieval = build(pool, False, embeddings=False, candidates=10, keyword_max_ranked=100)
    store_id, ids = await store_with(retrieval, owner, documents)
    # Enough chunks hold every word: only they are ranked.
    strict = await retrieval.searcher.search(owner, [store_id], ["harbour crane"], None, 10, None)
    assert len(strict.hits) == 10 and all("harbour crane" in hit.content for hit in strict.hits)
    # Too few do: the chunk with both words first, then chunks with any of them.
    loose = await retrieval.searcher.search(owner, [store_id], ["crane tugboat"], None, 10, None)
    assert loose.hits[0].file_id == ids["both.txt"] and len(loose.hits) == 10
    assert loose.hits[0].score > loose.hits[1].score
    # A pass ranks at most keyword_max_ranked chunks: a word in every chunk still answers, from a bounded scan.
    bounded = build(pool, False, embeddings=False, candidates=10, keyword_max_ranked=5)
    common = await bounded.searcher.search(owner, [store_id], ["harbour"], None, 10, None)
    assert 1 <= len(common.hits) <= 5 and all(hit.score > 0 for hit in common.hits)


async def test_vector_and_hybrid_search_rank_the_nearest_chunk_first(retrieval: Retrieval, vectors) -> None:
    if not vectors:
        pytest.skip("this PostgreSQL has no pgvector extension (keyword search only)")
    owner = tenant()
    store_id, ids = await store_with(retrieval, owner, DOCUMENTS)
    semantic = await retrieval.searcher.search(owner, [store_id], ["lava and ash from a volcano"], None, 3, None)
    assert semantic.hits[0].file_id == ids["volcanoes.md"] and semantic.hits[0].score > semantic.hits[-1].score
    hybrid = await retrieval.searcher.search(owner, [store_id], ["tomato pasta"], None, 3,
                                             {"hybrid_search": {"embedding_weight": 1, "text_weight": 1}})
    assert hybrid.hits[0].file_id == ids["pasta.txt"] and hybrid.hits[0].score == pytest.approx(1.0)


async def test_score_threshold_drops_weaker_results(retrieval: Retrieval) -> None:
    owner = tenant()
    store_id, _ = await store_with(retrieval, owner, DOCUMENTS)
    everything = await retrieval.searcher.search(owner, [store_id], ["pasta llamas volcano"], None, 10, None)
    assert len(everything.hits) == 3
    cut = sorted(hit.score for hit in everything.hits)[1]
    kept = await retrieval.searcher.search(owner, [store_id], ["pasta llamas volcano"], None, 10,
                                           {"score_threshold": cut})
    assert len(kept.hits) == 2 and all(hit.score >= cut for hit in kept.hits)


@pytest.mark.parametrize("filters, expected", [
    ({"type": "eq", "key": "team", "value": "zoo"}, {"llamas.txt"}),
    ({"type": "ne", "key": "team", "value": "zoo"}, {"volcanoes.md", "pasta.txt"}),
    ({"type": "gt", "key": "year", "value": 2020}, {"pasta.txt"}),
    ({"type": "gte", "key": "year", "value": 2020}, {"volcanoes.md", "pasta.txt"}),
    ({"type": "lt", "key": "year", "value": 2020}, {"llamas.txt"}),
    ({"type": "lte", "key": "year", "value": 2019}, {"llamas.txt"}),
    ({"type": "in", "key": "team", "value": ["zoo", "kitchen"]}, {"llamas.txt", "pasta.txt"}),
    ({"type": "nin", "key": "team", "value": ["zoo", "kitchen"]}, {"volcanoes.md"}),
    ({"type": "eq", "key": "public", "value": True}, {"llamas.txt", "volcanoes.md"}),
    ({"type": "and", "filters": [{"type": "eq", "key": "public", "value": True},
                                 {"type": "gte", "key": "year", "value": 2020}]}, {"volcanoes.md"}),
    ({"type": "or", "filters": [{"type": "eq", "key": "team", "value": "kitchen"},
                                {"type": "and", "filters": [{"type": "eq", "key": "public", "value": True},
                                                            {"type": "lt", "key": "year", "value": 2000}]}]},
     {"pasta.txt"}),
])
async def test_attribute_filters(pool, filters, expected) -> None:
    retrieval = build(pool, False, embeddings=False)
    owner = tenant()
    attributes = {"llamas.txt": {"team": "zoo", "year": 2019, "public": True},
                  "volcanoes.md": {"team": "geo", "year": 2020, "public": True},
                  "pasta.txt": {"team": "kitchen", "year": 2024.5, "public": False}}
    store_id, _ = await store_with(retrieval, owner, DOCUMENTS, attributes)
    outcome = await retrieval.searcher.search(owner, [store_id], ["llamas volcano pasta"], filters, 10, None)
    assert {hit.filename for hit in outcome.hits} == expected


@pytest.mark.parametrize("filters", [
    {"type": "between", "key": "a", "value": 1},
    {"type": "in", "key": "a", "value": "not a list"},
    {"type": "gt", "key": "a", "value": True},
    {"type": "and", "filters": []},
    {"type": "eq", "key": "a", "value": {"nested": 1}},
])
async def test_malformed_filters_are_refused(retrieval: Retrieval, filters) -> None:
    with pytest.raises(InvalidRequest):
        await retrieval.searcher.search(tenant(), ["vs_any"], ["q"], filters, 10, None)


async def test_another_tenants_ids_are_not_found_everywhere(retrieval: Retrieval) -> None:
    owner, stranger = tenant(), tenant()
    store_id, ids = await store_with(retrieval, owner, {"llamas.txt": DOCUMENTS["llamas.txt"]})
    file_id = ids["llamas.txt"]
    calls = [
        retrieval.files.get(stranger, file_id), retrieval.files.delete(stranger, file_id),
        retrieval.files.info(stranger, file_id), retrieval.stores.get(stranger, store_id),
        retrieval.stores.update(stranger, store_id, "x", None, False, None), retrieval.stores.delete(stranger, store_id),
        retrieval.stores.get_file(stranger, store_id, file_id), retrieval.stores.delete_file(stranger, store_id, file_id),
        retrieval.stores.list_files(stranger, store_id, "", Page(10)),
        retrieval.stores.file_content(stranger, store_id, file_id),
        retrieval.searcher.search(stranger, [store_id], ["llamas"], None, 10, None),
    ]
    for call in calls:
        with pytest.raises(NotFound):
            await call
    stranger_store, _ = await retrieval.stores.create(stranger, "", {}, None, None, [])
    with pytest.raises(NotFound):  # nor can another tenant's file be added to one's own store
        await retrieval.stores.add_file(stranger, stranger_store, NewStoreFile(file_id, None, None))
    assert orjson.loads(await retrieval.files.list_files(stranger, "", Page(100)))["data"] == []


async def test_deleting_a_file_removes_it_from_search(retrieval: Retrieval, pool) -> None:
    owner = tenant()
    store_id, ids = await store_with(retrieval, owner, DOCUMENTS)
    await retrieval.files.delete(owner, ids["llamas.txt"])
    outcome = await retrieval.searcher.search(owner, [store_id], ["llamas camelids"], None, 10, None)
    assert ids["llamas.txt"] not in {hit.file_id for hit in outcome.hits}
    assert await pool.fetchval("SELECT count(*) FROM retrieval.chunks WHERE file_id = $1", ids["llamas.txt"]) == 0


async def test_lists_page_with_after_and_order(retrieval: Retrieval) -> None:
    owner = tenant()
    file_ids = [await upload(retrieval, owner, f"f{index}.txt", b"text") for index in range(5)]
    newest_first = orjson.loads(await retrieval.files.list_files(owner, "", Page(2)))
    assert [item["id"] for item in newest_first["data"]] == file_ids[:-3:-1] and newest_first["has_more"]
    after = orjson.loads(await retrieval.files.list_files(owner, "", Page(10, after=file_ids[3])))
    assert [item["id"] for item in after["data"]] == file_ids[2::-1] and not after["has_more"]
    ascending = orjson.loads(await retrieval.files.list_files(owner, "", Page(10, ascending=True)))
    assert [item["id"] for item in ascending["data"]] == file_ids


async def test_a_cancelled_batch_leaves_no_file_in_progress(retrieval: Retrieval) -> None:
    owner = tenant()
    store_id, _ = await retrieval.stores.create(owner, "", {}, None, None, [])
    files = [NewStoreFile(await upload(retrieval, owner, name, text.encode()), {"kind": "doc"}, None)
             for name, text in DOCUMENTS.items()]
    status, body = await retrieval.stores.create_batch(owner, store_id, files)
    batch = orjson.loads(body)
    assert status == "in_progress" and batch["file_counts"]["in_progress"] == 3
    status, body = await retrieval.stores.cancel_batch(owner, store_id, batch["id"])
    assert status == "cancelled" and orjson.loads(body)["file_counts"]["cancelled"] == 3
    await retrieval.ingest_all()  # the queued jobs find nothing to do
    listed = orjson.loads(await retrieval.stores.list_batch_files(owner, store_id, batch["id"], "cancelled", Page(10)))
    assert len(listed["data"]) == 3
