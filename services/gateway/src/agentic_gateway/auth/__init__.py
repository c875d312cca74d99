"""Who is calling: API keys, OIDC tokens, admin keys, and the principal each request runs as."""
