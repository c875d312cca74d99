"""Gemini adapter: lets the executor use Google's Gemini API (`api: gemini`) as a model server.

Requests are mapped to `generateContent` bodies (the model in the path);
replies and SSE chunks back to Responses objects and events.
"""

from agentic_core.providers.gemini.request import gemini_path, gemini_request_from_responses
from agentic_core.providers.gemini.response import response_from_gemini
from agentic_core.providers.gemini.stream import GeminiStreamTranslator

__all__ = ["GeminiStreamTranslator", "gemini_path", "gemini_request_from_responses", "response_from_gemini"]
