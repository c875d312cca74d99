"""A stack of a benchmark's own: its own fake model server and, unless AGENTIC_DATABASE_URL / AGENTIC_NATS_URL name
servers, its own embedded PostgreSQL and NATS; with the pids whose CPU the benchmark reads from /proc."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentic_local.processes import free_port, tcp_accepts, wait_until
from agentic_local.stack import LocalStack, StackConfig

from bench.cpu import stack_pids

ROOT = Path(__file__).parents[1]
SHOWN = ("gateway", "executor", "state", "postgres", "nats")  # the processes a turn's CPU goes to


@contextmanager
def own_stack(name: str, fake_args: tuple[str, ...] = (), with_model_server: bool = False,
              **env: str) -> Iterator[tuple[LocalStack, dict[str, int]]]:
    """`fake_args`: options of the fake model server (e.g. `--call-tools`); `with_model_server`: its pid too (as
    `model-server`); `env`: settings of the stack."""
    port = free_port()
    fake = subprocess.Popen([sys.executable, "-m", "tests.support.fake_upstream", "--port", str(port), *fake_args],
                            cwd=ROOT)
    try:
        wait_until(lambda: tcp_accepts(port), 30, "fake model server")
        with tempfile.TemporaryDirectory(prefix=f"agentic-bench-{name}-") as data_dir:
            stack = LocalStack(StackConfig(
                data_dir=Path(data_dir), upstream_url=f"http://127.0.0.1:{port}/v1", gateway_port=0, llm_d_port=0,
                database_url=os.environ.get("AGENTIC_DATABASE_URL"), nats_url=os.environ.get("AGENTIC_NATS_URL"),
                extra_env={"AGENTIC_LOG_LEVEL": "WARNING", **env},
            ))
            stack.start()
            try:
                running = stack_pids(stack)
                pids = {process: running[process] for process in SHOWN if process in running}
                yield stack, {**pids, "model-server": fake.pid} if with_model_server else pids
            finally:
                stack.stop()
    finally:
        fake.terminate()
        fake.wait()
