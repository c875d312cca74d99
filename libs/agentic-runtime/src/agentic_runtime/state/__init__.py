"""The state service as other services call it: tenant-scoped calls (client), usage and audit records in batches. Extra: [grpc]."""
