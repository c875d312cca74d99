"""The executor: runs each Responses turn (rehydrate, inference, persist) behind a gRPC stream."""
