"""What a client may send inside the JSON fields: metadata, attributes, chunking strategies, expiry. Pure checks,
each a 400 naming its parameter, with OpenAI's limits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from agentic_core.errors import InvalidRequest

MAX_PAIRS = 16
MAX_KEY_CHARS = 64
MAX_VALUE_CHARS = 512
FILE_PURPOSES = frozenset({"assistants", "batch", "fine-tune", "vision", "user_data", "evals"})
FILE_EXPIRY_SECONDS = (3600, 2_592_000)
# OpenAI's bounds on `static` chunking.
STATIC_MIN_TOKENS, STATIC_MAX_TOKENS = 100, 4096
AUTO_MAX_TOKENS, AUTO_OVERLAP_TOKENS = 800, 400


def _invalid(param: str, message: str) -> InvalidRequest:
    return InvalidRequest(f"Invalid '{param}': {message}", param=param, code="invalid_value")


def json_field(raw: bytes, param: str) -> Any:
    """A JSON field as the gateway passed it; empty bytes: absent (None)."""
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise _invalid(param, "expected JSON.") from None


def _pairs(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _invalid(param, "expected an object.")
    if len(value) > MAX_PAIRS:
        raise _invalid(param, f"at most {MAX_PAIRS} keys.")
    for key in value:
        if len(key) > MAX_KEY_CHARS:
            raise _invalid(param, f"keys are at most {MAX_KEY_CHARS} characters.")
    return value


def metadata(value: Any, param: str = "metadata") -> dict[str, str]:
    """Up to 16 string pairs (None: none)."""
    if value is None:
        return {}
    pairs = _pairs(value, param)
    for item in pairs.values():
        if not isinstance(item, str) or len(item) > MAX_VALUE_CHARS:
            raise _invalid(param, f"values are strings of at most {MAX_VALUE_CHARS} characters.")
    return pairs


def attributes(value: Any, param: str = "attributes") -> dict[str, str | float | bool] | None:
    """Up to 16 pairs whose values are strings (≤ 512), numbers or booleans; None stays None."""
    if value is None:
        return None
    pairs = _pairs(value, param)
    for item in pairs.values():
        if isinstance(item, str):
            if len(item) > MAX_VALUE_CHARS:
                raise _invalid(param, f"string values are at most {MAX_VALUE_CHARS} characters.")
        elif not isinstance(item, (bool, int, float)):
            raise _invalid(param, "values are strings, numbers or booleans.")
    return pairs


@dataclass(frozen=True)
class Chunking:
    """How a file is cut: `auto` (sizes decided at ingestion, from the embedding model's window) or `static`."""

    kind: str  # auto | static
    max_tokens: int = AUTO_MAX_TOKENS
    overlap_tokens: int = AUTO_OVERLAP_TOKENS

    def to_json(self) -> dict[str, Any]:
        return {"type": self.kind, **({"static": {"max_chunk_size_tokens": self.max_tokens,
                                                   "chunk_overlap_tokens": self.overlap_tokens}}
                                      if self.kind == "static" else {})}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Chunking:
        static = value.get("static") or {}
        return cls(value["type"], static.get("max_chunk_size_tokens", AUTO_MAX_TOKENS),
                   static.get("chunk_overlap_tokens", AUTO_OVERLAP_TOKENS))


AUTO = Chunking("auto")


def chunking(value: Any, param: str = "chunking_strategy") -> Chunking | None:
    """`{"type": "auto"}` or `{"type": "static", "static": {"max_chunk_size_tokens", "chunk_overlap_tokens"}}`;
    None: not given."""
    if value is None:
        return None
    if not isinstance(value, dict) or value.get("type") not in ("auto", "static"):
        raise _invalid(param, "expected {'type': 'auto'} or {'type': 'static', 'static': {...}}.")
    if value["type"] == "auto":
        if set(value) - {"type"}:
            raise _invalid(param, "the 'auto' strategy takes no other fields.")
        return AUTO
    static = value.get("static")
    if not isinstance(static, dict):
        raise _invalid(f"{param}.static", "expected an object.")
    size, overlap = static.get("max_chunk_size_tokens"), static.get("chunk_overlap_tokens")
    if not isinstance(size, int) or isinstance(size, bool) or not STATIC_MIN_TOKENS <= size <= STATIC_MAX_TOKENS:
        raise _invalid(f"{param}.static.max_chunk_size_tokens",
                       f"expected an integer from {STATIC_MIN_TOKENS} to {STATIC_MAX_TOKENS}.")
    if not isinstance(overlap, int) or isinstance(overlap, bool) or not 0 <= overlap <= size // 2:
        raise _invalid(f"{param}.static.chunk_overlap_tokens",
                       "expected an integer from 0 to half of max_chunk_size_tokens.")
    return Chunking("static", size, overlap)


def store_expiry(value: Any, param: str = "expires_after") -> dict[str, Any] | None:
    """`{"anchor": "last_active_at", "days": 1–365}`; None: never expires."""
    if value is None:
        return None
    if not isinstance(value, dict) or value.get("anchor") != "last_active_at":
        raise _invalid(param, "expected {'anchor': 'last_active_at', 'days': n}.")
    days = value.get("days")
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= 365:
        raise _invalid(f"{param}.days", "expected an integer from 1 to 365.")
    return {"anchor": "last_active_at", "days": days}


def file_purpose(value: str) -> str:
    if value not in FILE_PURPOSES:
        raise InvalidRequest(f"Invalid value for 'purpose': expected one of {', '.join(sorted(FILE_PURPOSES))}.",
                             param="purpose", code="invalid_value")
    return value


def file_expiry_seconds(seconds: int) -> int | None:
    """0: never; else within OpenAI's bounds (an hour to 30 days)."""
    if seconds == 0:
        return None
    low, high = FILE_EXPIRY_SECONDS
    if not low <= seconds <= high:
        raise InvalidRequest(f"Invalid value for 'expires_after[seconds]': expected {low} to {high}.",
                             param="expires_after[seconds]", code="invalid_value")
    return seconds
