"""`python -m agentic_retrieval` serves; `python -m agentic_retrieval migrate` applies migrations and exits."""

from __future__ import annotations

import sys

from agentic_runtime import lifecycle
from agentic_runtime.logs import configure_logging

from agentic_retrieval.server import migrate_only, serve
from agentic_retrieval.settings import RetrievalSettings


def main() -> None:
    settings = RetrievalSettings()
    configure_logging("retrieval", settings.log_level)
    command = sys.argv[1] if len(sys.argv) > 1 else "serve"
    if command == "migrate":
        lifecycle.run(lambda: migrate_only(settings))
    elif command == "serve":
        lifecycle.run(lambda: serve(settings))
    else:
        sys.exit(f"unknown command {command!r}; expected 'serve' or 'migrate'")


if __name__ == "__main__":
    main()
