"""Settings › Skills, MCP, Models and Search in a real window, with real plugin folders in the
temporary LLM_SPACE_HOME: what the user sees on each page, and that each action changes
the settings file (skills.json, search.json) — plugin skills, servers and providers are
listed apart and cannot be removed; a plugin MCP server's Connect & Test runs off the UI
thread against a real stdio server (tests/support/mcp_servers/demo_server.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from llmspace.ui.settings_dialog import SettingsDialog
from tests.plugins.builders import make_plugin

from .conftest import pump_until

DEMO = Path(__file__).resolve().parents[1] / "support" / "mcp_servers" / "demo_server.py"
SID = "plugin:kit:mcp:demo"
PID = "plugin:kit:model-provider:cloud"


def skill(name: str, description: str = "Does things.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nBody of {name}\n"


@pytest.fixture
def kit(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A plugin with two skills, an MCP server and a model provider; HOME is a temporary folder."""
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    server = {"id": "demo", "name": "Kit Demo", "transport": "stdio", "command": sys.executable,
              "args": [str(DEMO), "stdio"]}
    provider = {"id": "cloud", "name": "Kit Cloud", "api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1",
                "models": [{"id": "kit-1", "name": "Kit One"}, {"id": "kit-2", "name": "Kit Two"}]}
    return make_plugin(home, "kit", files={"skills/alpha/SKILL.md": skill("alpha"), "skills/beta/SKILL.md": skill("beta"),
                                           "mcp.json": {"servers": [server]}, "models.json": {"providers": [provider]}})


@pytest.fixture
def team(tmp_path: Path) -> Path:
    folder = tmp_path / "team-skills"
    (folder / "drafting").mkdir(parents=True)
    (folder / "drafting" / "SKILL.md").write_text(skill("drafting", "Drafts letters."), "utf-8")
    return folder


def open_page(window: Any, app: Any, name: str) -> tuple[SettingsDialog, Any]:
    app.plugins.refresh()
    dialog = window.open_settings()
    page = getattr(dialog, f"{name}_page")
    dialog.nb.select(page)
    window.root.update()
    return dialog, page


def skills_json(home: Path) -> dict[str, Any]:
    return json.loads((home / "settings" / "skills.json").read_text("utf-8"))


def rows(tree: Any, parent: str = "") -> list[tuple[Any, ...]]:
    return [tuple(tree.item(i, "values")) for i in tree.get_children(parent)]


def skill_row(page: Any, name: str, source: str) -> str:
    return next(i for i in page.skills.get_children("") if page.skills.set(i, "name") == name
                and page.skills.set(i, "source") == source)


# -- Skills --------------------------------------------------------------------------------------
def test_the_skills_page_shows_folders_every_skill_with_its_source_and_plugin_sources_apart(window, app, home, kit, team):
    app.skills.settings.add_folder(str(team))
    dialog, page = open_page(window, app, "skills")
    assert (str(team), "1 skills") in rows(page.folders)
    assert ("~/.claude/skills", "missing") in rows(page.folders)
    assert all(str(kit) not in values[0] for values in rows(page.folders))  # the plugin's folder is not a user folder
    skills = rows(page.skills)
    assert ("☑", "drafting", "user", "on", "Drafts letters.") in skills
    assert ("☑", "alpha", "plugin:kit", "on", "Does things.") in skills
    assert [s[2] for s in skills].index("plugin:kit") > [s[2] for s in skills].index("user")
    assert rows(page.sources) == [("kit", "2", "on", str((kit / "skills").absolute()))]
    dialog.destroy()


def test_a_click_in_the_on_column_switches_one_skill_and_the_switch_turns_it_back_on(window, app, home, kit, team):
    app.skills.settings.add_folder(str(team))
    dialog, page = open_page(window, app, "skills")
    item = skill_row(page, "drafting", "user")
    page.skills.see(item)
    window.root.update()
    x, y, w, h = page.skills.bbox(item, "on")
    page.skills.event_generate("<Button-1>", x=x + w // 2, y=y + h // 2)
    window.root.update()
    entry = next(e for e in skills_json(home)["discoveryPaths"] if e["path"] == str(team))
    assert entry["hiddenSkills"] == ["drafting"]
    item = skill_row(page, "drafting", "user")
    assert page.skills.item(item, "values")[0] == "☐" and page.skills.set(item, "state") == "off"
    assert page.skills.selection() == (item,) and not page.skill_on.get()
    page.skill_switch.invoke()
    window.root.update()
    entry = next(e for e in skills_json(home)["discoveryPaths"] if e["path"] == str(team))
    assert entry["hiddenSkills"] == []
    assert page.skills.set(skill_row(page, "drafting", "user"), "on") == "☑"
    dialog.destroy()


def test_a_plugin_source_is_switched_as_a_whole_and_its_skills_show_off(window, app, home, kit):
    dialog, page = open_page(window, app, "skills")
    [item] = page.sources.get_children("")
    page.sources.selection_set(item)
    window.root.update()
    assert page.source_on.get()
    page.source_switch.invoke()
    window.root.update()
    assert set(skills_json(home)["pluginSkills"]["plugin:kit"]["hiddenSkills"]) == {"alpha", "beta"}
    assert rows(page.sources)[0][2] == "off"
    assert {page.skills.set(skill_row(page, n, "plugin:kit"), "state") for n in ("alpha", "beta")} == {"off"}
    assert "alpha" not in {s.name for s in app.skills.enabled()}
    page.source_switch.invoke()
    window.root.update()
    assert skills_json(home)["pluginSkills"]["plugin:kit"]["hiddenSkills"] == []
    dialog.destroy()


def test_add_folder_uses_the_folder_picker_reveal_opens_it_and_remove_asks_first(window, app, home, team, monkeypatch):
    revealed: list[Path] = []
    monkeypatch.setattr("llmspace.ui.skills_page.reveal_path", lambda _w, path: revealed.append(path))
    window.dialogs.choose_folder = lambda *a, **k: str(team)
    dialog, page = open_page(window, app, "skills")
    assert page.add_folder()
    assert str(team) in [e["path"] for e in skills_json(home)["discoveryPaths"]]
    item = next(i for i in page.folders.get_children("") if page.folders.set(i, "folder") == str(team))
    assert page.folders.set(item, "status") == "1 skills"
    assert "drafting" in [v[1] for v in rows(page.skills)]
    page.folders.selection_set(item)
    page.reveal_folder()
    assert revealed == [team]
    window.dialogs.answer = False
    assert not page.remove_folder()
    assert str(team) in [e["path"] for e in skills_json(home)["discoveryPaths"]]
    window.dialogs.answer = True
    page.folders.selection_set(next(i for i in page.folders.get_children("") if page.folders.set(i, "folder") == str(team)))
    assert page.remove_folder() and "No files are deleted" in window.dialogs.confirms[-1]
    assert str(team) not in [e["path"] for e in skills_json(home)["discoveryPaths"]]
    assert (team / "drafting" / "SKILL.md").exists()
    assert str(team) not in [v[0] for v in rows(page.folders)]
    dialog.destroy()


def test_skill_problems_and_conflicts_are_shown(window, app, home, kit, team):
    (team / "alpha").mkdir()
    (team / "alpha" / "SKILL.md").write_text(skill("alpha"), "utf-8")
    (team / "broken").mkdir()
    (team / "broken" / "SKILL.md").write_text("no frontmatter\n", "utf-8")
    app.skills.settings.add_folder(str(team))
    dialog, page = open_page(window, app, "skills")
    for source in ("user", "plugin:kit"):
        item = skill_row(page, "alpha", source)
        assert page.skills.set(item, "state") == "conflict"
        assert "none of them is active" in page.skills.set(item, "detail")
    shown = page.problems.cget("text")
    assert "frontmatter" in shown and "alpha" in shown
    dialog.destroy()


# -- MCP -----------------------------------------------------------------------------------------
def test_the_mcp_page_lists_plugin_servers_apart_and_tests_one_off_the_ui_thread(window, app, kit):
    dialog, page = open_page(window, app, "mcp")
    assert SID not in page.list.get_children("")
    assert page.plugin_list.item(SID, "text") == "Kit Demo"
    plugin, transport, target, status = page.plugin_list.item(SID, "values")
    assert (plugin, transport, status) == ("kit", "stdio", "untested") and "demo_server.py" in target
    page.plugin_list.selection_set(SID)
    assert page.test_plugin()
    assert page.msg.cget("text") == "Connecting…"  # returned at once: the connection is made in a worker
    pump_until(window.root, lambda: "Connecting" not in page.msg.cget("text"), 60)
    assert page.msg.cget("text").startswith("Ready:")
    assert page.plugin_list.set(SID, "status").startswith("ready · ")
    tools = [page.plugin_list.item(i, "text") for i in page.plugin_list.get_children(SID)]
    assert {"echo", "add", "picture"} <= set(tools)
    page.plugin_list.selection_set(page.plugin_list.get_children(SID)[0])  # a tool row tests its server
    assert page.test_plugin()
    pump_until(window.root, lambda: "Connecting" not in page.msg.cget("text"), 60)
    assert page.msg.cget("text").startswith("Ready:")
    mcp_json = app.root.settings_file("mcp")
    assert not mcp_json.exists() or SID not in mcp_json.read_text("utf-8")  # nothing of the plugin lands in mcp.json
    dialog.destroy()


def test_the_mcp_page_adds_an_http_server_as_streamable_http(window, app):
    dialog, page = open_page(window, app, "mcp")
    page.name.set("remote")
    page.transport.set("http")
    page.target.set("http://127.0.0.1:9/mcp")
    assert page.add()
    [sid] = page.list.get_children("")
    assert page.list.set(sid, "transport") == "streamableHttp"
    [saved] = json.loads(app.root.settings_file("mcp").read_text("utf-8"))["servers"]
    assert (saved["name"], saved["transport"], saved["url"]) == ("remote", "streamableHttp", "http://127.0.0.1:9/mcp")
    assert rows(page.plugin_list) == [("", "", "No active plugin brings an MCP server.", "")]
    dialog.destroy()


# -- Models --------------------------------------------------------------------------------------
def test_the_models_page_lists_plugin_providers_apart_with_their_models(window, app, kit):
    dialog, page = open_page(window, app, "models")
    assert not page.list.exists(PID)
    assert page.plugin_list.item(PID, "text") == "Kit Cloud"
    assert page.plugin_list.item(PID, "values") == ("kit", "openai-completions", "active", "http://127.0.0.1:9/v1")
    models = [page.plugin_list.item(i, "text") for i in page.plugin_list.get_children(PID)]
    assert models == ["Kit One (kit-1)", "Kit Two (kit-2)"]
    app.plugins.disable("kit")
    page.refresh()
    assert not page.plugin_list.exists(PID)
    dialog.destroy()


# -- Search --------------------------------------------------------------------------------------
def test_the_search_form_checks_fields_and_saves_them_keeping_unknown_keys(window, app, home):
    path = app.root.settings_file("search")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"provider": "firecrawl", "team": {"keep": True}}), "utf-8")
    dialog, page = open_page(window, app, "search")
    button = page.save_button
    assert button.winfo_ismapped()
    assert button.winfo_rooty() + button.winfo_height() <= dialog.winfo_rooty() + dialog.winfo_height()
    assert page.inputs["provider"].get() == "Firecrawl"
    assert page.vars["tavilyApiKey"].get() == "$TAVILY_API_KEY"
    page.inputs["provider"].set("SearXNG")
    page.inputs["provider"].event_generate("<<ComboboxSelected>>")
    window.root.update()
    assert "SearXNG needs the URL" in page.errors["searxngUrl"].cget("text")
    assert page.errors["searxngUrl"].winfo_ismapped() and not page.errors["braveBaseUrl"].winfo_ismapped()
    page.vars["searxngUrl"].set("localhost:8080")
    window.root.update()
    assert "http://" in page.errors["searxngUrl"].cget("text")
    before = path.read_bytes()
    page.save_button.invoke()
    assert "Nothing was saved" in page.status.cget("text") and path.read_bytes() == before
    page.vars["searxngUrl"].set("http://127.0.0.1:8888")
    page.vars["braveApiKey"].set("literal-key")
    window.root.update()
    assert not page.errors["searxngUrl"].winfo_ismapped() and page.inputs["braveApiKey"].cget("show") == "•"
    assert page.notes["tavilyApiKey"].cget("text") in ("$TAVILY_API_KEY is set", "$TAVILY_API_KEY is not set")
    assert page.inputs["tavilyApiKey"].cget("show") == ""  # a $VARIABLE is not a secret
    page.save_button.invoke()
    assert page.status.cget("text") == "Saved."
    data = json.loads(path.read_text("utf-8"))
    assert data["provider"] == "searxng" and data["searxngUrl"] == "http://127.0.0.1:8888"
    assert data["braveApiKey"] == "literal-key" and data["team"] == {"keep": True}
    # the dialog's Save saves the form too
    page.vars["weatherBaseUrl"].set("http://127.0.0.1:7777")
    assert dialog.save()
    assert json.loads(path.read_text("utf-8"))["weatherBaseUrl"] == "http://127.0.0.1:7777"
    page.vars["weatherBaseUrl"].set("nope")
    assert not dialog.save() and "Weather base URL" in dialog.msg.cget("text")
    dialog.destroy()


def test_an_unreadable_search_file_is_reported_and_never_overwritten(window, app):
    path = app.root.settings_file("search")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{broken", "utf-8")
    dialog, page = open_page(window, app, "search")
    assert "search.json" in page.status.cget("text") and str(page.save_button.cget("state")) == "disabled"
    assert dialog.save()  # nothing to save from the form; the file is left as it is
    assert path.read_text("utf-8") == "{broken"
    path.write_text(json.dumps({"provider": "brave"}), "utf-8")
    assert page.load() and page.inputs["provider"].get() == "Brave Search"
    assert str(page.save_button.cget("state")) == "normal"
    dialog.destroy()


# -- the dialog ----------------------------------------------------------------------------------
def test_only_models_and_mcp_keep_a_raw_editor_and_it_follows_changes_made_on_the_pages(window, app):
    dialog, page = open_page(window, app, "mcp")
    tabs = [dialog.nb.tab(t, "text") for t in dialog.nb.tabs()]
    assert tabs == ["Models", "Local models", "MCP", "Skills", "Search", "Tracing", "Plugins", "General", "models.json", "mcp.json"]
    page.name.set("later")
    page.target.set(f'"{sys.executable}" -c pass')
    assert page.add()
    raw_tab = dialog.nb.tabs()[-1]
    dialog.nb.select(raw_tab)
    window.root.update()
    assert '"later"' in dialog.editors["mcp"].get("1.0", "end")
    assert dialog.save()
    assert [s["name"] for s in json.loads(app.root.settings_file("mcp").read_text("utf-8"))["servers"]] == ["later"]
    dialog.destroy()
