"""Identifiers: the ones we hand out (`<prefix>_<48 hex>`, unguessable and never reused), and the check at the edge on
the ones a client sends.

A client's id reaches PostgreSQL (which refuses NUL bytes) and comes back in error messages carried as gRPC trailers
(which have a size limit): one that is not a short string of a plain alphabet is refused once, where the request
enters, with a 400.
"""

from __future__ import annotations

import re
import secrets
from typing import Annotated, TypeGuard

from pydantic import StringConstraints

from agentic_core.errors import InvalidRequest

# Item type → id prefix, following OpenAI's conventions.
ITEM_ID_PREFIXES: dict[str, str] = {
    "message": "msg",
    "function_call": "fc",
    "function_call_output": "fco",
    "reasoning": "rs",
    "custom_tool_call": "ctc",
    "custom_tool_call_output": "ctco",
    "web_search_call": "ws",
    "file_search_call": "fs",
    "code_interpreter_call": "ci",
    "mcp_call": "mcp",
    "mcp_list_tools": "mcpl",
    "mcp_approval_request": "mcpr",
    "mcp_approval_response": "mcpa",
    "compaction": "cmp",
}

# Ours fit in it; other systems' (OpenAI's, a model server's) share the alphabet.
MAX_ID_CHARS = 128
ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}$"
_ID = re.compile(ID_PATTERN)
# An id quoted in an error message keeps this many characters.
_QUOTED_CHARS = 64

# An id field of a pydantic model.
Identifier = Annotated[str, StringConstraints(pattern=ID_PATTERN, max_length=MAX_ID_CHARS)]


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(24)}"


def new_response_id() -> str:
    return new_id("resp")


def new_item_id(item_type: str) -> str:
    return new_id(ITEM_ID_PREFIXES.get(item_type, "item"))


def is_identifier(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and _ID.match(value) is not None


def checked_id(value: object, param: str) -> str:
    """`value` if it is an identifier, else a 400 naming `param`."""
    if isinstance(value, str) and _ID.match(value) is not None:
        return value
    if not isinstance(value, str):
        raise InvalidRequest(f"Invalid type for '{param}': expected a string.", param=param, code="invalid_type")
    raise InvalidRequest(
        f"Invalid value for '{param}': expected an id of 1 to {MAX_ID_CHARS} letters, digits, '_', '-', '.' or ':' "
        f"(got '{quoted(value)}').", param=param, code="invalid_value",
    )


def optional_id(value: str | None, param: str) -> str:
    """A query parameter that may be absent or empty (a cursor): '' when so, else a checked id."""
    return checked_id(value, param) if value else ""


def quoted(text: str) -> str:
    """`text` as an error message may quote it: short, and without control characters."""
    short = text if len(text) <= _QUOTED_CHARS else text[:_QUOTED_CHARS] + "…"
    return short.encode("unicode_escape").decode("ascii") if not short.isprintable() else short
