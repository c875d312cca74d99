"""`python -m agentic_local` (what `make run` calls): start everything, print the URLs, stop on Ctrl-C/SIGTERM."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from agentic_local.stack import LocalStack, StackConfig


def main() -> None:
    data_dir = Path(os.environ.get("AGENTIC_DATA_DIR", ".agentic"))
    config = StackConfig.from_env(data_dir)
    stack = LocalStack(config)
    stopping = False

    def request_stop(signum: int, frame: object) -> None:
        nonlocal stopping
        if stopping:
            return
        stopping = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        print(f"agentic: starting (data under {stack.data_dir}, model server {config.upstream_url})", flush=True)
        stack.start()
        for name, url in stack.urls.items():
            print(f"{name}: {url}", flush=True)
        print(f"agentic is ready: {stack.base_url}  (logs under {stack.logs_dir}; Ctrl-C stops)", flush=True)
        signal.pause()
    except KeyboardInterrupt:
        pass
    except Exception as exc:  # a start-up failure: say why, leave nothing running
        print(f"agentic: failed to start: {exc}", file=sys.stderr, flush=True)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stack.stop()
        sys.exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("agentic: stopping", flush=True)
    stack.stop()
    print("agentic: stopped", flush=True)


if __name__ == "__main__":
    main()
