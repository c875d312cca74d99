"""The Responses API domain: request validation, items, the response object, stream translation."""
