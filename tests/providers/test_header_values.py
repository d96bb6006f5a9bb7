"""A header value in `settings/models.json` that HTTP cannot carry (characters outside
Latin-1) is a settings error naming the provider and the header, for `ping`, `run` and
`models --refresh` — not an internal error — and nothing is sent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from llmspace.core.threadio import serialize_thread, thread_from_data
from tests.support.cli import cli_in_process
from tests.support.llm_server import LoopbackLLM, configure_provider

ROOT = Path(__file__).resolve().parents[2]


def test_ping_run_and_models_report_a_non_latin1_header_as_a_settings_error(home: Path, srv: LoopbackLLM) -> None:
    path = configure_provider(home, srv)
    data = json.loads(path.read_text("utf-8"))
    data["providers"][0]["headers"] = {"X-Team": "Équipe Δ"}  # É is Latin-1, Δ is not
    path.write_text(json.dumps(data), "utf-8")
    (home / "workspace").mkdir(parents=True, exist_ok=True)
    (home / "workspace" / "t.json").write_bytes(serialize_thread(thread_from_data(
        {"title": "t", "context": {"messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}]}]}})))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return cli_in_process(list(args), env={"LLM_SPACE_HOME": str(home)}, cwd=ROOT)

    for proc in (cli("ping", "loop/loopback-model"), cli("run", "t.json")):
        assert proc.returncode == 1, proc.stderr
        assert "Internal error" not in proc.stderr
        assert "'loop'" in proc.stderr and "'X-Team'" in proc.stderr and "settings/models.json" in proc.stderr, proc.stderr
    models = cli("models", "--refresh")
    assert models.returncode == 0 and "Internal error" not in models.stderr, models.stderr
    assert srv.requests == []
