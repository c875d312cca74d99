"""A documented estimate of input tokens, for model servers without a tokenizer endpoint.

About four bytes of UTF-8 JSON per token: OpenAI's rule of thumb for English
text; it overestimates for JSON-heavy tool schemas rather than under. An
inline image counts as `IMAGE_TOKENS`, whatever its size: a vision model reads
it as tiles or patches, never as its base64 text.
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson

BYTES_PER_TOKEN = 4
# About what OpenAI's models take for one high-detail image (765 tokens for 1024x1024, more for larger ones),
# and within the range vLLM's vision models use.
IMAGE_TOKENS = 1024
# A data URL image as JSON writes it: base64 has no quote, so the string ends at the first one.
_INLINE_IMAGE = re.compile(rb'"data:image/[^"]*"')


def estimate_input_tokens(body: dict[str, Any]) -> int:
    counted = [body.get("instructions") or "", body.get("input") or [], body.get("tools") or []]
    text = orjson.dumps(counted)
    images = 0
    if b'"data:image/' in text:  # a look in C first: most contexts hold no inline image for the pattern to cut
        text, images = _INLINE_IMAGE.subn(b'""', text)
    return max(1, math.ceil(len(text) / BYTES_PER_TOKEN) + images * IMAGE_TOKENS)
