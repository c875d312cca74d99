"""Expired files and vector stores, and uploads that never completed, are deleted for good by the sweep."""

from __future__ import annotations

import secrets

from agentic_retrieval.expiry import ABANDONED_UPLOAD_SECONDS, purge_expired

from .test_ingestion_and_search import DOCUMENTS, store_with, tenant


async def test_expired_files_and_stores_leave_rows_bytes_and_chunks(retrieval, pool) -> None:
    owner = tenant()
    store_id, ids = await store_with(retrieval, owner, DOCUMENTS)
    kept_store, kept = await store_with(retrieval, owner, {"kept.txt": "a file that has not expired"})
    expired_file = ids["llamas.txt"]
    await pool.execute("UPDATE retrieval.files SET expires_at = now() - interval '1 second' WHERE id = $1", expired_file)
    await pool.execute("UPDATE retrieval.vector_stores SET expires_after = '{\"anchor\": \"last_active_at\", \"days\": 1}',"
                       " last_active_at = now() - interval '2 days' WHERE id = $1", store_id)
    stranded = "file-" + secrets.token_hex(12)  # an upload that stopped mid-way, a day and more ago
    await pool.execute("INSERT INTO retrieval.files (tenant, id, filename, purpose, created_at)"
                       " VALUES ($1, $2, 'cut.txt', 'assistants', now() - make_interval(secs => $3))",
                       owner, stranded, ABANDONED_UPLOAD_SECONDS + 60.0)
    await pool.execute("INSERT INTO retrieval.file_parts (tenant, file_id, part, data) VALUES ($1, $2, 0, 'x')",
                       owner, stranded)

    purged = await purge_expired(pool, batch=1)  # several batches

    assert purged.files >= 2 and purged.stores >= 1
    for file_id in (expired_file, stranded):
        assert await pool.fetchval("SELECT count(*) FROM retrieval.files WHERE id = $1", file_id) == 0
        assert await pool.fetchval("SELECT count(*) FROM retrieval.file_parts WHERE file_id = $1", file_id) == 0
        assert await pool.fetchval("SELECT count(*) FROM retrieval.chunks WHERE file_id = $1", file_id) == 0
    assert await pool.fetchval("SELECT count(*) FROM retrieval.vector_stores WHERE id = $1", store_id) == 0
    assert await pool.fetchval("SELECT count(*) FROM retrieval.chunks WHERE vector_store_id = $1", store_id) == 0
    # What has not expired stays, and is still found.
    outcome = await retrieval.searcher.search(owner, [kept_store], ["expired"], None, 10, None)
    assert [hit.file_id for hit in outcome.hits] == [kept["kept.txt"]]
    assert await pool.fetchval("SELECT count(*) FROM retrieval.files WHERE id = $1", ids["pasta.txt"]) == 1
