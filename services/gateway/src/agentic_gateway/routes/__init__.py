"""The public API's routes, one module per API."""
