"""`python -m agentic_tool_runner`: run the tool runner until SIGTERM."""

from agentic_runtime.http.service import run_uvicorn
from agentic_runtime.logs import configure_logging

from agentic_tool_runner.app import create_app
from agentic_tool_runner.settings import ToolRunnerSettings


def main() -> None:
    settings = ToolRunnerSettings()
    configure_logging("tool-runner", settings.log_level)
    run_uvicorn(create_app(settings), settings.host, settings.port, settings.drain_seconds, settings.unready_seconds)


if __name__ == "__main__":
    main()
