"""`rewrite_query`: questions lose their phrasing and function words, keep their content words in order."""

from __future__ import annotations

import pytest
from agentic_retrieval.query_rewrite import rewritten, rewritten_queries


@pytest.mark.parametrize(("question", "expected"), [
    ("What is the return policy for shoes?", "return policy shoes"),
    ("Can you tell me about llamas in the Andes, please?", "llamas andes"),
    ("What's the company's PTO policy?", "company pto policy"),
    ("error E-1234 in v2.1 of the SDK", "error e-1234 v2.1 sdk"),
    ("kubernetes Kubernetes KUBERNETES", "kubernetes"),
])
def test_questions_become_their_content_words(question: str, expected: str) -> None:
    assert rewritten(question) == expected


def test_a_query_of_function_words_only_is_kept_as_asked() -> None:
    assert rewritten("  to be or not to be  ") == "to be or not to be"


def test_queries_that_rewrite_alike_are_searched_once() -> None:
    assert rewritten_queries(["What is HNSW?", "hnsw", "Tell me about recall"]) == ["hnsw", "recall"]
