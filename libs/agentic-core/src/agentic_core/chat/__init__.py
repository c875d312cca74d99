"""Chat Completions adapter: lets the executor use a model server that only speaks /v1/chat/completions.

The rest of the pipeline keeps consuming Responses-shaped data: requests are
mapped to chat bodies, replies and stream chunks back to Responses objects and events.
"""

from agentic_core.chat.request import chat_request_from_responses
from agentic_core.chat.response import response_from_chat_completion
from agentic_core.chat.stream import ChatStreamTranslator

__all__ = ["ChatStreamTranslator", "chat_request_from_responses", "response_from_chat_completion"]
