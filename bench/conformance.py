"""CPU cost of filling relayed Responses replies in to the Open Responses schemas (`python -m bench.conformance`).

Measures `agentic_core.responses.conformance` on vLLM 0.32's captured replies (tests/fixtures): a JSON body, and a
whole streamed reply fed one event per chunk (as vLLM writes it) and in 64-byte chunks (the worst case), next to one orjson parse of the same body for scale. Process CPU time,
so the figure holds on a busy machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import orjson
from agentic_core.responses.conformance import ConformingSseRelay, RelayedShape

FIXTURES = Path(__file__).parents[1] / "tests" / "fixtures"
ROUNDS = 20_000


def _microseconds(work: Callable[[], object], rounds: int = ROUNDS) -> float:
    started = time.process_time()
    for _ in range(rounds):
        work()
    return (time.process_time() - started) / rounds * 1e6


def _relay(shape: RelayedShape, chunks: list[bytes]) -> bytes:
    relay = ConformingSseRelay(shape)
    return b"".join(relay.feed(chunk) for chunk in chunks) + relay.close()


def _per_event(raw: bytes) -> list[bytes]:
    """As vLLM writes a stream: one chunk per event."""
    return [frame + b"\n\n" for frame in raw.split(b"\n\n") if frame]


def main() -> None:
    shape = RelayedShape({"model": "smollm2", "prompt_cache_key": "k"}, int(time.time()))
    body = (FIXTURES / "responses-text.response.json").read_bytes()
    print(f"JSON body ({len(body)} bytes): {_microseconds(lambda: shape.body(body)):.1f} µs "
          f"(one orjson parse: {_microseconds(lambda: orjson.loads(body)):.1f} µs)")
    for name in ("responses-text-stream.sse", "responses-tool-stream.sse"):
        raw = (FIXTURES / name).read_bytes()
        per_event, small = _per_event(raw), [raw[start:start + 64] for start in range(0, len(raw), 64)]
        print(f"{name} ({len(per_event)} events, {len(raw)} bytes): "
              f"{_microseconds(lambda chunks=per_event: _relay(shape, chunks)):.1f} µs one event per chunk, "
              f"{_microseconds(lambda chunks=small: _relay(shape, chunks)):.1f} µs in 64-byte chunks")


if __name__ == "__main__":
    main()
