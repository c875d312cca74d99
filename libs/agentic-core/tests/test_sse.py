"""SSE parsing: events survive any chunking, CRLF/CR endings, comments and multi-line data."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentic_core.errors import UpstreamUnavailable
from agentic_core.sse import SseParser, frame

FIXTURES = Path(__file__).parents[3] / "tests" / "fixtures"


def _parse_all(chunks: list[bytes]) -> list[tuple[str | None, bytes]]:
    parser = SseParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)] + parser.close()
    return [(event.event, event.data) for event in events]


def test_two_events_in_one_chunk() -> None:
    assert _parse_all([b"event: a\ndata: 1\n\nevent: b\ndata: 2\n\n"]) == [("a", b"1"), ("b", b"2")]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_real_vllm_stream_parses_identically_at_any_chunk_size(size: int) -> None:
    raw = (FIXTURES / "responses-text-stream.sse").read_bytes()
    whole = _parse_all([raw])
    chunked = _parse_all([raw[i : i + size] for i in range(0, len(raw), size)])
    assert chunked == whole
    assert len(whole) == 15
    assert whole[0][0] == "response.created" and whole[-1][0] == "response.completed"


def test_crlf_and_cr_line_endings_split_across_chunks() -> None:
    assert _parse_all([b"data: x\r", b"\n\r\n", b"data: y\r\r"]) == [(None, b"x"), (None, b"y")]


def test_comments_ids_and_retry_are_ignored_and_multiline_data_is_joined() -> None:
    raw = b": keep-alive\n\nid: 7\nretry: 10\nevent: e\ndata: one\ndata: two\n\n"
    assert _parse_all([raw]) == [("e", b"one\ntwo")]


def test_value_without_space_after_colon() -> None:
    assert _parse_all([b"data:{}\n\n"]) == [(None, b"{}")]


def test_last_event_without_blank_line_is_delivered_at_close() -> None:
    assert _parse_all([b"data: [DONE]"]) == [(None, b"[DONE]")]


def test_an_oversized_event_is_refused() -> None:
    parser = SseParser(max_event_bytes=16)
    with pytest.raises(UpstreamUnavailable):
        parser.feed(b"data: " + b"x" * 32)


def test_frame_uses_lf_endings() -> None:
    assert frame("response.created", b"{}") == b"event: response.created\ndata: {}\n\n"
