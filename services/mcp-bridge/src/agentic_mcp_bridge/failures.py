"""What went wrong with an MCP server, in words fit for a client: never headers, URLs' queries or tracebacks."""

from __future__ import annotations

import httpx2
import mcp_types as types
from mcp.shared.exceptions import MCPError


def leaf(error: BaseException | None) -> BaseException | None:
    """The first real error inside (nested) exception groups, as anyio task groups wrap them."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def is_session_gone(error: BaseException | None) -> bool:
    """The server answered that it does not know the session (HTTP 404 on a session): nothing ran."""
    error = leaf(error)
    return isinstance(error, MCPError) and error.code == types.INVALID_REQUEST and error.message == "Session terminated"


def describe_failure(error: BaseException | None) -> str:
    error = leaf(error)
    if isinstance(error, httpx2.ConnectTimeout):
        return "connecting to it timed out."
    if isinstance(error, httpx2.ConnectError):
        return "it could not be reached."
    if isinstance(error, httpx2.TimeoutException):
        return "it stopped answering."
    if isinstance(error, httpx2.HTTPStatusError):
        return f"it answered HTTP {error.response.status_code}."
    if isinstance(error, httpx2.HTTPError):
        return "the connection to it failed."
    if isinstance(error, MCPError):
        return f"it answered with an error: {error.message}"
    if isinstance(error, TimeoutError):
        return "it did not answer in time."
    if isinstance(error, OSError):
        return "its process could not be started." if isinstance(error, FileNotFoundError | PermissionError) else \
            "the connection to it failed."
    if error is None:
        return "the session to it ended."
    return f"it broke the MCP protocol ({type(error).__name__})."
