"""Views follow the workspace and the registries through their change events, never a
snapshot taken when the view was built (issue 22, item 4)."""

from __future__ import annotations

from .conftest import open_tabs, pump_until


def test_the_tree_shows_a_thread_renamed_through_the_tabs_as_a_plugin_command_renames_it(window, app):
    open_tabs(window, app, "plan")
    window.tab_pages.rename_entry("plan.json", "[Draft] plan")  # what a staged plugin write with a new title does
    pump_until(window.root, lambda: window.tree_view.tree.exists("[Draft] plan.json"), timeout=10)
    assert not window.tree_view.tree.exists("plan.json")


def test_the_tree_shows_threads_created_and_removed_by_other_parts_of_the_app(window, app):
    rel = app.workspace.create_thread("", "from-elsewhere")  # Open as thread, a fork, an import …
    pump_until(window.root, lambda: window.tree_view.tree.exists(rel), timeout=10)
    app.workspace.delete(rel)
    pump_until(window.root, lambda: not window.tree_view.tree.exists(rel), timeout=10)


def _rows(tree) -> list[str]:
    return [str(tree.item(i, "text")) + " " + " ".join(map(str, tree.item(i, "values"))) for i in tree.get_children("")]


def test_open_settings_pages_show_what_a_plugin_brings_as_soon_as_it_is_installed_and_drop_it_when_removed(
        window, app, home):
    import sys

    from tests.plugins.builders import make_plugin

    dialog = window.open_settings()
    window.root.update()
    models, mcp, skills = dialog.models_page, dialog.mcp_page, dialog.skills_page
    assert any("No active plugin brings" in r for r in _rows(models.plugin_list))
    provider = {"id": "cloud", "name": "Kit Cloud", "api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1",
                "apiKey": "kit-token-0123456789abcdef", "models": [{"id": "kit-1", "name": "Kit One"}]}
    server = {"id": "demo", "name": "Kit Demo", "transport": "stdio", "command": sys.executable, "args": ["-V"]}
    skill = "---\nname: kit-skill\ndescription: A skill of the kit.\n---\nDo it.\n"
    make_plugin(home, "kit", files={"models.json": {"providers": [provider]}, "mcp.json": {"servers": [server]},
                                    "skills/kit-skill/SKILL.md": skill})
    app.plugins.refresh()  # what an install does once the folder is in place
    pump_until(window.root, lambda: any("Kit Cloud" in r for r in _rows(models.plugin_list))
               and any("Kit Demo" in r for r in _rows(mcp.plugin_list))
               and any("kit" in r for r in _rows(skills.sources)), timeout=20)
    app.plugins.remove("kit")
    pump_until(window.root, lambda: any("No active plugin brings" in r for r in _rows(models.plugin_list))
               and any("No active plugin brings" in r for r in _rows(mcp.plugin_list))
               and any("No active plugin brings" in r for r in _rows(skills.sources)), timeout=20)
    dialog.destroy()


def test_the_status_bar_stops_saying_installed_x_once_x_is_removed(window, app, home, tmp_path, capsys):
    from llmspace.cli import main
    from tests.plugins.builders import make_plugin

    source = make_plugin(tmp_path / "src", "kit", files={"skills/kit-skill/SKILL.md":
                                                         "---\nname: kit-skill\ndescription: A skill.\n---\nDo it.\n"})
    zip_path = tmp_path / "kit.zip"
    assert main(["plugins", "pack", str(source), "-o", str(zip_path)]) == 0
    capsys.readouterr()
    window.install_plugins([str(zip_path)])
    status = window.ui.status.msg
    pump_until(window.root, lambda: status.cget("text") == "Installed kit.", timeout=60)
    app.plugins.remove("kit")
    pump_until(window.root, lambda: "Installed kit" not in status.cget("text"), timeout=20)
