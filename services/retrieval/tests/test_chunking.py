"""Chunks: token windows with overlap, cut from the original text; `auto` follows the embedding model's window."""

from __future__ import annotations

import pytest
from agentic_retrieval.chunking import chunks_of, count_tokens, effective_chunking, load_tokenizer, windows_of
from agentic_retrieval.validation import AUTO, Chunking, chunking

TOKENIZER = load_tokenizer(None)
TEXT = " ".join(f"Sentence number {index} talks about Topic{index % 7}." for index in range(600))


def test_every_chunk_has_at_most_the_size_and_consecutive_chunks_overlap() -> None:
    chunks = list(chunks_of(TEXT, TOKENIZER, 100, 40))
    assert len(chunks) > 10
    assert all(count_tokens(chunk.text, TOKENIZER) <= 100 for chunk in chunks)
    assert [chunk.position for chunk in chunks] == list(range(len(chunks)))
    first, second = chunks[0].text, chunks[1].text
    assert second.startswith(first[len(first) // 2:][: 10]) or first[-20:] in second  # the overlap is shared text


def test_chunks_cover_the_whole_text_in_order() -> None:
    chunks = list(chunks_of(TEXT, TOKENIZER, 120, 0))
    offset = 0
    for chunk in chunks:  # each chunk is the text's next stretch, only whitespace between two
        found = TEXT.index(chunk.text, offset)
        assert TEXT[offset:found].strip() == ""
        offset = found + len(chunk.text)
    assert offset == len(TEXT)


def test_a_short_text_is_one_chunk_and_an_empty_one_none() -> None:
    assert [chunk.text for chunk in chunks_of("Hello there, World", TOKENIZER, 100, 50)] == ["Hello there, World"]
    assert list(chunks_of("   ", TOKENIZER, 100, 50)) == []


def test_auto_follows_the_embedding_window_and_static_is_kept() -> None:
    assert effective_chunking(AUTO, None) == Chunking("auto", 800, 400)
    auto = effective_chunking(AUTO, 256)
    assert auto.max_tokens <= 256 - 2 and auto.overlap_tokens == auto.max_tokens // 2
    static = Chunking("static", 1000, 100)
    assert effective_chunking(static, 256) == static


def test_a_chunk_longer_than_the_window_is_cut_into_windows() -> None:
    windows = windows_of(TEXT[:5000], TOKENIZER, 200)
    assert len(windows) > 1 and all(count_tokens(window, TOKENIZER) <= 200 for window in windows)


@pytest.mark.parametrize("strategy, param", [
    ({"type": "static", "static": {"max_chunk_size_tokens": 99, "chunk_overlap_tokens": 0}},
     "chunking_strategy.static.max_chunk_size_tokens"),
    ({"type": "static", "static": {"max_chunk_size_tokens": 4097, "chunk_overlap_tokens": 0}},
     "chunking_strategy.static.max_chunk_size_tokens"),
    ({"type": "static", "static": {"max_chunk_size_tokens": 200, "chunk_overlap_tokens": 101}},
     "chunking_strategy.static.chunk_overlap_tokens"),
    ({"type": "other"}, "chunking_strategy"),
])
def test_static_chunking_has_openais_bounds(strategy, param) -> None:
    from agentic_core.errors import InvalidRequest

    with pytest.raises(InvalidRequest) as raised:
        chunking(strategy)
    assert raised.value.param == param
