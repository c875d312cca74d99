"""Vector stores on the built-in embedding model (all-MiniLM-L6-v2 on vLLM's pooling runner, as `make run` serves it):
a question that shares no word with the passage that answers it still finds that passage first, which keywords alone
cannot do."""

from __future__ import annotations

import io

import pytest
from openai import OpenAI

pytestmark = pytest.mark.vllm

PASSAGES = {
    "cats.txt": "The kitten curled up on the warm windowsill and dozed through the whole afternoon.",
    "markets.txt": "Shares fell sharply after the central bank raised interest rates by half a point.",
    "baking.txt": "Knead the dough for ten minutes, let it rise for an hour, then bake it until golden.",
}


@pytest.fixture(scope="module")
def store(client: OpenAI) -> str:
    created = client.vector_stores.create(name="real embeddings")
    for name, text in PASSAGES.items():
        done = client.vector_stores.files.upload_and_poll(vector_store_id=created.id,
                                                          file=(name, io.BytesIO(text.encode()), "text/plain"))
        assert done.status == "completed", done.last_error
    return created.id


@pytest.mark.parametrize(("question", "answer"), [
    ("Which pet was sleeping in the sun?", "cats.txt"),
    ("What happened to stock prices when borrowing got more expensive?", "markets.txt"),
    ("How do I make bread?", "baking.txt"),
])
def test_a_question_finds_its_passage_by_meaning(client: OpenAI, store: str, question: str, answer: str) -> None:
    shared = set(question.lower().strip("?").split()) & set(PASSAGES[answer].lower().strip(".").split())
    assert not shared - {"the", "in", "to", "of", "a", "it", "when"}, "the question must not share content words"
    page = client.vector_stores.search(store, query=question, max_num_results=3)
    ranked = [result.filename for result in page.data]
    assert ranked[0] == answer, ranked
    assert page.data[0].score > page.data[-1].score  # cosine similarities, not ties
