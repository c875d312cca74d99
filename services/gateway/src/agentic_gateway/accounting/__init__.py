"""Usage, costs, quotas and the audit trail: what the gateway records of its callers and what it limits."""
