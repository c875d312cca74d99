"""The tool runner: a NATS JetStream consumer that executes gateway-owned tools."""
