"""Settings › MCP and Settings › Models logic without a display: servers and providers of
plugins are listed apart from the user's, read-only, naming the plugin; a plugin server's
Connect & Test reports its readiness and tool names (a real stdio server)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.presenters.mcp_page import McpPagePresenter
from llmspace.presenters.models_page import ModelsPagePresenter
from tests.plugins.builders import make_plugin

DEMO = Path(__file__).resolve().parents[1] / "support" / "mcp_servers" / "demo_server.py"
SID = "plugin:kit:mcp:demo"
PID = "plugin:kit:model-provider:cloud"
TOKEN = "kit-token-0123456789abcdef"


def kit(home: Path) -> Path:
    server = {"id": "demo", "name": "Kit Demo", "transport": "stdio", "command": sys.executable,
              "args": [str(DEMO), "stdio", f"--token={TOKEN}"], "env": {"KIT_TOKEN": TOKEN}}
    provider = {"id": "cloud", "name": "Kit Cloud", "api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1",
                "apiKey": TOKEN, "models": [{"id": "kit-1", "name": "Kit One"}, {"id": "kit-2", "name": "Kit Two"}]}
    return make_plugin(home, "kit", files={"mcp.json": {"servers": [server]}, "models.json": {"providers": [provider]}})


@pytest.fixture
def app(home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
    kit(home)
    application = App(DataRoot(home))
    application.plugins  # noqa: B018 -- attaches the plugin contributions
    yield application
    application.close()


def test_plugin_servers_are_listed_apart_read_only_and_test_lists_their_tools(app: App) -> None:
    p = McpPagePresenter(app.mcp)
    p.add("mine", "http", "http://127.0.0.1:9/mcp")
    assert [(r.name, r.transport) for r in p.rows()] == [("mine", "streamableHttp")]
    [row] = p.plugin_rows()
    assert (row.id, row.name, row.plugin, row.transport, row.status) == (SID, "Kit Demo", "kit", "stdio", "untested")
    assert TOKEN not in row.target and "demo_server.py" in row.target
    with pytest.raises(UserFacingError, match="comes from plugin kit"):
        p.remove(SID)
    with pytest.raises(UserFacingError, match="comes from plugin kit"):
        p.set_enabled(SID, False)
    readiness = p.test(SID)
    text, ok = p.describe_result(readiness)
    assert ok and text.startswith("Ready:") and "echo" in text
    [row] = p.plugin_rows()
    assert row.status.startswith("ready · ") and {"echo", "add"} <= set(row.tools)
    assert p.plugin_conflicts() == []
    app.plugins.disable("kit")
    assert p.plugin_rows() == []


def test_a_failed_test_is_reported_as_not_ready(app: App) -> None:
    p = McpPagePresenter(app.mcp)
    p.add("broken", "stdio", f'"{sys.executable}" -c "raise SystemExit(3)"')
    sid = p.rows()[0].id
    text, ok = p.describe_result(p.test(sid))
    assert not ok and not text.startswith("Ready")
    assert p.rows()[0].status.startswith("error")


def test_plugin_providers_are_listed_apart_with_their_models(app: App) -> None:
    p = ModelsPagePresenter(app.models, app.providers)
    assert PID not in {r.id for r in p.rows()}
    [row] = p.plugin_rows()
    assert (row.id, row.name, row.plugin, row.api, row.status) == (PID, "Kit Cloud", "kit", "openai-completions", "active")
    assert row.models == (("kit-1", "Kit One"), ("kit-2", "Kit Two"))
    with pytest.raises(UserFacingError):
        p.remove(PID)
    assert ModelsPagePresenter(app.models).plugin_rows() == []
    app.plugins.disable("kit")
    assert p.plugin_rows() == []


def test_a_plugin_provider_in_conflict_is_named_with_both_parties(app: App, home: Path) -> None:
    p = ModelsPagePresenter(app.models, app.providers)
    app.providers.providers.register(PID, app.providers.providers.by_source("plugin:kit")[0].value, source="plugin:other")
    assert p.plugin_rows() == []
    [message] = p.plugin_conflicts()
    assert "plugin:kit" in message and "plugin:other" in message
