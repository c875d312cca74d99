"""Anthropic Messages adapter: lets clients of `POST /v1/messages` use the gateway's Responses round loop.

A Messages body is mapped to a stateless Responses create body; the loop's
final response (JSON) or public event stream (SSE) is mapped back to
Anthropic's `Message` and its stream events. Pure: no I/O.
"""

from agentic_core.messages.errors import anthropic_error, anthropic_error_type, anthropic_status
from agentic_core.messages.request import (
    count_tokens_reply,
    count_tokens_request,
    fetches_media,
    responses_request_from_messages,
)
from agentic_core.messages.response import message_from_response
from agentic_core.messages.stream import MessagesStreamTranslator

__all__ = [
    "MessagesStreamTranslator",
    "anthropic_error",
    "anthropic_error_type",
    "anthropic_status",
    "count_tokens_reply",
    "count_tokens_request",
    "fetches_media",
    "message_from_response",
    "responses_request_from_messages",
]
