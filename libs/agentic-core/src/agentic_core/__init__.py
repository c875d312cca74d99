"""Pure domain logic shared by the agentic services (no network, no database)."""
