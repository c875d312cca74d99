"""Usage accounting: what a turn consumed, in one shape whatever API it came from; the organization usage and
costs pages; per-tenant quota limits. Pure: no I/O."""
