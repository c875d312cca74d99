"""Helpers for llm-d split-execution tests and the llm-d benchmark: a fake coordinator."""
