"""`make run`'s launcher on a fresh data folder: embedded PostgreSQL + NATS from the wheels,
every service up, URLs printed, data kept across restarts, nothing left running after SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
from agentic_local.processes import free_port
from openai import OpenAI

SERVICES = ("gateway", "executor", "state", "mcp-bridge", "tool-runner", "llm-d", "retrieval", "postgres", "nats")


def _start(
    data_dir: Path, upstream_url: str, port: int, llm_d_port: int, **settings: str
) -> tuple[subprocess.Popen, dict[str, str]]:
    """`python -m agentic_local` as `make run` starts it, with `settings` in its environment."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTIC_")}
    env.update(AGENTIC_DATA_DIR=str(data_dir), AGENTIC_UPSTREAM_URL=upstream_url, AGENTIC_PORT=str(port),
               AGENTIC_LLM_D_PORT=str(llm_d_port), PYTHONWARNINGS="ignore", **settings)
    launcher = subprocess.Popen([sys.executable, "-m", "agentic_local"], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    urls: dict[str, str] = {}
    deadline = time.monotonic() + 120
    lines = []
    while time.monotonic() < deadline:
        line = launcher.stdout.readline()
        if not line:
            launcher.wait()
            launcher.stdout.close()
            raise AssertionError("launcher exited:\n" + "".join(lines))
        lines.append(line)
        match = re.match(r"^([a-z-]+): (\S+)$", line.strip())
        if match:
            urls[match.group(1)] = match.group(2)
        if "agentic is ready" in line:
            return launcher, urls
    launcher.kill()
    launcher.wait()
    launcher.stdout.close()
    raise AssertionError("launcher not ready in time:\n" + "".join(lines))


def _stop(launcher: subprocess.Popen) -> list[psutil.Process]:
    descendants = psutil.Process(launcher.pid).children(recursive=True)
    launcher.send_signal(signal.SIGTERM)
    assert launcher.wait(60) == 0
    launcher.stdout.close()
    time.sleep(0.2)
    return [process for process in descendants if process.is_running() and process.status() != psutil.STATUS_ZOMBIE]


def test_run_prints_every_url_keeps_data_and_leaves_nothing_behind(tmp_path: Path, fake_upstream) -> None:
    port, llm_d_port = free_port(), free_port()
    launcher, urls = _start(tmp_path / "data", fake_upstream.base_url, port, llm_d_port)
    try:
        assert set(SERVICES) <= set(urls)
        assert urls["gateway"] == f"http://127.0.0.1:{port}"
        with OpenAI(base_url=urls["gateway"] + "/v1", api_key="unused-without-keys", max_retries=0) as client:
            created = client.responses.create(model="smollm2", input="survive a restart")
    finally:
        leftovers = _stop(launcher)
    assert leftovers == [], f"processes left running: {leftovers}"
    assert (tmp_path / "data" / "llm-d.secrets").stat().st_mode & 0o077 == 0

    launcher, urls = _start(tmp_path / "data", fake_upstream.base_url, port, llm_d_port)
    try:
        with OpenAI(base_url=urls["gateway"] + "/v1", api_key="unused-without-keys", max_retries=0) as client:
            assert client.responses.retrieve(created.id).output_text == created.output_text
    finally:
        assert _stop(launcher) == []


def test_a_port_in_use_fails_clearly_and_starts_nothing(tmp_path: Path, fake_upstream) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTIC_")}
        env.update(AGENTIC_DATA_DIR=str(tmp_path), AGENTIC_UPSTREAM_URL=fake_upstream.base_url, AGENTIC_PORT=str(port),
                   AGENTIC_LLM_D_PORT=str(free_port()), PYTHONWARNINGS="ignore")
        result = subprocess.run([sys.executable, "-m", "agentic_local"], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert f"port {port}" in result.stderr
    assert not any("agentic_" in " ".join(p.info["cmdline"] or []) and str(tmp_path) in " ".join(p.info["cmdline"] or [])
                   for p in psutil.process_iter(["cmdline"]))


def test_a_service_that_dies_is_reported_and_restarted(tmp_path: Path, fake_upstream) -> None:
    port, llm_d_port = free_port(), free_port()
    launcher, urls = _start(tmp_path / "data", fake_upstream.base_url, port, llm_d_port)
    try:
        (executor,) = [process for process in psutil.Process(launcher.pid).children()
                       if "agentic_executor" in " ".join(process.cmdline())]
        executor.kill()
        lines: list[str] = []
        while not any(line.strip() == "agentic: restarting executor" for line in lines):
            line = launcher.stdout.readline()
            assert line and len(lines) < 500, "the launcher did not restart the executor:\n" + "".join(lines)
            lines.append(line)
        assert any("executor exited with code -9" in line for line in lines), lines
        deadline = time.monotonic() + 60
        with OpenAI(base_url=urls["gateway"] + "/v1", api_key="unused-without-keys", max_retries=0) as client:
            while True:  # the restarted executor serves turns again
                try:
                    assert client.responses.create(model="smollm2", input="back?").status == "completed"
                    break
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
    finally:
        assert _stop(launcher) == []
