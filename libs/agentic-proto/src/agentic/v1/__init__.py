"""Generated from protos/agentic/v1 by `make proto`; do not edit."""
