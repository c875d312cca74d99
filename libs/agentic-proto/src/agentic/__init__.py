"""Generated protobuf packages of agentic (see protos/)."""
