"""Shared I/O plumbing for the agentic services."""
