"""`python -m agentic_llm_d`: check the secrets, then serve until SIGTERM."""

import sys

from agentic_runtime.http.service import HttpTimeouts, run_uvicorn
from agentic_runtime.logs import configure_logging
from pydantic import ValidationError

from agentic_llm_d.app import create_app
from agentic_llm_d.settings import LlmDSettings


def main() -> None:
    try:
        settings = LlmDSettings()
    except ValidationError as exc:
        # Refuse to bind with weak or missing secrets; never echo their values.
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors(include_input=False))
        sys.exit(f"agentic-llm-d: invalid settings: {problems}")
    configure_logging("llm-d", settings.log_level)
    timeouts = HttpTimeouts(settings.header_timeout_seconds, settings.body_timeout_seconds)
    run_uvicorn(create_app(settings), settings.host, settings.port, settings.drain_seconds, settings.unready_seconds,
                timeouts=timeouts)


if __name__ == "__main__":
    main()
