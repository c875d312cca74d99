"""The Chat Completions API served over the round loop, for model servers that do not speak it (hosted providers).

Requests become stateless Responses turns; their results become completions or chunks.
"""

from agentic_core.chat_completions.reply import ChatChunkWriter, completion_from_response
from agentic_core.chat_completions.request import responses_request_from_chat

__all__ = ["ChatChunkWriter", "completion_from_response", "responses_request_from_chat"]
