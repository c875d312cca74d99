"""A documented estimate of input tokens, for model servers without a tokenizer endpoint.

About four bytes of UTF-8 JSON per token: OpenAI's rule of thumb for English
text; it overestimates for JSON-heavy tool schemas rather than under.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

BYTES_PER_TOKEN = 4


def estimate_input_tokens(body: dict[str, Any]) -> int:
    counted = [body.get("instructions") or "", body.get("input") or [], body.get("tools") or []]
    return max(1, math.ceil(len(orjson.dumps(counted)) / BYTES_PER_TOKEN))
