"""`python -m agentic_local` (what `make run` calls): start everything, print the URLs, stop on Ctrl-C/SIGTERM.

`python -m agentic_local codex|claude [args]` (`make codex`, `make claude`) runs that agent client against it.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from agentic_local import model_server
from agentic_local.processes import ChildProcess, free_port
from agentic_local.stack import LocalStack, StackConfig
from agentic_local.supervisor import ServiceKeepsDying, Supervisor


def start_model_servers(config: StackConfig, logs_dir: Path) -> list[ChildProcess]:
    """No AGENTIC_UPSTREAM_URL: serve SmolLM2-135M with vLLM's CPU build (prepared once, then cached), and, unless
    AGENTIC_EMBEDDINGS_URL is set (empty: keyword search only), all-MiniLM-L6-v2 for vector stores."""
    log_path = logs_dir / "model-server.log"
    print(f"model-server: preparing (the tools' output goes to {log_path})", flush=True)
    paths = model_server.prepare(progress=lambda line: print(line, flush=True), log_path=log_path)
    port = free_port()
    print(f"model-server: starting vLLM on port {port} (about 40 s; log {log_path})", flush=True)
    children = [model_server.start(port, log_path, paths)]
    config.upstream_url = model_server.base_url(port)
    print(f"model-server: {config.upstream_url}", flush=True)
    if "AGENTIC_EMBEDDINGS_URL" in os.environ:
        return children
    port, log_path = free_port(), logs_dir / "embeddings-server.log"
    print(f"embeddings-server: starting {model_server.EMBEDDING_SERVED_NAME} on port {port} (log {log_path})",
          flush=True)
    try:
        children.append(model_server.start_embeddings(port, log_path, paths))
    except BaseException:
        children[0].stop(30.0)
        raise
    config.extra_env.update(AGENTIC_EMBEDDINGS_URL=model_server.base_url(port),
                            AGENTIC_EMBEDDINGS_MODEL=model_server.EMBEDDING_SERVED_NAME)
    print(f"embeddings-server: {model_server.base_url(port)}", flush=True)
    return children


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("codex", "claude"):
        from agentic_local import client_session

        sys.exit(client_session.main(sys.argv[1], sys.argv[2:]))
    data_dir = Path(os.environ.get("AGENTIC_DATA_DIR", ".agentic"))
    config = StackConfig.from_env(data_dir)
    stack = LocalStack(config)
    stopping = False
    children: list[ChildProcess] = []

    def stop_all() -> None:
        stack.stop()
        for child in children:
            child.stop(30.0)

    def request_stop(signum: int, frame: object) -> None:
        nonlocal stopping
        if stopping:
            return
        stopping = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        if not os.environ.get("AGENTIC_UPSTREAM_URL"):
            children.extend(start_model_servers(config, stack.logs_dir))
        print(f"agentic: starting (data under {stack.data_dir}, model server {config.upstream_url})", flush=True)
        stack.start()
        for name, url in stack.urls.items():
            print(f"{name}: {url}", flush=True)
        print(f"agentic is ready: {stack.base_url}  (logs under {stack.logs_dir}; Ctrl-C stops)", flush=True)
        supervisor = Supervisor(lambda: [*stack.children, *stack.infra_children(), *children],
                                lambda line: print(line, flush=True))
        while True:
            time.sleep(0.5)
            supervisor.check()
    except KeyboardInterrupt:
        pass
    except ServiceKeepsDying as exc:
        print(f"agentic: stopping: {exc}", file=sys.stderr, flush=True)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stop_all()
        sys.exit(1)
    except Exception as exc:  # a start-up failure: say why, leave nothing running
        print(f"agentic: failed to start: {exc}", file=sys.stderr, flush=True)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stop_all()
        sys.exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("agentic: stopping", flush=True)
    stop_all()
    print("agentic: stopped", flush=True)


if __name__ == "__main__":
    main()
