"""The HNSW index is made with the configured graph parameters, and a pair pgvector would refuse is refused at start."""

from __future__ import annotations

import pytest
from agentic_retrieval.settings import RetrievalSettings
from pydantic import ValidationError

from .conftest import build
from .test_ingestion_and_search import DOCUMENTS, store_with, tenant


async def test_the_index_is_built_with_the_configured_graph(pool, vectors) -> None:
    if not vectors:
        pytest.skip("this PostgreSQL has no pgvector extension (keyword search only)")
    await store_with(build(pool, vectors), tenant(), DOCUMENTS)
    definitions = await pool.fetch("SELECT indexdef FROM pg_indexes WHERE schemaname = 'retrieval'"
                                   " AND indexname LIKE 'chunks_embedding_%'")
    assert definitions and all("m='16'" in row["indexdef"] and "ef_construction='128'" in row["indexdef"]
                               for row in definitions)


def test_ef_construction_below_twice_m_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTIC_DATABASE_URL", "postgresql://unused")
    monkeypatch.setenv("AGENTIC_RETRIEVAL_HNSW_M", "80")
    with pytest.raises(ValidationError, match="at least twice"):
        RetrievalSettings()
    monkeypatch.setenv("AGENTIC_RETRIEVAL_HNSW_EF_CONSTRUCTION", "160")
    assert RetrievalSettings().hnsw_ef_construction == 160
