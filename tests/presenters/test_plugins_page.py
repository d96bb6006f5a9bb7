"""Settings › Plugins without a display (llmspace/presenters/plugins_page.py): a disabled
plugin's extensions read "disabled", not failed, and keep the descriptions their host
reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.paths import DataRoot
from llmspace.presenters.plugins_page import PluginsPagePresenter
from tests.plugins.code_plugins import ECHO_TOOL, code_plugin


@pytest.fixture
def app(home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
    code_plugin(home, tools={"echo": ECHO_TOOL})
    application = App(DataRoot(home))
    yield application
    application.close()


def test_a_disabled_plugins_extensions_read_disabled_and_keep_their_descriptions(app: App) -> None:
    app.plugin_code.ensure_loaded()
    page = PluginsPagePresenter(app)
    [group] = page.detail("kit").groups
    [ext] = group.extensions
    description = "echo_args: Echo the arguments and what the context holds."
    assert (ext.status, ext.description) == ("active", description)
    page.set_enabled("kit", False)
    [group] = page.detail("kit").groups
    [ext] = group.extensions
    assert (ext.status, ext.description) == ("disabled", description)
    assert "failed" not in group.summary and group.summary.endswith("(1, disabled)")


def test_a_plugin_mcp_server_whose_test_failed_reads_failed_with_the_error_not_active(home: Path, app: App) -> None:
    import sys

    from llmspace.presenters.mcp_page import McpPagePresenter
    from tests.plugins.builders import make_plugin

    server = {"id": "demo", "name": "Kit Demo", "transport": "stdio", "command": sys.executable,
              "args": ["-c", "raise SystemExit(3)"]}
    make_plugin(home, "mcpkit", files={"mcp.json": {"servers": [server]}})
    app.plugins.refresh()
    page = PluginsPagePresenter(app)
    [ext] = [e for g in page.detail("mcpkit").groups for e in g.extensions]
    assert ext.status == "active"
    _text, ok = McpPagePresenter(app.mcp).describe_result(app.mcp.test("plugin:mcpkit:mcp:demo"))
    assert not ok
    [group] = page.detail("mcpkit").groups
    [ext] = group.extensions
    assert ext.status == "failed" and "closed the connection" in ext.reason
    assert group.summary.endswith("(1, 1 failed)")


def test_a_settings_problem_names_the_field_by_its_title_not_its_key(home: Path, app: App) -> None:
    from tests.plugins.builders import make_plugin

    schema = {"type": "object", "required": ["region"], "properties": {
        "retries": {"type": "integer", "title": "Retries per call", "default": 2, "maximum": 5},
        "region": {"type": "string", "title": "Region"}}}
    make_plugin(home, "formkit", files={"config.schema.json": schema})
    app.plugins.refresh()
    page = PluginsPagePresenter(app)
    view = page.save_setting("formkit", "retries", "many")
    assert view.problems["retries"] == "Retries per call expects an integer, not 'many'."
    assert "'Region' is a required property" in page.form("formkit").problems[""]


def test_the_detail_shows_declared_granted_and_enforced_capabilities(home: Path, app: App,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    code_plugin(home, "kit", tools={"echo": ECHO_TOOL}, llmSpace={"capabilities": ["network"]})
    monkeypatch.setenv("LLM_SPACE_SANDBOX", "off")
    text = PluginsPagePresenter(app).detail("kit").capabilities
    assert text.splitlines()[:2] == ["declared:    network", "granted:     its declaration (a folder placed by hand)"]
    assert "LLM_SPACE_SANDBOX=off is set, so every capability is declared, not enforced here" in text


def test_a_plugin_disabled_at_start_says_where_its_code_extensions_descriptions_come_from(home: Path, app: App) -> None:
    from llmspace.plugins.package.extensions import NOT_LOADED

    PluginsPagePresenter(app).set_enabled("kit", False)
    app.close()
    later = App(DataRoot(home))  # the next start: the plugin's code never runs
    try:
        [group] = PluginsPagePresenter(later).detail("kit").groups
        [ext] = group.extensions
        assert (ext.status, ext.description, ext.shown_description) == ("disabled", "", NOT_LOADED)
    finally:
        later.close()
