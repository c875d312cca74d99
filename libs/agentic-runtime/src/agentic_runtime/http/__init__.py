"""HTTP: the served side (service, guard, errors, openapi, body_encoding; extra [http]) and calls to model servers (upstream; extra [upstream])."""
