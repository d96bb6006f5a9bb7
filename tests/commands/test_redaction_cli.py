"""`llmspace run` as a real subprocess: a provider error that echoes the configured key and
headers is printed without them, and neither the log nor the trace holds them."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from llmspace.core.threadio import parse_thread, serialize_thread, thread_from_data
from tests.support.llm_server import LoopbackLLM, configure_provider

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def srv():
    with LoopbackLLM() as server:
        yield server


def test_run_prints_a_mid_stream_error_without_the_configured_secrets(home, srv):
    u = uuid.uuid4().hex
    key, cookie, secret = f"gw-{u[:20]}", f"sess{u[8:28]}", f"xs-{u[4:20]}"
    path = configure_provider(home, srv, api_key=key)
    data = json.loads(path.read_text("utf-8"))
    data["providers"][0]["headers"] = {"Cookie": f"session={cookie}", "X-Api-Secret": secret}
    path.write_text(json.dumps(data), "utf-8")
    err = json.dumps({"message": f"denied: key={key} Cookie: session={cookie} X-Api-Secret: {secret}"})
    srv.push_raw(body=[b'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n',
                       f'data: {{"error": {err}}}\n\n'.encode()], content_type="text/event-stream")
    mine = f"is {cookie} my cookie?"
    thread_path = home / "workspace" / "t.json"
    thread_path.parent.mkdir(parents=True, exist_ok=True)
    thread_path.write_bytes(serialize_thread(thread_from_data(
        {"title": "t", "context": {"messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": mine}]}]}})))

    env = {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "llmspace", "run", "t.json"], cwd=ROOT, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)

    assert proc.returncode == 1 and "denied" in proc.stderr, proc.stderr
    written = [proc.stdout, proc.stderr, *(p.read_text("utf-8") for p in (home / "traces" / "calls").glob("*.json")),
               *(p.read_text("utf-8") for p in (home / "logs").glob("*.log*"))]
    for text in written:
        assert key not in text and cookie not in text and secret not in text, text
    assert parse_thread(thread_path.read_bytes()).messages[0].text() == mine


def _written(home: Path) -> list[tuple[Path, str]]:
    """Every file the app wrote under the data root, except the user's own settings."""
    return [(p, p.read_text("utf-8", "replace")) for p in home.rglob("*")
            if p.is_file() and p.parent.name != "settings"]


def test_run_and_models_show_a_base_url_with_its_password_and_token_masked(home, srv):
    u = uuid.uuid4().hex
    password, token = f"pw-{u[:12]}", f"tk-{u[12:24]}"
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = configure_provider(home, srv, api_key=None)
    data = json.loads(path.read_text("utf-8"))
    data["providers"][0].update(baseUrl=f"http://alice:{password}@127.0.0.1:{port}/v1?token={token}", retryDeadline=1)
    path.write_text(json.dumps(data), "utf-8")
    thread_path = home / "workspace" / "t.json"
    thread_path.parent.mkdir(parents=True, exist_ok=True)
    thread_path.write_bytes(serialize_thread(thread_from_data(
        {"title": "t", "context": {"messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}]}]}})))
    env = {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "llmspace", *args], cwd=ROOT, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)

    run, models = cli("run", "t.json"), cli("models")

    assert run.returncode == 1 and f"could not reach http://alice:***@127.0.0.1:{port}/v1?token=***" in run.stderr, run.stderr
    assert f"http://alice:***@127.0.0.1:{port}/v1?token=***" in models.stdout, models.stdout
    for where, text in [("run", run.stdout + run.stderr), ("models", models.stdout + models.stderr), *_written(home)]:
        assert password not in text and token not in text, f"{where}: {text}"
    assert password in path.read_text("utf-8")  # the user's settings keep the real value
