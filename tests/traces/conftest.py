"""A real Arize Phoenix for the connected-project tests: the version platform-notes.md names, in
a venv of its own under `.cache/phoenix-<version>/` that `scripts/setup-test-env.sh` installs
(`make test` runs it) in the background: the first test that needs it waits for that install. Started once per session on 127.0.0.1 with the notes' offline settings
(no telemetry, no external resources, no agent assistant), SQLite in a temporary folder, and
stopped by its pid. Without that venv the tests skip and say why; with CI set they fail."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from llmspace.processes import command_line

ROOT = Path(__file__).resolve().parents[2]
PHOENIX_VERSION = "20.26.1"  # scripts/setup-test-env.sh installs the same
PHOENIX_VENV = ROOT / ".cache" / f"phoenix-{PHOENIX_VERSION}"
READY_WITHIN = 240.0  # 10-24 s measured on 2 busy cores; migrations on first start
# scripts/setup-test-env.sh installs Phoenix in the background while the suite starts (pid, log,
# `failed` in this folder); its tests wait for that install, 94 s on two idle cores.
INSTALL_STATE = ROOT / ".cache" / f"phoenix-{PHOENIX_VERSION}.install"
INSTALL_WITHIN = 900.0


@dataclass
class Phoenix:
    url: str
    python: Path  # the Phoenix venv's Python (it has the OpenTelemetry SDK and exporter)
    pid: int


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _installing() -> bool:
    """Whether the set-up's background install of Phoenix still runs (its pid file names a
    process that is neither gone nor a zombie)."""
    try:
        pid = int((INSTALL_STATE / "pid").read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return False
    return command_line(pid) is not None


def _phoenix_venv_or_skip() -> Path:
    serve = PHOENIX_VENV / "bin" / "phoenix"
    deadline = time.monotonic() + INSTALL_WITHIN
    while not (PHOENIX_VENV / ".installed").exists() and _installing() and time.monotonic() < deadline:
        time.sleep(1.0)  # another process's install: nothing of ours to wait on
    if not (PHOENIX_VENV / ".installed").exists() or not serve.exists():
        failed = INSTALL_STATE / "failed"
        why = failed.read_text(encoding="utf-8", errors="replace").strip() if failed.is_file() else ""
        reason = (f"arize-phoenix {PHOENIX_VERSION} is not installed in {PHOENIX_VENV.relative_to(ROOT)} "
                  f"(scripts/setup-test-env.sh installs it; make test runs that){': ' + why if why else ''}")
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return serve


@contextlib.contextmanager
def running_phoenix(work: Path, extra_env: dict[str, str] | None = None) -> Iterator[Phoenix]:
    """A Phoenix serving from `work` on free loopback ports (auth off unless `extra_env` turns it
    on), ready when this yields, stopped by its pid after."""
    serve = _phoenix_venv_or_skip()
    port, grpc = _free_port(), _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(grpc), "PHOENIX_TELEMETRY_ENABLED": "false",
           "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false", "PHOENIX_DISABLE_AGENT_ASSISTANT": "true"}
    for key in ("PHOENIX_ENABLE_AUTH", "PHOENIX_SECRET", "PHOENIX_ADMIN_SECRET", "PHOENIX_SQL_DATABASE_URL",
                "PHOENIX_COLLECTOR_ENDPOINT", "PHOENIX_API_KEY"):
        env.pop(key, None)
    env.update(extra_env or {})
    log = (work / "phoenix.log").open("wb")
    proc = subprocess.Popen([str(serve), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + READY_WITHIN
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"phoenix serve exited with {proc.returncode}; its log: {work / 'phoenix.log'}")
            try:
                if requests.get(f"{url}/readyz", timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"Phoenix was not ready within {READY_WITHIN:g} s; its log: {work / 'phoenix.log'}")
            time.sleep(0.5)
        yield Phoenix(url, PHOENIX_VENV / "bin" / "python", proc.pid)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
        log.close()


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    _phoenix_venv_or_skip()
    with running_phoenix(tmp_path_factory.mktemp("phoenix")) as served:
        yield served


@pytest.fixture(autouse=True)
def _secrets_in_the_data_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys the tests store go to the temporary data root's settings/secrets.json, never to
    the OS keyring of the machine running the tests (tests/test_secrets.py covers the keyring)."""
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
