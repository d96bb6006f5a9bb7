"""A connected Phoenix project when Phoenix's auth is on: a second real Phoenix (started once for
this module, `PHOENIX_ENABLE_AUTH=true`), a system API key made through its REST API, and
`llmspace traces new --phoenix` taking the key from `PHOENIX_API_KEY` — the key goes to the secret
store and every later call sends it; a wrong or missing key is the key error and makes nothing."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from llmspace.cli import main

from . import shapes
from .conftest import Phoenix, running_phoenix

HERE = Path(__file__).resolve().parent
WINDOW = ("--from", "2025-12-31T00:00:00Z", "--to", "2026-01-02T00:00:00Z")


@dataclass
class AuthPhoenix:
    served: Phoenix
    api_key: str
    project: str
    trace_id: str


def _phoenix_secret() -> str:
    """Phoenix wants at least 32 characters with a digit and a lower-case letter."""
    return "s3" + secrets.token_hex(24)


def _send(served: Phoenix, api_key: str, project: str, trace_id: str) -> None:
    """The agent trace of shapes.otlp_spans, sent with the OpenTelemetry SDK and the API key
    (the OTLP exporter reads its headers from OTEL_EXPORTER_OTLP_TRACES_HEADERS)."""
    spans = shapes.otlp_spans(trace_id)
    spec = {"endpoint": f"{served.url}/v1/traces", "project": project, "trace_id": trace_id, "spans": [
        {"span_id": s["spanId"], "parent": s.get("parentSpanId"), "name": s["name"],
         "start_ns": int(s["startTimeUnixNano"]), "end_ns": int(s["endTimeUnixNano"]),
         "attributes": {a["key"]: next(iter(a["value"].values())) for a in s["attributes"]},
         "error": (s.get("status") or {}).get("message")} for s in spans]}
    for entry in spec["spans"]:
        entry["attributes"] = {k: int(v) if k.startswith("gen_ai.usage.") else v for k, v in entry["attributes"].items()}
    env = {**os.environ, "OTEL_EXPORTER_OTLP_TRACES_HEADERS": f"authorization=Bearer%20{api_key}"}
    subprocess.run([str(served.python), str(HERE / "phoenix_send.py")], input=json.dumps(spec), text=True,
                   check=True, timeout=180, env=env)


def _wait_for_project(served: Phoenix, api_key: str, project: str) -> None:
    """Phoenix makes the project when it has ingested the first span, a while after the OTLP call."""
    deadline = time.monotonic() + 120
    while True:
        answer = requests.get(f"{served.url}/v1/projects", headers={"Authorization": f"Bearer {api_key}"}, timeout=30)
        answer.raise_for_status()
        if any(p.get("name") == project for p in answer.json()["data"]):
            return
        assert time.monotonic() < deadline, f"Phoenix did not list project {project} within 120 s"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def phoenix_auth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthPhoenix]:
    admin = _phoenix_secret()
    env = {"PHOENIX_ENABLE_AUTH": "true", "PHOENIX_SECRET": _phoenix_secret(), "PHOENIX_ADMIN_SECRET": admin}
    with running_phoenix(tmp_path_factory.mktemp("phoenix-auth"), env) as served:
        made = requests.post(f"{served.url}/v1/system/api_keys", headers={"Authorization": f"Bearer {admin}"},
                             json={"data": {"name": "llm-space tests"}}, timeout=60)
        assert made.status_code == 201, made.text
        api_key = made.json()["data"]["key"]
        assert requests.get(f"{served.url}/v1/projects", timeout=30).status_code == 401  # auth is on
        project, trace_id = f"weather-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
        _send(served, api_key, project, trace_id)
        _wait_for_project(served, api_key, project)
        yield AuthPhoenix(served, api_key, project, trace_id)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["traces", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _files_holding(root: Path, text: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def test_with_auth_on_the_api_key_from_phoenix_api_key_connects_searches_and_syncs_and_stays_out_of_traces(
        phoenix_auth: AuthPhoenix, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PHOENIX_API_KEY", phoenix_auth.api_key)
    code, out, err = _run(capsys, "new", "prod", "--phoenix", phoenix_auth.served.url,
                          "--phoenix-project", phoenix_auth.project)
    assert code == 0 and out.strip().startswith("proj_"), err
    assert f"connected to Phoenix project {phoenix_auth.project}; keys kept in settings/secrets.json" in err
    monkeypatch.delenv("PHOENIX_API_KEY")  # from now on the key comes from the secret store

    deadline = time.monotonic() + 120
    while True:
        code, out, err = _run(capsys, "search", "prod", *WINDOW)
        if phoenix_auth.trace_id in out or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert code == 0 and out.split("  ")[0] == phoenix_auth.trace_id, err
    assert out.strip().endswith("invoke_agent Weather agent")
    code, out, err = _run(capsys, "sync", "prod", phoenix_auth.trace_id)
    assert code == 0 and out.startswith(f"synced {phoenix_auth.trace_id} -> ") and "(new)" in out, err

    assert _files_holding(home / "traces", phoenix_auth.api_key) == []
    assert _files_holding(home, phoenix_auth.api_key) == [home / "settings" / "secrets.json"]
    assert (home / "settings" / "secrets.json").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("key", ["wrong-key-0123456789abcdef", ""])
def test_with_auth_on_a_wrong_or_missing_api_key_is_the_key_error_and_nothing_is_made(
        phoenix_auth: AuthPhoenix, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        key: str) -> None:
    if key:
        monkeypatch.setenv("PHOENIX_API_KEY", key)
    else:
        monkeypatch.delenv("PHOENIX_API_KEY", raising=False)
    code, _, err = _run(capsys, "new", "prod", "--phoenix", phoenix_auth.served.url,
                        "--phoenix-project", phoenix_auth.project)
    if key:
        assert code == 1 and "Phoenix at http://127.0.0.1" in err and "rejected the key (HTTP 401)" in err
        assert key not in err
    else:
        assert code == 1 and "Phoenix at http://127.0.0.1" in err and "needs an API key" in err and "PHOENIX_API_KEY" in err
    assert _run(capsys, "projects")[1].startswith("No trace projects yet")
