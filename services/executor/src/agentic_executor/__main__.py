"""`python -m agentic_executor`: serve the Executor gRPC API until SIGTERM."""

from agentic_runtime import lifecycle
from agentic_runtime.logs import configure_logging

from agentic_executor.server import serve
from agentic_executor.settings import ExecutorSettings


def main() -> None:
    settings = ExecutorSettings()
    configure_logging("executor", settings.log_level)
    lifecycle.run(lambda: serve(settings))


if __name__ == "__main__":
    main()
