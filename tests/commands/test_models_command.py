"""`llmspace models` and `llmspace ping` against a loopback server, through the command line's
`main` in the test's process (tests/support/cli.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.cli import cli_in_process
from tests.support.llm_server import LoopbackLLM, configure_provider

ROOT = Path(__file__).resolve().parents[2]


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"LLM_SPACE_HOME": str(home), "LLM_SPACE_NO_KEYRING": "1", "OPENAI_API_KEY": None}
    return cli_in_process(list(args), env=env, cwd=ROOT)


def test_models_lists_providers_models_and_whether_each_answers(home: Path):
    with LoopbackLLM(models=["served-a", "served-b"]) as srv, LoopbackLLM(models=["qwen3"]) as local:
        configure_provider(home, srv, provider_id="loop", model_id="served-a")
        settings = json.loads((home / "settings" / "models.json").read_text())
        settings["providers"].append({"id": "ollama", "builtin": True, "baseUrl": local.base_url})
        (home / "settings" / "models.json").write_text(json.dumps(settings))
        out = cli(home, "models", "--refresh", "--json")
        assert out.returncode == 0, out.stderr
        by_id = {p["id"]: p for p in json.loads(out.stdout)}
        assert by_id["openai"]["status"] == "no key (set OPENAI_API_KEY)"
        assert by_id["ollama"]["status"] == "reachable" and [m["id"] for m in by_id["ollama"]["models"]] == ["qwen3"]
        assert by_id["loop"]["status"] == "reachable"
        models = {m["id"]: m for m in by_id["loop"]["models"]}
        assert models["served-a"]["default"] and models["served-b"].get("listedOnly")
        text = cli(home, "models")
        assert text.returncode == 0 and "loop/served-a  [default]" in text.stdout and "vllm" in text.stdout


def test_ping_sends_the_connection_test_and_prints_one_line(home: Path):
    with LoopbackLLM() as srv:
        configure_provider(home, srv, api="openai-responses")
        out = cli(home, "ping", "loop/loopback-model")
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("ok: loop/loopback-model answered 'ok'") and out.stdout.count("\n") == 1
        body = srv.requests[-1].body_json
        assert body["instructions"] == "You are a connection tester."
        assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": 'Reply with "ok".'}]}]


def test_ping_failure_exits_non_zero_with_the_providers_message_and_no_key(home: Path):
    with LoopbackLLM() as srv:
        configure_provider(home, srv, api="anthropic-messages", api_key="sk-ant-very-secret-key-123456")
        srv.push_raw(status=403, body=b'{"type":"error","error":{"type":"permission_error","message":"key sk-ant-very-secret-key-123456 revoked"}}')
        out = cli(home, "ping", "loop/loopback-model")
        assert out.returncode == 1
        assert "HTTP 403" in out.stderr and "revoked" in out.stderr
        assert "sk-ant-very-secret-key-123456" not in out.stderr + out.stdout
    bad = cli(home, "ping", "no-slash")
    assert bad.returncode == 1 and "PROVIDER/MODEL" in bad.stderr


def test_ping_of_a_server_that_only_sends_keep_alives_ends_at_the_timeout(home: Path):
    from tests.support.trickle import Trickle

    class At:
        base_url = ""

    with Trickle(every=0.5) as trickle:
        At.base_url = trickle.base_url("keepalive")
        configure_provider(home, At, provider_id="loop")  # type: ignore[arg-type]
        out = cli(home, "ping", "loop/loopback-model", "--timeout", "2")
    assert out.returncode == 1, out.stdout
    assert "loop: no output for 2 s (progressTimeout)" in out.stderr
