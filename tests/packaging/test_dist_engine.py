"""The built-in engine inside the single-file executable (issue 24, deliverable 3).

With LLMSPACE_BUILD_DIST=1 the session builds the executable once (tests/packaging/conftest.py);
each test then runs it with its own TMPDIR, so the folders the one-file executable unpacks
itself into — its own and the engine supervisor's — and every process running from them can be
checked afterwards:

- `--self-test --engine-model <270M Gemma>` starts the bundled llama-server, gets a token and
  stops it: nothing left running, no unpack folder left behind;
- with an environment stripped of Python (PATH=/usr/bin:/bin, HOME, LLM_SPACE_HOME, TMPDIR
  only) the executable adds the 0.5B model, runs a thread on it (the reply streams), and
  `local stop` leaves nothing running.

The models come from `.ci/test_models.py` (tests/local/engine_support.py): missing, the tests
skip locally and fail under CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from llmspace.local.engine_settings import EngineSettings, save
from llmspace.paths import DataRoot
from tests.local.engine_support import GEMMA, QWEN, THREADS, model_file, pid_gone, wait_for

pytestmark = pytest.mark.dist

TIMEOUT = 900.0  # a busy two-core machine: unpacking twice, loading the model, a few tokens


def _processes_from(exe: Path, tmp: Path) -> list[str]:
    """Processes running from an unpack folder under `tmp`, or supervisors of `exe`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            binary = os.readlink(entry / "exe")
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if binary.startswith(str(tmp)) or (b"--local-supervisor" in cmdline and binary == str(exe)):
            if not pid_gone(int(entry.name)):
                found.append(f"{entry.name}: {b' '.join(cmdline).decode(errors='replace')}")
    return found


def _assert_nothing_left(exe: Path, tmp: Path) -> None:
    wait_for(lambda: not _processes_from(exe, tmp), 60.0, f"the engine's processes to end: {_processes_from(exe, tmp)}")
    wait_for(lambda: not list(tmp.glob("_MEI*")), 60.0,
             f"the unpack folders to be deleted: {sorted(p.name for p in tmp.glob('_MEI*'))}")


def _run(exe: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=TIMEOUT, env=env,
                          stdin=subprocess.DEVNULL)


def test_self_test_with_the_270m_model_gets_a_token_from_the_bundled_engine_and_leaves_nothing_running(
        exe: Path, home: Path, tmp_path: Path) -> None:
    model = model_file(GEMMA)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    started = time.monotonic()
    proc = _run(exe, env, "--self-test", "--engine-model", str(model))
    took = time.monotonic() - started
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "self-test: ok" in proc.stdout
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("engine:")), "")
    assert line.startswith("engine: ok"), proc.stdout + proc.stderr
    assert f"{tmp}/_MEI" in line, line  # the llama-server unpacked from the executable ran, not another one
    pid = int(line.split("llama-server pid ")[1].split()[0].rstrip(",;)"))
    assert pid_gone(pid)
    _assert_nothing_left(exe, tmp)
    print(f"self-test with the engine: {took:.1f} s")


def test_self_test_without_a_model_says_the_engine_check_was_skipped_and_why(exe: Path, home: Path) -> None:
    proc = _run(exe, dict(os.environ), "--self-test")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("engine:")), "")
    assert line.startswith("engine: skipped (") and "--engine-model" in line, proc.stdout


def test_the_executable_without_any_python_around_it_runs_a_thread_on_the_local_model_and_local_stop_ends_it(
        exe: Path, tmp_path: Path) -> None:
    model = model_file(QWEN)
    data, tmp, user = tmp_path / "data", tmp_path / "tmp", tmp_path / "user"
    for folder in (data, tmp, user):
        folder.mkdir()
    save(DataRoot(data), EngineSettings(context_size=2048, threads=THREADS, idle_minutes=10))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(user), "LLM_SPACE_HOME": str(data), "TMPDIR": str(tmp)}
    try:
        added = _run(exe, env, "local", "add", str(model), "--name", "qwen")
        assert added.returncode == 0, added.stdout + added.stderr
        assert "Added qwen" in added.stdout
        made = _run(exe, env, "threads", "new", "--name", "hello")
        assert made.returncode == 0, made.stdout + made.stderr
        thread_file = data / "workspace" / "hello.json"
        thread = json.loads(thread_file.read_text())
        thread["model"] = {"provider": "local", "id": "qwen", "params": {"maxTokens": 24, "temperature": 0}}
        thread["context"]["messages"][0]["content"] = [{"type": "text", "text": "Say hello in one short sentence."}]
        thread_file.write_text(json.dumps(thread, indent=2))

        ran = _run(exe, env, "run", "hello.json", "--provider", "local", "--model", "qwen", "--max-turns", "1")
        print(ran.stdout[-2000:], ran.stderr[-2000:])
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert ran.stdout.strip(), ran.stderr
        record = json.loads((data / "run" / "local-engine.json").read_text())
        assert record["binary"].startswith(f"{tmp}/_MEI"), record["binary"]  # the bundled llama-server
        assert not pid_gone(int(record["pid"]))  # it outlives the command that started it

        stopped = _run(exe, env, "local", "stop")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert pid_gone(int(record["pid"]))
        _assert_nothing_left(exe, tmp)
    finally:
        _run(exe, env, "local", "stop")
