#!/usr/bin/env bash
# Check `llmspace run` end to end against REAL local OpenAI-compatible servers.
#
# Issue 3 acceptance: a thread runs offline against a real local server. No weights can be
# downloaded, so this writes a tiny random-weight llama GGUF with scripts/make_tiny_gguf.py
# (gibberish output; the point is the real wire format: SSE chunks, usage, finish_reason,
# GET /v1/models) and serves it on 127.0.0.1:8080 (the built-in `llama-cpp` provider's
# default base URL) with two real servers, one after the other:
#   A. `python -m llama_cpp.server` (llama-cpp-python[server], compiled from source by pip)
#   B. llama.cpp's own `llama-server`, built with cmake from the llama.cpp sources vendored
#      in the llama-cpp-python sdist (skip with SKIP_LLAMA_SERVER=1)
# For each: `llmspace models --refresh` must list llama-cpp as reachable with the model,
# `llmspace run` (streamed and --json) must save the assistant message with timing and a
# run-history entry (and usage when the server reports it: llama-server does,
# llama-cpp-python does not), and Ctrl-C (SIGINT) mid-stream must stop with exit 130 and
# keep the partial reply. Every thread bans end-of-text (token 2) through params.extra
# `logit_bias`, so the random model never stops after one token.
#
# Not part of the test suite. Needs python3 (3.9+), cmake, gcc/g++, curl and PyPI access.
# How long (measured on 2 shared cores): pip builds llama-cpp-python in about 6.5 minutes
# (about 1 minute when pip has the wheel cached), cmake builds llama-server in about 7
# minutes, and the checks take about 15 seconds per server. Later runs reuse WORKDIR.
#
# Usage: scripts/check_real_local_server.sh [WORKDIR]   (default WORKDIR: /tmp/llmspace-realserver)
# Env:   PORT (default 8080 — must stay 8080 for the built-in llama-cpp provider),
#        LLMSPACE_PY (default: <repo>/.venv/bin/python), SKIP_LLAMA_SERVER=1
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${1:-/tmp/llmspace-realserver}"
PORT="${PORT:-8080}"
PY="${LLMSPACE_PY:-$REPO/.venv/bin/python}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
VENV="$WORK/venv"
say() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

SERVER_PID=""
HOME_DIR=""
stop_server() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    SERVER_PID=""
}
cleanup() { stop_server; [ -n "$HOME_DIR" ] && rm -rf "$HOME_DIR"; }
trap cleanup EXIT

# 1. llama-cpp-python[server] in its own venv outside the repo
if ! "$VENV/bin/python" -c "import llama_cpp.server, gguf, numpy" 2>/dev/null; then
    say "building llama-cpp-python[server] in $VENV (log: $WORK/build.log)"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --upgrade pip
    start=$(date +%s)
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DLLAMA_CURL=OFF}" \
    CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
        "$VENV/bin/pip" install -v "llama-cpp-python[server]" gguf numpy >"$WORK/build.log" 2>&1 \
        || { tail -40 "$WORK/build.log" >&2; fail "pip build failed"; }
    say "built llama-cpp-python in $(( $(date +%s) - start )) s"
fi

# 2. a tiny random-weight model
"$VENV/bin/python" "$REPO/scripts/make_tiny_gguf.py" "$WORK/tiny.gguf"

start_server() {  # LABEL LOG CMD...
    local label="$1" log="$2"; shift 2
    if curl -s -o /dev/null "http://127.0.0.1:$PORT/v1/models"; then
        fail "something already answers on port $PORT; stop it first"
    fi
    say "starting $label on 127.0.0.1:$PORT"
    "$@" >"$log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 120); do
        curl -sf -o /dev/null "http://127.0.0.1:$PORT/v1/models" && break
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$log" >&2; fail "$label exited"; }
        sleep 0.5
    done
    curl -sf -o /dev/null "http://127.0.0.1:$PORT/v1/models" || fail "$label did not answer"
}

write_thread() {  # NAME MAXTOKENS
    "$PY" - "$LLM_SPACE_HOME/workspace/$1.json" "$MODEL" "$2" <<'EOF'
import json, sys, uuid
path, model, max_tokens = sys.argv[1], sys.argv[2], int(sys.argv[3])
params = {"maxTokens": max_tokens, "temperature": 0.8, "extra": {"logit_bias": {"2": -100}}}
thread = {"title": "real server check",
          "model": {"provider": "llama-cpp", "id": model, "params": params},
          "context": {"systemPrompt": "You are a tiny random model.",
                      "messages": [{"id": str(uuid.uuid4()), "role": "user",
                                    "content": [{"type": "text", "text": "Say hello in one sentence."}]}]}}
open(path, "w").write(json.dumps(thread, indent=2))
EOF
}

check_saved() {  # NAME EXPECT_USAGE(yes/no)
    "$PY" - "$LLM_SPACE_HOME/workspace/$1.json" "$2" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
a = t["context"]["messages"][-1]
assert a["role"] == "assistant", f"last message is {a['role']}"
print("assistant text:", repr("".join(c.get("text", "") for c in a["content"]))[:120])
print("usage:", json.dumps(a.get("usage")))
print("timing:", json.dumps(a.get("timing")))
runs = t.get("runHistory") or []
print("runHistory entries:", len(runs))
assert runs, "no run-history entry"
assert (a.get("timing") or {}).get("durationMs") is not None, "no timing"
if sys.argv[2] == "yes":
    assert (a.get("usage") or {}).get("output", 0) > 0, "no usage"
elif a.get("usage") is None:
    print("note: the server reported no usage for this stream")
print("OK")
EOF
}

run_checks() {  # LABEL EXPECT_USAGE
    local label="$1" usage="$2" out="$WORK/$1"
    mkdir -p "$out"
    HOME_DIR="$(mktemp -d)"
    export LLM_SPACE_HOME="$HOME_DIR"
    mkdir -p "$LLM_SPACE_HOME/workspace"
    cd "$REPO"
    say "[$label] llmspace models --refresh"
    "$PY" -m llmspace models --refresh | tee "$out/models.txt" | grep -A1 "^llama-cpp "
    grep -q "^llama-cpp .* reachable" "$out/models.txt" || fail "llama-cpp provider not reachable"
    MODEL="$("$PY" -m llmspace models --refresh --json | "$PY" -c '
import json, sys
p = next(p for p in json.load(sys.stdin) if p["id"] == "llama-cpp")
print(p["models"][0]["id"])')"
    echo "discovered model: $MODEL"

    say "[$label] llmspace run (streamed, maxTokens 32)"
    write_thread check 32
    local t0; t0=$(date +%s%N)
    "$PY" -m llmspace run check.json --provider llama-cpp --model "$MODEL"
    echo "(run took $(( ($(date +%s%N) - t0) / 1000000 )) ms, process start included)"
    check_saved check "$usage"

    say "[$label] llmspace run --json (maxTokens 32)"
    write_thread check-json 32
    "$PY" -m llmspace run check-json.json --provider llama-cpp --model "$MODEL" --json >"$out/run.json"
    "$PY" -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["status"]=="completed", s["status"]; print("json status:", s["status"], "| usage:", s["usage"])' "$out/run.json"
    check_saved check-json "$usage"

    say "[$label] Stop: SIGINT mid-stream (maxTokens 1900)"
    write_thread check-stop 1900
    set -m  # job control on: a background job of a non-interactive shell otherwise ignores SIGINT
    "$PY" -m llmspace run check-stop.json --provider llama-cpp --model "$MODEL" >"$out/stop.out" 2>"$out/stop.err" &
    local cli=$!
    for _ in $(seq 1 200); do [ -s "$out/stop.out" ] && break; sleep 0.02; done
    kill -INT "$cli"
    local rc=0
    wait "$cli" || rc=$?
    set +m
    echo "exit code $rc; stderr: $(cat "$out/stop.err")"
    [ "$rc" = 130 ] || fail "expected exit code 130 after Ctrl-C"
    check_saved check-stop no
    rm -rf "$HOME_DIR"; HOME_DIR=""
}

# 3A. llama-cpp-python's server
start_server "llama_cpp.server" "$WORK/server.log" \
    "$VENV/bin/python" -m llama_cpp.server --model "$WORK/tiny.gguf" --host 127.0.0.1 --port "$PORT" --n_ctx 2048
run_checks llama-cpp-python no
stop_server

# 3B. llama.cpp's llama-server
if [ "${SKIP_LLAMA_SERVER:-0}" != 1 ]; then
    BIN="$WORK/llama.cpp/build/bin/llama-server"
    if [ ! -x "$BIN" ]; then
        say "building llama-server with cmake (log: $WORK/llama-server-build.log)"
        start=$(date +%s)
        rm -rf "$WORK/sdist" && mkdir -p "$WORK/sdist"
        "$VENV/bin/pip" download -q --no-deps --no-binary :all: -d "$WORK/sdist" llama-cpp-python
        tar xzf "$WORK"/sdist/llama_cpp_python-*.tar.gz -C "$WORK/sdist"
        rm -rf "$WORK/llama.cpp" && mv "$WORK"/sdist/llama_cpp_python-*/vendor/llama.cpp "$WORK/llama.cpp"
        { cmake -S "$WORK/llama.cpp" -B "$WORK/llama.cpp/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
              -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
              -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF \
          && cmake --build "$WORK/llama.cpp/build" --target llama-server -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}"; } \
            >"$WORK/llama-server-build.log" 2>&1 || { tail -40 "$WORK/llama-server-build.log" >&2; fail "cmake build failed"; }
        say "built llama-server in $(( $(date +%s) - start )) s"
    fi
    start_server "llama-server" "$WORK/llama-server.log" \
        "$BIN" -m "$WORK/tiny.gguf" --host 127.0.0.1 --port "$PORT" -c 2048
    run_checks llama-server yes
    stop_server
fi

say "ALL CHECKS PASSED"
