"""The llm-d backend: hydrate/persist for llm-d coordinators that run inference themselves."""
