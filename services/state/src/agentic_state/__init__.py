"""The state service: tenant-scoped storage of responses and their items."""
