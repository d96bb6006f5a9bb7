"""Diagnostic logs (no secret values), LLM_SPACE_DISABLE_PLUGINS and the plugins CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.cli import main
from llmspace.paths import DataRoot
from llmspace.plugins.diagnostics import LOG_MAX_CHARS, DiagnosticLog, sanitizer
from llmspace.plugins.service import PluginService

from .builders import SCHEMA, make_plugin

SECRET_SETTING = "setting-secret-value-0042"
ENV_SECRET = "env-secret-value-0099"


def _all_logs(home: Path) -> str:
    return "\n".join(p.read_text() for p in (home / "logs" / "plugins").rglob("*.log"))


def test_failure_logs_hold_no_secret_settings_or_env_values(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAM_CONNECTION", ENV_SECRET)
    schema = json.loads(json.dumps(SCHEMA))
    schema["properties"]["apiToken"]["maxLength"] = 5  # the saved token becomes invalid
    make_plugin(home, "team", files={
        "config.schema.json": schema,
        "mcp.json": {"servers": [{"id": "kb", "name": "KB", "transport": "stdio", "env": {"X": "$TEAM_CONNECTION"}},
                                 {"id": ENV_SECRET, "name": "leaky", "transport": "bogus"}]},
    })
    (home / "settings").mkdir()
    (home / "settings" / "plugins.json").write_text(json.dumps(
        {"schemaVersion": 1, "plugins": {"team": {"settings": {"apiToken": SECRET_SETTING}}}}))
    record = PluginService(DataRoot(home)).get("team")
    assert record.status == "degraded" and len(record.failed()) == 2
    logs = _all_logs(home)
    assert "error-id" in logs and "stage: settings" in logs and "stage: discovery" in logs
    assert SECRET_SETTING not in logs and ENV_SECRET not in logs and "***" in logs
    shown = json.dumps([(e.reason, d.summary) for e in record.extensions for d in record.diagnostics])
    assert SECRET_SETTING not in shown and ENV_SECRET not in shown


def test_the_log_holds_the_error_chain_sanitised_and_truncated(tmp_path: Path) -> None:
    log = DiagnosticLog(tmp_path / "logs" / "plugins")
    try:
        try:
            raise ValueError(f"inner with {SECRET_SETTING}")
        except ValueError as inner:
            raise RuntimeError("outer " + "x" * (LOG_MAX_CHARS * 2)) from inner
    except RuntimeError as exc:
        diag = log.write("@scope/name", "extension", f"boom {SECRET_SETTING}", exc=exc,
                         redactor=sanitizer([SECRET_SETTING]))
    assert diag.log_path is not None and diag.log_path.parent.name == "%40scope%2Fname"
    text = diag.log_path.read_text()
    assert "ValueError: inner with ***" in text and "RuntimeError" in text and "truncated" in text
    assert SECRET_SETTING not in text and SECRET_SETTING not in diag.summary
    assert len(text) < LOG_MAX_CHARS + 200


def test_the_same_failure_keeps_its_error_id_and_one_log_file(home: Path) -> None:
    make_plugin(home, "other", folder="mismatch")
    first = PluginService(DataRoot(home)).get("mismatch").diagnostics[0]
    second = PluginService(DataRoot(home)).refresh()[0].diagnostics[0]
    assert (first.error_id, first.log_path) == (second.error_id, second.log_path)
    assert len(list((home / "logs" / "plugins" / "mismatch").iterdir())) == 1


def test_disable_plugins_env_skips_third_party_plugins_and_says_so(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    make_plugin(home, "team", files={"tools/a.py": ""})
    monkeypatch.setenv("LLM_SPACE_DISABLE_PLUGINS", "1")
    assert main(["plugins", "list"]) == 0
    out = capsys.readouterr().out
    assert "LLM_SPACE_DISABLE_PLUGINS=1 is set" in out and "disabled" in out
    record = PluginService(DataRoot(home)).get("team")
    assert (record.status, record.enabled, record.extensions[0].status) == ("disabled", True, "disabled")
    monkeypatch.setenv("LLM_SPACE_DISABLE_PLUGINS", "0")
    assert PluginService(DataRoot(home)).get("team").status == "active"
    assert not (home / "settings" / "plugins.json").exists()


INFO_TOOL = """
class Info:
    name = "project_info"
    description = "Project facts."
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, context, args):
        return {}
"""
OPEN_COMMAND = """
class Open:
    display_name = "Open"

    def execute(self, context):
        return None
"""


def test_cli_list_info_and_lifecycle(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_plugin(home, "@example/team-tools", displayName="Team Tools", license="MIT",
                files={"tools/info.py": INFO_TOOL, "tools/broken.py": "", "commands/open.py": OPEN_COMMAND})
    (home / "plugins" / "@example" / "team-tools" / "tools" / "broken.py").unlink()
    (home / "plugins" / "@example" / "team-tools" / "tools" / "broken.py").mkdir()  # a folder: ignored
    make_plugin(home, "wrong", folder="mismatch")
    assert main(["plugins", "list"]) == 0
    out = capsys.readouterr().out
    assert "@example/team-tools  1.0.0    active  1 tool, 1 command" in out
    assert "mismatch" in out and "error" in out
    assert main(["plugins", "info", "@example/team-tools"]) == 0
    out = capsys.readouterr().out
    assert "@example/team-tools 1.0.0 — Team Tools" in out and "license:       MIT" in out
    assert "active   plugin:@example/team-tools:tool:info  (tools/info.py)" in out
    assert "compatible with LLM Space 4.9.0" in out
    assert main(["plugins", "info", "mismatch"]) == 0
    out = capsys.readouterr().out
    assert "error-id" in out and str(home / "logs" / "plugins" / "mismatch") in out
    assert main(["plugins", "disable", "@example/team-tools"]) == 0
    assert "Disabled @example/team-tools: disabled" in capsys.readouterr().out
    assert main(["plugins", "enable", "@example/team-tools"]) == 0
    assert main(["plugins", "reload", "@example/team-tools"]) == 0
    assert "Reloaded @example/team-tools: active" in capsys.readouterr().out.splitlines()[-1]
    make_plugin(home, "late")
    assert main(["plugins", "refresh"]) == 0
    assert "Found 3 plugin(s)" in capsys.readouterr().out
    assert main(["plugins", "info", "nope"]) == 1
    assert "No plugin 'nope' is installed" in capsys.readouterr().err
    assert main(["plugins", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {p["name"]: p["status"] for p in data["plugins"]} == {
        "@example/team-tools": "active", "late": "active", "mismatch": "error"}
