"""The MCP bridge: pooled MCP client sessions, discovery over gRPC, calls from NATS JetStream."""
