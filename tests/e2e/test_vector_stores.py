"""The Vector Stores API through the gateway with the official SDK: stores, upload_and_poll, file batches, search
(filters, thresholds, hybrid), deletion removing a file from search, bad files ending `failed`, tenant isolation."""

from __future__ import annotations

import io
import time

import openai
import pytest
from openai import OpenAI

from tests.support.document_bombs import docx_zip_bomb, pdf_bomb
from tests.support.pdf_files import pdf_with_text

DOCUMENTS = {
    "llamas.txt": "Llamas are domesticated South American camelids, used as pack animals in the Andes.",
    "volcanoes.md": "# Volcanoes\n\nA volcano is a rupture in the crust through which lava and volcanic ash erupt.",
    "pasta.html": "<html><body><p>Boil the pasta in salted water, then add the tomato sauce.</p></body></html>",
}
ATTRIBUTES = {"llamas.txt": {"topic": "animals", "year": 2019, "public": True},
              "volcanoes.md": {"topic": "geology", "year": 2021, "public": True},
              "pasta.html": {"topic": "food", "year": 2024, "public": False}}


def _file(name: str, data: bytes) -> tuple[str, io.BytesIO]:
    return name, io.BytesIO(data)


@pytest.fixture(scope="module")
def library(client: OpenAI) -> tuple[str, dict[str, str]]:
    """A store with three small documents, each with attributes, every one ingested."""
    store = client.vector_stores.create(name="library", metadata={"team": "docs"})
    ids = {}
    for name, text in DOCUMENTS.items():
        done = client.vector_stores.files.upload_and_poll(vector_store_id=store.id, file=_file(name, text.encode()),
                                                         poll_interval_ms=100)
        assert done.status == "completed", done.last_error
        client.vector_stores.files.update(done.id, vector_store_id=store.id, attributes=ATTRIBUTES[name])
        ids[name] = done.id
    return store.id, ids


def test_a_store_is_created_listed_modified_and_deleted(client: OpenAI) -> None:
    store = client.vector_stores.create(name="scratch", metadata={"k": "v"},
                                        expires_after={"anchor": "last_active_at", "days": 7})
    assert store.id.startswith("vs_") and store.object == "vector_store" and store.status == "completed"
    assert store.file_counts.total == 0 and store.usage_bytes == 0 and store.metadata == {"k": "v"}
    assert store.expires_after.days == 7 and store.expires_at == pytest.approx(store.last_active_at + 7 * 86400, abs=2)
    assert store.id in [item.id for item in client.vector_stores.list(limit=100)]
    modified = client.vector_stores.update(store.id, name="renamed", metadata={"k": "w"}, expires_after=None)
    assert (modified.name, modified.metadata, modified.expires_after) == ("renamed", {"k": "w"}, None)
    deleted = client.vector_stores.delete(store.id)
    assert deleted.deleted and deleted.object == "vector_store.deleted"
    with pytest.raises(openai.NotFoundError):
        client.vector_stores.retrieve(store.id)


def test_upload_and_poll_ends_completed_with_usage_and_content(client: OpenAI, library) -> None:
    store_id, ids = library
    store = client.vector_stores.retrieve(store_id)
    assert store.file_counts.completed == 3 and store.file_counts.in_progress == 0 and store.usage_bytes > 0
    listed = client.vector_stores.files.list(store_id, filter="completed")
    assert {item.id for item in listed.data} == set(ids.values())
    retrieved = client.vector_stores.files.retrieve(ids["llamas.txt"], vector_store_id=store_id)
    assert retrieved.attributes == ATTRIBUTES["llamas.txt"] and retrieved.usage_bytes > 0
    assert retrieved.chunking_strategy.type == "static"  # `auto`, as it was applied
    content = client.vector_stores.files.content(ids["llamas.txt"], vector_store_id=store_id)
    assert [part.text for part in content.data] == [DOCUMENTS["llamas.txt"]]


def test_search_finds_the_document_with_openais_result_shape(client: OpenAI, library) -> None:
    store_id, ids = library
    page = client.vector_stores.search(store_id, query="Which animals carry packs in the Andes?")
    first = page.data[0]
    assert first.file_id == ids["llamas.txt"] and first.filename == "llamas.txt"
    assert first.attributes == ATTRIBUTES["llamas.txt"] and first.content[0].type == "text"
    assert "camelids" in first.content[0].text and 0 < first.score <= 1
    assert all(0 <= item.score <= 1 for item in page.data)


def test_search_with_attribute_filters(client: OpenAI, library) -> None:
    store_id, ids = library
    query = "llamas volcano pasta"

    def found(filters) -> set[str]:
        return {item.filename for item in client.vector_stores.search(store_id, query=query, filters=filters).data}

    assert found({"type": "eq", "key": "topic", "value": "geology"}) == {"volcanoes.md"}
    assert found({"type": "gte", "key": "year", "value": 2021}) == {"volcanoes.md", "pasta.html"}
    assert found({"type": "in", "key": "topic", "value": ["food", "animals"]}) == {"pasta.html", "llamas.txt"}
    assert found({"type": "and", "filters": [{"type": "eq", "key": "public", "value": True},
                                             {"type": "lt", "key": "year", "value": 2020}]}) == {"llamas.txt"}
    with pytest.raises(openai.BadRequestError):
        client.vector_stores.search(store_id, query=query, filters={"type": "like", "key": "x", "value": 1})


def test_score_threshold_and_max_num_results_bound_the_results(client: OpenAI, library) -> None:
    store_id, _ = library
    query = "pasta llamas volcano"
    everything = client.vector_stores.search(store_id, query=query).data
    assert len(everything) == 3
    assert len(client.vector_stores.search(store_id, query=query, max_num_results=1).data) == 1
    cut = sorted(item.score for item in everything)[1]
    kept = client.vector_stores.search(store_id, query=query, ranking_options={"score_threshold": cut}).data
    assert len(kept) == 2 and all(item.score >= cut for item in kept)
    assert client.vector_stores.search(store_id, query=query, ranking_options={"score_threshold": 1.0}).data == [] or \
        all(item.score == 1.0 for item in client.vector_stores.search(store_id, query=query,
                                                                       ranking_options={"score_threshold": 1.0}).data)


def test_hybrid_search_fuses_both_rankers(client: OpenAI, library) -> None:
    store_id, ids = library
    page = client.vector_stores.search(store_id, query="tomato sauce", extra_body={
        "ranking_options": {"hybrid_search": {"embedding_weight": 0.5, "text_weight": 0.5}}})
    assert page.data[0].file_id == ids["pasta.html"]


def test_rewrite_query_searches_the_questions_content_words_and_says_so(client: OpenAI, library) -> None:
    store_id, ids = library
    question = "Can you please tell me what the lava of a volcano is?"
    rewritten = client.vector_stores.search(store_id, query=question, rewrite_query=True)
    assert rewritten.search_query == ["lava volcano"]
    assert rewritten.data[0].file_id == ids["volcanoes.md"]
    as_asked = client.vector_stores.search(store_id, query=question)
    assert as_asked.search_query == [question]
    with pytest.raises(openai.BadRequestError) as refused:
        client.vector_stores.search(store_id, query=question, extra_body={"rewrite_query": "yes"})
    assert refused.value.body["param"] == "rewrite_query"


def test_deleting_a_file_removes_it_from_search(client: OpenAI) -> None:
    store = client.vector_stores.create(name="deletions")
    done = client.vector_stores.files.upload_and_poll(
        vector_store_id=store.id, file=_file("quokka.txt", b"The quokka is a small marsupial of Rottnest Island."),
        poll_interval_ms=100)
    assert [item.file_id for item in client.vector_stores.search(store.id, query="quokka marsupial").data] == [done.id]
    client.files.delete(done.id)
    assert client.vector_stores.search(store.id, query="quokka marsupial").data == []
    with pytest.raises(openai.NotFoundError):
        client.vector_stores.files.retrieve(done.id, vector_store_id=store.id)


def test_removing_a_file_from_a_store_keeps_the_file(client: OpenAI) -> None:
    store = client.vector_stores.create(name="detach")
    done = client.vector_stores.files.upload_and_poll(vector_store_id=store.id, file=_file("a.txt", b"wombat burrows"),
                                                      poll_interval_ms=100)
    removed = client.vector_stores.files.delete(done.id, vector_store_id=store.id)
    assert removed.deleted and removed.object == "vector_store.file.deleted"
    assert client.vector_stores.search(store.id, query="wombat").data == []
    assert client.files.retrieve(done.id).id == done.id


@pytest.mark.parametrize("name, data, code", [
    ("photo.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "unsupported_file"),
    ("report.pdf", b"%PDF-1.7 cut short", "invalid_file"),
    ("notes.txt", b"\xff\xfe\x00binary\x00", "invalid_file"),
])
def test_a_bad_file_ends_failed_with_its_reason(client: OpenAI, name: str, data: bytes, code: str) -> None:
    store = client.vector_stores.create(name="bad files")
    done = client.vector_stores.files.upload_and_poll(vector_store_id=store.id, file=_file(name, data),
                                                      poll_interval_ms=100)
    assert done.status == "failed" and done.last_error.code == code and done.last_error.message
    assert client.vector_stores.retrieve(store.id).file_counts.failed == 1


@pytest.mark.parametrize("name, bomb", [
    ("bomb.pdf", lambda: pdf_bomb(1024 * 1024 * 1024)),        # one content stream of 1 GiB, 1 MB packed
    ("pages.pdf", lambda: pdf_bomb(40 * 1000 * 1000, pages=200)),  # 200 pages showing one 40 MB stream, 70 KB
    ("bomb.docx", docx_zip_bomb),                                # 200 MiB of zeros in the document part
])
def test_a_decompression_bomb_ends_failed_invalid_file_and_ingestion_carries_on(client: OpenAI, name: str,
                                                                                 bomb) -> None:
    store = client.vector_stores.create(name="bombs")
    done = client.vector_stores.files.upload_and_poll(vector_store_id=store.id, file=_file(name, bomb()),
                                                      poll_interval_ms=100)
    assert done.status == "failed" and done.last_error.code == "invalid_file"
    assert "expands to more than this service reads" in done.last_error.message
    after = client.vector_stores.files.upload_and_poll(vector_store_id=store.id, poll_interval_ms=100,
                                                       file=_file("after.txt", b"The worker carries on."))
    assert after.status == "completed"
    counts = client.vector_stores.retrieve(store.id).file_counts
    assert (counts.failed, counts.completed, counts.in_progress) == (1, 1, 0)


def test_a_pdf_and_a_static_chunking_strategy(client: OpenAI) -> None:
    words = " ".join(f"word{index}" for index in range(400))
    store = client.vector_stores.create(name="pdf")
    uploaded = client.files.create(file=_file("doc.pdf", pdf_with_text("Platypus facts: they lay eggs.", words)),
                                   purpose="assistants")
    done = client.vector_stores.files.create_and_poll(
        file_id=uploaded.id, vector_store_id=store.id, poll_interval_ms=100,
        chunking_strategy={"type": "static", "static": {"max_chunk_size_tokens": 100, "chunk_overlap_tokens": 20}})
    assert done.status == "completed", done.last_error
    assert done.chunking_strategy.static.max_chunk_size_tokens == 100
    chunks = client.vector_stores.files.content(uploaded.id, vector_store_id=store.id).data
    assert len(chunks) > 3 and "Platypus" in chunks[0].text
    with pytest.raises(openai.BadRequestError) as raised:
        client.vector_stores.files.create(file_id=uploaded.id, vector_store_id=store.id, chunking_strategy={
            "type": "static", "static": {"max_chunk_size_tokens": 50, "chunk_overlap_tokens": 0}})
    assert raised.value.body["param"] == "chunking_strategy.static.max_chunk_size_tokens"


def test_file_batches_create_poll_list_and_cancel(client: OpenAI) -> None:
    store = client.vector_stores.create(name="batches")
    ids = [client.files.create(file=_file(f"b{index}.txt", f"batch document number {index}".encode()),
                               purpose="assistants").id for index in range(3)]
    batch = client.vector_stores.file_batches.create_and_poll(vector_store_id=store.id, file_ids=ids,
                                                              attributes={"batch": True}, poll_interval_ms=100)
    assert batch.id.startswith("vsfb_") and batch.object == "vector_store.files_batch"
    assert batch.status == "completed" and batch.file_counts.completed == 3
    listed = client.vector_stores.file_batches.list_files(batch.id, vector_store_id=store.id)
    assert {item.id for item in listed.data} == set(ids) and all(item.attributes == {"batch": True} for item in listed.data)
    cancelled = client.vector_stores.file_batches.cancel(batch.id, vector_store_id=store.id)
    assert cancelled.status == "completed"  # nothing was left to cancel
    assert client.vector_stores.file_batches.retrieve(batch.id, vector_store_id=store.id).id == batch.id


def test_a_store_created_with_file_ids_ingests_them(client: OpenAI) -> None:
    uploaded = client.files.create(file=_file("ibis.txt", b"The sacred ibis wades in marshes."), purpose="assistants")
    store = client.vector_stores.create(name="with files", file_ids=[uploaded.id])
    deadline = time.monotonic() + 30
    while client.vector_stores.retrieve(store.id).status == "in_progress" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert client.vector_stores.retrieve(store.id).file_counts.completed == 1
    assert client.vector_stores.search(store.id, query="ibis").data[0].file_id == uploaded.id


def test_another_tenants_store_and_files_are_not_found_on_every_route(client: OpenAI, other_tenant: OpenAI,
                                                                       library) -> None:
    store_id, ids = library
    file_id = ids["llamas.txt"]
    batch = client.vector_stores.file_batches.create(vector_store_id=store_id, file_ids=[file_id])
    calls = [
        lambda: other_tenant.vector_stores.retrieve(store_id),
        lambda: other_tenant.vector_stores.update(store_id, name="mine now"),
        lambda: other_tenant.vector_stores.delete(store_id),
        lambda: other_tenant.vector_stores.files.list(store_id),
        lambda: other_tenant.vector_stores.files.create(vector_store_id=store_id, file_id=file_id),
        lambda: other_tenant.vector_stores.files.retrieve(file_id, vector_store_id=store_id),
        lambda: other_tenant.vector_stores.files.update(file_id, vector_store_id=store_id, attributes={"a": 1}),
        lambda: other_tenant.vector_stores.files.delete(file_id, vector_store_id=store_id),
        lambda: other_tenant.vector_stores.files.content(file_id, vector_store_id=store_id),
        lambda: other_tenant.vector_stores.file_batches.create(vector_store_id=store_id, file_ids=[file_id]),
        lambda: other_tenant.vector_stores.file_batches.retrieve(batch.id, vector_store_id=store_id),
        lambda: other_tenant.vector_stores.file_batches.cancel(batch.id, vector_store_id=store_id),
        lambda: other_tenant.vector_stores.file_batches.list_files(batch.id, vector_store_id=store_id),
        lambda: other_tenant.vector_stores.search(store_id, query="llamas"),
    ]
    for call in calls:
        with pytest.raises(openai.NotFoundError):
            call()
    own = other_tenant.vector_stores.create(name="own")
    with pytest.raises(openai.NotFoundError):  # another tenant's file cannot join one's own store
        other_tenant.vector_stores.files.create(vector_store_id=own.id, file_id=file_id)
    assert store_id not in [item.id for item in other_tenant.vector_stores.list(limit=100)]
    assert client.vector_stores.retrieve(store_id).name == "library"


@pytest.mark.parametrize("body", [
    {"name": "a\x00b"}, {"metadata": {"k\x00": "v"}}, {"metadata": {"k": "v\x00"}},
])
def test_text_with_a_nul_character_is_a_400_and_nothing_is_stored(client: OpenAI, body: dict) -> None:
    before = {store.id for store in client.vector_stores.list(limit=100)}
    with pytest.raises(openai.BadRequestError) as refused:
        client.vector_stores.create(**body)
    assert "U+0000" in refused.value.body["message"]
    assert {store.id for store in client.vector_stores.list(limit=100)} == before


def test_a_nul_character_in_a_search_or_attributes_is_a_400(client: OpenAI, library) -> None:
    store_id, _ = library
    with pytest.raises(openai.BadRequestError):
        client.vector_stores.search(store_id, query="llamas\x00")
    with pytest.raises(openai.BadRequestError):
        client.vector_stores.search(store_id, query="llamas", filters={"type": "eq", "key": "k\x00", "value": "v"})
