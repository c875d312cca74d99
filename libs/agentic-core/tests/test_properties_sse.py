"""Property-based: the SSE parser takes any bytes in any chunking (invalid UTF-8, bare CRs, huge lines) without an
unhandled exception, and how a stream is cut into chunks never changes the events it yields."""

from __future__ import annotations

from agentic_core.errors import AgenticError
from agentic_core.sse import SseEvent, SseParser, frame
from hypothesis import given, settings
from hypothesis import strategies as st


def _weighted(*choices: tuple[st.SearchStrategy[bytes], int]) -> st.SearchStrategy[bytes]:
    """One of the strategies, each as often as its weight says (`one_of` would choose each as often)."""
    return st.sampled_from([strategy for strategy, weight in choices for _ in range(weight)]).flatmap(lambda s: s)


# Bytes that make SSE structure, mixed with anything at all: field lines (a field, a value that may be invalid
# UTF-8 or huge, a line ending of any kind) and loose pieces.
_HUGE = b"x" * 65_536
_FIELDS = st.sampled_from([b"data: ", b"data:", b"data", b"event: ", b"event:", b"id: 1", b": comment", b"retry: x", b""])
_VALUES = _weighted(
    (st.sampled_from([b"", b"[DONE]", b'{"type": "response.output_text.delta"}', b"\xff\xfe", b"\xc3", b"\x00",
                      b"\xe9t\xe9", b" ", b":"]), 4),
    (st.binary(max_size=64), 4),
    (st.just(_HUGE), 1),
)
_ENDINGS = st.sampled_from([b"\n", b"\n", b"\r", b"\r\n", b"\n\n", b"\n\n", b"\r\r", b"\r\n\r\n", b""])
_LINES = st.tuples(_FIELDS, _VALUES, _ENDINGS).map(b"".join)
_PIECES = st.one_of(st.sampled_from([b"\n", b"\r", b"\r\n", b"\n\n", b"data: [DONE]", b"event:\xe9\n"]),
                    st.binary(max_size=64))
_STREAMS = st.lists(_weighted((_LINES, 4), (_PIECES, 1)), max_size=30).map(b"".join)


def _events(parser: SseParser, chunks: list[bytes]) -> list[SseEvent] | AgenticError:
    try:
        events = [event for chunk in chunks for event in parser.feed(chunk)]
        return events + parser.close()
    except AgenticError as error:  # a clean refusal is allowed; anything else fails the test
        return error


def _cut(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(cut, len(stream)) for cut in cuts})
    return [stream[start:end] for start, end in zip([0, *points], [*points, len(stream)], strict=True)]


@settings(max_examples=200, deadline=None)
@given(stream=_STREAMS, cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=12))
def test_any_bytes_in_any_chunking_parse_to_the_same_events(stream: bytes, cuts: list[int]) -> None:
    whole = _events(SseParser(), [stream])
    chunked = _events(SseParser(), _cut(stream, cuts))
    if isinstance(whole, AgenticError) or isinstance(chunked, AgenticError):
        return
    assert [(e.event, e.data) for e in whole] == [(e.event, e.data) for e in chunked]


@settings(max_examples=50, deadline=None)
@given(size=st.integers(min_value=1, max_value=4096), pieces=st.integers(min_value=1, max_value=8))
def test_an_event_past_the_size_limit_is_a_clean_error(size: int, pieces: int) -> None:
    parser = SseParser(max_event_bytes=1024)
    payload = b"data: " + b"x" * size
    step = max(1, len(payload) // pieces)
    result = _events(parser, [payload[i:i + step] for i in range(0, len(payload), step)] + [b"\n\n"])
    assert isinstance(result, AgenticError) or size + 6 <= 1024 + 2


_NAMES = st.text(alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]), min_size=1,
                 max_size=20)
_DATA = st.one_of(st.binary(max_size=200), st.just(_HUGE)).filter(lambda data: b"\r" not in data and b"\n" not in data)


@settings(max_examples=200, deadline=None)
@given(event_type=_NAMES, data=_DATA)
def test_a_framed_event_parses_back_to_itself(event_type: str, data: bytes) -> None:
    (event,) = _events(SseParser(), [frame(event_type, data)])  # type: ignore[misc]
    assert event.data == data


@settings(max_examples=100, deadline=None)
@given(framed=st.lists(st.tuples(_NAMES, _DATA), max_size=8),
       cuts=st.lists(st.integers(min_value=0, max_value=70_000), max_size=12))
def test_framed_events_in_any_chunking_parse_back_in_order(framed: list[tuple[str, bytes]], cuts: list[int]) -> None:
    stream = b"".join(frame(event_type, data) for event_type, data in framed)
    events = _events(SseParser(), _cut(stream, cuts))
    assert not isinstance(events, AgenticError)
    assert [event.data for event in events] == [data for _, data in framed]
