"""Compressed request bodies: each coding decodes, the limit applies to the decoded size, bad data is a 400."""

from __future__ import annotations

import gzip
import zlib

import pytest
import zstandard
from agentic_core.errors import InvalidRequest, PayloadTooLarge
from agentic_runtime.http.body_encoding import UnsupportedEncoding, decode_body, encodings_of

BODY = b'{"model": "m", "input": "' + b"hello " * 2000 + b'"}'


def too_large(limit: int, size: int | None) -> PayloadTooLarge:
    return PayloadTooLarge(f"over {limit}")


def _deflate_raw(data: bytes) -> bytes:
    encoder = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return encoder.compress(data) + encoder.flush()


ENCODERS = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "zstd": zstandard.ZstdCompressor().compress,
}


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_each_coding_decodes_to_the_original(coding: str) -> None:
    assert decode_body(ENCODERS[coding](BODY), [coding], 1 << 20, too_large) == BODY


def test_raw_deflate_is_accepted_as_deflate() -> None:
    assert decode_body(_deflate_raw(BODY), ["deflate"], 1 << 20, too_large) == BODY


def test_zstd_frame_without_a_declared_size_decodes() -> None:
    compressor = zstandard.ZstdCompressor()
    streamed = compressor.compressobj()
    frame = streamed.compress(BODY) + streamed.flush()
    assert decode_body(frame, ["zstd"], 1 << 20, too_large) == BODY


def test_stacked_codings_are_undone_last_first() -> None:
    encoded = zstandard.ZstdCompressor().compress(gzip.compress(BODY))
    assert decode_body(encoded, encodings_of("gzip, zstd"), 1 << 20, too_large) == BODY


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_a_decompression_bomb_stops_at_the_limit(coding: str) -> None:
    bomb = ENCODERS[coding](b"\0" * (64 * 1024 * 1024))  # 64 MiB of zeros in a few KiB
    assert len(bomb) < 512 * 1024
    with pytest.raises(PayloadTooLarge):
        decode_body(bomb, [coding], 1024 * 1024, too_large)


def test_the_exact_limit_is_allowed() -> None:
    assert decode_body(gzip.compress(b"x" * 1000), ["gzip"], 1000, too_large) == b"x" * 1000
    with pytest.raises(PayloadTooLarge):
        decode_body(gzip.compress(b"x" * 1001), ["gzip"], 1000, too_large)


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_corrupt_or_truncated_data_is_a_client_error(coding: str) -> None:
    encoded = ENCODERS[coding](BODY)
    for broken in (b"not compressed at all", encoded[: len(encoded) // 2]):
        with pytest.raises(InvalidRequest) as caught:
            decode_body(broken, [coding], 1 << 20, too_large)
        assert coding in caught.value.message


def test_header_parsing() -> None:
    assert encodings_of(None) == []
    assert encodings_of("identity") == []
    assert encodings_of("x-gzip") == ["gzip"]
    assert encodings_of("GZIP , zstd") == ["gzip", "zstd"]
    with pytest.raises(UnsupportedEncoding) as caught:
        encodings_of("br")
    assert caught.value.http_status == 415
    assert "'br'" in caught.value.message
