"""Anthropic Messages adapter: lets the executor use Anthropic's API (`api: anthropic`) as a model server.

Requests are mapped to Messages bodies; replies and stream events back to
Responses objects and events, so the round loop never knows which API it spoke.
"""

from agentic_core.providers.anthropic.request import anthropic_request_from_responses
from agentic_core.providers.anthropic.response import response_from_anthropic_message
from agentic_core.providers.anthropic.stream import AnthropicStreamTranslator

__all__ = ["AnthropicStreamTranslator", "anthropic_request_from_responses", "response_from_anthropic_message"]
