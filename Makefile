# Two set-up commands: `make run` and `make test`. Both create .venv when it is missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench dist clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/llmspace

test: $(STAMP)
	@if [ -z "$$DISPLAY" ] && ! command -v Xvfb >/dev/null; then \
	  echo "Xvfb is missing: install it (apt-get install -y xvfb) or run .ci/run"; exit 1; fi
	$(BIN)/mypy
	$(BIN)/ruff check .
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/release.yml
	$(BIN)/python -m pytest

# The static checks alone (mypy strict outside llmspace/ui, ruff); `make test` runs them first.
lint: $(STAMP)
	$(BIN)/mypy
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python -m bench

# The single-file executable for this OS into build/dist/ (build/llmspace.spec; docs/release.md).
dist: $(STAMP)
	$(BIN)/pyinstaller --noconfirm --clean --distpath build/dist --workpath build/work build/llmspace.spec

clean:
	rm -rf build/work build/dist .pytest_cache
