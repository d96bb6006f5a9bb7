"""Plugin MCP servers: interpolated from the plugin's mcp.json, registered under
`plugin:<name>:mcp:<id>`, read-only, closed and refused when the plugin is disabled, with
readiness cached in memory and marked stale by a settings change. A real stdio server
(tests/support/mcp_servers/demo_server.py) is started with this interpreter."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.cli import main
from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot

from ..builders import make_plugin

DEMO = Path(__file__).resolve().parents[2] / "support" / "mcp_servers" / "demo_server.py"
SID = "plugin:kit:mcp:demo"
TOKEN = "kit-token-0123456789abcdef"
SCHEMA = {"type": "object", "properties": {"word": {"type": "string", "default": "first"}}}


def plugin(home: Path, **extra: object) -> Path:
    server = {"id": "demo", "name": "Kit Demo", "transport": "stdio", "command": sys.executable,
              "args": [str(DEMO), "stdio"], "env": {"KIT_WORD": "${settings.word}/x", "KIT_TOKEN": "$KIT_TOKEN"}, **extra}
    return make_plugin(home, "kit", files={"mcp.json": {"servers": [server]}, "config.schema.json": SCHEMA})


@pytest.fixture
def app(home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KIT_TOKEN", TOKEN)
    application = App(DataRoot(home))
    yield application
    application.close()


def text(app: App, tool: str, args: dict[str, object]) -> str:
    out = app.mcp.call_tool(SID, tool, args, timeout=30)
    assert not out.isError, out.text()
    return out.text().splitlines()[0]


def test_a_plugin_server_is_interpolated_registered_and_called(home: Path, app: App) -> None:
    folder = plugin(home)
    before = (folder / "mcp.json").read_bytes()
    servers = {s.id: s for s in app.mcp.servers()}
    cfg = servers[SID]
    assert cfg.env == {"KIT_WORD": "first/x", "KIT_TOKEN": TOKEN} and cfg.cwd == str(folder)
    [reg] = app.registries.mcp_servers.by_source("plugin:kit")
    assert reg.canonical_id == SID and reg.files == (str(folder / "mcp.json"),)
    assert text(app, "env", {"name": "KIT_WORD"}) == "first/x"
    assert text(app, "env", {"name": "KIT_TOKEN"}) == TOKEN
    assert (folder / "mcp.json").read_bytes() == before
    assert not (home / "settings" / "mcp.json").exists()  # nothing of the plugin lands in the user's file


def test_disable_closes_the_connection_and_refuses_new_calls_until_enabled(home: Path, app: App) -> None:
    plugin(home)
    pid = int(text(app, "pid", {}))
    app.plugins.disable("kit")
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the child was ended (and reaped) by the time disable returned
    with pytest.raises(UserFacingError, match=r"unavailable \(plugin kit is disabled\)"):
        app.mcp.call_tool(SID, "pid", {})
    assert SID not in {s.id for s in app.mcp.servers()}
    app.plugins.enable("kit")
    assert int(text(app, "pid", {})) != pid


def test_readiness_is_cached_and_a_settings_change_makes_it_stale(home: Path, app: App) -> None:
    plugin(home)
    readiness = app.mcp.test(SID)
    assert readiness.status == "ready" and readiness.toolCount and readiness.toolCount > 5
    assert {s.id: s.readiness.status for s in app.mcp.servers() if s.readiness}[SID] == "ready"
    app.plugins.reload("kit")  # same configuration: the snapshot stays good
    assert {s.id: s.readiness.status for s in app.mcp.servers() if s.readiness}[SID] == "ready"
    app.plugins.update_settings("kit", [("word", "second")])
    assert {s.id: s.readiness.status for s in app.mcp.servers() if s.readiness}[SID] == "stale"
    assert text(app, "env", {"name": "KIT_WORD"}) == "second/x"
    assert app.mcp.test(SID).status == "ready"


def test_plugin_servers_cannot_be_edited_or_removed(home: Path, app: App, capsys: pytest.CaptureFixture[str]) -> None:
    plugin(home)
    with pytest.raises(UserFacingError, match="comes from plugin kit"):
        app.mcp.remove_server(SID)
    with pytest.raises(UserFacingError, match="cannot be edited or removed"):
        app.mcp.update_server("Kit Demo", timeoutSeconds=5)
    assert main(["mcp", "remove", SID]) == 1
    err = capsys.readouterr().err
    assert "plugin MCP servers cannot be edited or removed" in err and "llmspace plugins settings kit" in err
    assert main(["mcp", "list", "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["id"] == SID and listed["source"] == "plugin:kit"
    assert listed["env"]["KIT_WORD"] == "first/x" and TOKEN not in json.dumps(listed)  # secrets are masked


def test_a_server_without_a_command_after_interpolation_is_a_failed_extension(home: Path, app: App) -> None:
    plugin(home, command="$KIT_NO_SUCH_VARIABLE")
    record = app.plugins.get("kit")
    [ext] = [e for e in record.extensions if e.kind == "mcp"]
    assert ext.status == "failed" and "no \"command\"" in ext.reason
    with pytest.raises(UserFacingError, match="no \"command\""):
        app.mcp.call_tool(SID, "pid", {})
