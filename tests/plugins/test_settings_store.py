"""settings/plugins.json and config.schema.json forms, through the service and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.cli import main
from llmspace.paths import DataRoot
from llmspace.plugins.errors import PluginError
from llmspace.plugins.service import PluginService
from llmspace.plugins.settings_form import build_form

from .builders import SCHEMA, make_plugin

TOKEN = "tok-0123456789-SECRET"


def _service(home: Path) -> PluginService:
    return PluginService(DataRoot(home), environ={})


def _saved(home: Path) -> dict[str, object]:
    data = json.loads((home / "settings" / "plugins.json").read_text())
    assert data["schemaVersion"] == 1
    return dict(data["plugins"])


def test_settings_round_trip_with_type_conversion(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_plugin(home, "@example/team-tools", files={"config.schema.json": SCHEMA})
    code = main(["plugins", "settings", "@example/team-tools", "requestTimeout=60", "ratio=0.5", "mode=strict",
                 "tags=a, b", "notifications.enabled=no", f"apiToken={TOKEN}", "endpoint=https://x.example"])
    assert code == 0, capsys.readouterr()
    entry = _saved(home)["@example/team-tools"]
    assert entry == {"enabled": True, "settings": {
        "requestTimeout": 60, "ratio": 0.5, "mode": "strict", "tags": ["a", "b"],
        "notifications": {"enabled": False}, "apiToken": TOKEN, "endpoint": "https://x.example"}}
    view = _service(home).settings_view("@example/team-tools")
    assert view.values["notifications"] == {"enabled": False}
    assert view.problems == ()


def test_defaults_merge_with_saved_values_and_are_not_written(home: Path) -> None:
    make_plugin(home, "team", files={"config.schema.json": SCHEMA})
    service = _service(home)
    service.update_settings("team", [("mode", "strict")])
    assert _saved(home)["team"] == {"enabled": True, "settings": {"mode": "strict"}}
    values = service.settings_view("team").values
    assert values == {"endpoint": "https://api.example.com", "requestTimeout": 30, "mode": "strict",
                      "notifications": {"enabled": True}}


@pytest.mark.parametrize(("pair", "needle"), [
    ("requestTimeout=abc", "expects an integer"), ("mode=lax", "is not one of"), ("notifications.enabled=maybe", "true or false"),
    ("nope=1", "No setting 'nope'"), ("apiToken=short", "apiToken: invalid secret value"),
])
def test_invalid_values_are_refused_and_nothing_is_saved(home: Path, pair: str, needle: str) -> None:
    make_plugin(home, "team", files={"config.schema.json": SCHEMA})
    with pytest.raises(PluginError) as err:
        _service(home).update_settings("team", [(pair.split("=")[0], pair.split("=", 1)[1])])
    assert needle in str(err.value) and "'short'" not in str(err.value)  # secret values are never echoed
    assert not (home / "settings" / "plugins.json").exists()


def test_without_a_schema_values_are_json_when_they_parse_else_text(home: Path) -> None:
    make_plugin(home, "plain")
    _service(home).update_settings("plain", [("n", "42"), ("flag", "true"), ("list", "[1, 2]"), ("name", "hello world"),
                                             ("net.host", "example.com")])
    assert _saved(home)["plain"] == {"enabled": True, "settings": {
        "n": 42, "flag": True, "list": [1, 2], "name": "hello world", "net": {"host": "example.com"}}}


def test_secrets_are_masked_in_the_settings_output(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_plugin(home, "team", files={"config.schema.json": SCHEMA})
    _service(home).update_settings("team", [("apiToken", TOKEN), ("notifications.channel", "hidden-channel")])
    capsys.readouterr()
    assert main(["plugins", "settings", "team"]) == 0
    out = capsys.readouterr().out
    assert TOKEN not in out and "hidden-channel" not in out
    assert "apiToken (string, secret)" in out and "current: ********" in out
    assert "requestTimeout (integer) — Timeout" in out and "default: 30" in out
    assert 'one of: "standard", "strict"' in out


def test_disabling_keeps_settings_and_enabling_restores(home: Path) -> None:
    make_plugin(home, "team", files={"config.schema.json": SCHEMA})
    service = _service(home)
    service.update_settings("team", [("mode", "strict")])
    assert service.disable("team").status == "disabled"
    assert _saved(home)["team"] == {"enabled": False, "settings": {"mode": "strict"}}
    assert service.enable("team").status == "active"
    assert _saved(home)["team"] == {"enabled": True, "settings": {"mode": "strict"}}


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"a": {"type": "strnig"}}},
    {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"}}}},
    {"type": "array"},
    {"type": "object", "properties": {"n": {"type": "integer", "default": "ten"}}},
    [1, 2],
])
def test_an_invalid_schema_disables_the_form_and_keeps_saved_settings(home: Path, schema: object,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    make_plugin(home, "team", files={"config.schema.json": schema, "tools/a.py": ""})
    settings = home / "settings"
    settings.mkdir()
    original = b'{"schemaVersion": 1, "plugins": {"team": {"enabled": true, "settings": {"a": "kept"}}}}'
    (settings / "plugins.json").write_bytes(original)
    service = _service(home)
    record = service.get("team")
    ext = next(e for e in record.extensions if e.kind == "settings")
    assert (record.status, ext.status) == ("degraded", "failed") and "settings form disabled" in ext.reason
    assert ext.log_path is not None and ext.log_path.exists()
    with pytest.raises(PluginError, match="settings form of 'team' is disabled"):
        service.update_settings("team", [("a", "x")])
    assert main(["plugins", "settings", "team"]) == 1
    assert '"a": "kept"' in capsys.readouterr().out
    assert (settings / "plugins.json").read_bytes() == original


def test_saved_values_that_no_longer_match_fail_the_settings_extension(home: Path) -> None:
    make_plugin(home, "team", files={"config.schema.json": SCHEMA})
    (home / "settings").mkdir()
    (home / "settings" / "plugins.json").write_text(json.dumps(
        {"schemaVersion": 1, "plugins": {"team": {"settings": {"requestTimeout": "soon"}}}}))
    record = _service(home).get("team")
    ext = next(e for e in record.extensions if e.kind == "settings")
    assert ext.status == "failed" and "requestTimeout" in ext.reason and record.status == "error"


@pytest.mark.parametrize("content", [b"{broken", b"[]", b'{"schemaVersion": 2}', b'{"plugins": {"a": {"enabled": "yes"}}}'])
def test_a_corrupt_plugins_json_disables_plugins_is_kept_and_is_reported(
        home: Path, content: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    make_plugin(home, "team", files={"tools/a.py": ""})
    path = home / "settings" / "plugins.json"
    path.parent.mkdir()
    path.write_bytes(content)
    assert main(["plugins", "list"]) == 0
    out = capsys.readouterr().out
    assert "third-party plugins are disabled for this start" in out and "disabled" in out
    assert main(["plugins", "info", "team"]) == 0
    captured = capsys.readouterr()
    assert "status:        disabled" in captured.out and "plugins.json" in captured.err
    assert main(["plugins", "disable", "team"]) == 1
    assert main(["plugins", "settings", "team", "x=1"]) == 1
    assert "left unchanged" in capsys.readouterr().err
    assert path.read_bytes() == content


def test_the_form_model_describes_every_field() -> None:
    form = build_form(SCHEMA)
    fields = {f.key: f for f in form.walk()}
    assert fields["endpoint"].required and fields["endpoint"].title == "Service endpoint"
    assert fields["tags"].type == "array" and fields["tags"].item_type == "string"
    assert fields["apiToken"].secret and fields["notifications.channel"].secret
    assert fields["notifications"].children[0].key == "notifications.enabled"
    assert form.convert("ratio", "2") == 2 and form.convert("tags", '["x"]') == ["x"]
    assert form.display({"apiToken": TOKEN})["apiToken"] == "********"
    assert form.secret_values({"apiToken": TOKEN}) == [TOKEN]
