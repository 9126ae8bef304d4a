# Two entry points on a fresh machine with only Python: `make demo` and `make test`.
# Each creates .venv (once) and installs what it needs from this repository's own files.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip

INTEGRATIONS := integrations/langchain integrations/llama_index integrations/haystack
DEV_STAMP    := $(VENV)/.dev-installed
DEMO_STAMP   := $(VENV)/.demo-installed

.PHONY: demo test lint typecheck unit bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e ".[demo]"
	touch $@

$(DEV_STAMP): pyproject.toml $(wildcard integrations/*/pyproject.toml) | $(BIN)/python
	$(PIP) install --quiet -e ".[dev,validate,demo]" $(foreach d,$(wildcard $(INTEGRATIONS)),-e "$(d)[test]")
	touch $@

## demo: set up and run the main job (placement for a bundled corpus and query)
demo: $(DEMO_STAMP)
	$(BIN)/bookend demo

## test: set up, then lint, type-check and run every test
test: $(DEV_STAMP) lint typecheck unit

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

unit: $(DEV_STAMP)
	$(BIN)/pytest -q tests $(wildcard integrations/*/tests)

bench: $(DEV_STAMP)
	$(BIN)/python bench/speed.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
