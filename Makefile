# agentic — developer entry points. `make run` and `make test` are the README's two commands.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed
PROTO_OUT := libs/agentic-proto/src
PACKAGES := libs/agentic-core libs/agentic-proto libs/agentic-runtime \
	services/state services/executor services/gateway services/tool-runner \
	services/mcp-bridge services/llm-d deploy/local
PYPROJECTS := $(addsuffix /pyproject.toml,$(PACKAGES))
PYTEST_ARGS ?=

.PHONY: install run test test-unit test-e2e bench proto proto-check clean

install: $(STAMP)

$(STAMP): $(PYPROJECTS) requirements-dev.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check $(addprefix -e ,$(PACKAGES)) -r requirements-dev.txt
	@touch $(STAMP)

run: install
	$(PY) -m agentic_local

test: install
	$(PY) -m pytest $(PYTEST_ARGS)

test-unit: install
	$(PY) -m pytest libs services $(PYTEST_ARGS)

test-e2e: install
	$(PY) -m pytest tests $(PYTEST_ARGS)

bench: install
	$(PY) -m bench.run

proto: install
	$(PY) -m grpc_tools.protoc -I protos --python_out=$(PROTO_OUT) --pyi_out=$(PROTO_OUT) \
		--grpc_python_out=$(PROTO_OUT) protos/agentic/v1/*.proto

clean:
	rm -rf $(VENV) .pytest_cache
