"""Adapters for hosted model APIs that are neither Responses nor Chat Completions (Anthropic Messages, Gemini)."""
