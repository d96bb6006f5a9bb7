"""Editor panels and other windows in a real Tk window: model picker with availability,
parameter popover, tools dialog (built-ins, custom function JSON editor), variables dialog,
settings dialog, welcome view, keyboard shortcuts and drag to move in the tree."""

from __future__ import annotations

import json
import types

import pytest

from tests.support.llm_server import LoopbackLLM, configure_provider

from .conftest import close_menu, pump_until


@pytest.fixture
def ed(window, app):
    rel = app.workspace.create_thread("", "panels")
    window.tree_view.refresh()
    return window.open_thread(rel)


def saved(app, rel):
    return json.loads(app.workspace.resolve(rel).read_text("utf-8"))


def test_the_model_picker_lists_providers_and_sets_the_model(window, app, home):
    with LoopbackLLM() as srv:
        configure_provider(home, srv)
        app.__dict__.pop("models", None)
        rel = app.workspace.create_thread("", "m")
        window.tree_view.refresh()
        ed = window.open_thread(rel)
        menu = ed.settings.pick_model()
        labels = [menu.entrycget(i, "label") for i in range(menu.index("end") + 1) if menu.type(i) == "cascade"]
        assert any("Loopback" in label for label in labels)
        close_menu(menu)
        ed.p.set_model("loop", "loopback-model")
        assert ed.settings.model_btn.cget("text") == "loop/loopback-model"


def test_the_parameter_popover_applies_enabled_parameters_only(ed, app):
    ed.p.set_model("openai", "gpt-4.1")
    pop = ed.settings.edit_params()
    on, var = pop.vars["temperature"]
    on.set(True)
    var.set(0.7)
    pop.vars["responseType"][0].set(True)
    pop.vars["responseType"][1].set("json_object")
    assert pop.apply()
    ed.flush()
    assert saved(app, ed.p.rel)["model"]["params"] == {"temperature": 0.7, "responseType": {"type": "json_object"}}
    assert "temperature 0.7" in ed.settings.params_lbl.cget("text")


def test_the_tools_dialog_adds_builtins_and_validates_custom_function_tools(ed, app):
    dlg = ed.settings.edit_tools()
    assert "read" in dlg.checks
    dlg.checks["read"][0].set(True)
    editor = dlg.edit_function(None)
    editor.text.delete("1.0", "end")
    editor.text.insert("1.0", '{"name": "bad name"}')
    assert not editor.save() and "name" in editor.msg.cget("text")
    editor.text.delete("1.0", "end")
    editor.text.insert("1.0", '{"name": "lookup", "description": "d", "parameters": {"type": "object", "properties": {}}}')
    assert editor.save()
    dlg.apply()
    assert ed.p.tool_names() == {"read", "lookup"}
    assert "lookup" in ed.settings.tools_lbl.cget("text")


def test_the_variables_dialog_saves_values_and_clears_hints(ed, app):
    ed.settings.prompt.insert("1.0", "Hi {{customer}}")
    ed.ui.root.update()
    assert "Missing: customer" in ed.settings.hints.cget("text")
    dlg = ed.settings.edit_variables()
    names = [nv.get() for nv, _ in dlg.entries]
    assert "customer" in names
    for nv, text in dlg.entries:
        if nv.get() == "customer":
            text.insert("1.0", "Acme")
    assert dlg.save()
    assert ed.settings.hints.cget("text") == ""
    ed.flush()
    assert saved(app, ed.p.rel)["context"]["variableVariants"]["variants"]["default"]["customer"] == "Acme"


def test_the_settings_dialog_refuses_invalid_json_and_saves_valid_json(window, app):
    dlg = window.open_settings()
    assert set(dlg.editors) == {"models", "mcp"}  # Search and Skills have their own pages
    dlg.editors["mcp"].delete("1.0", "end")
    dlg.editors["mcp"].insert("1.0", "{broken")
    assert not dlg.save() and "not valid JSON" in dlg.msg.cget("text")
    dlg.editors["mcp"].delete("1.0", "end")
    dlg.editors["mcp"].insert("1.0", '{"servers": [], "team": "x"}')
    assert dlg.save()
    raw = (app.root.settings / "mcp.json").read_text("utf-8")
    assert raw.endswith("\n") and json.loads(raw)["team"] == "x"
    dlg.destroy()


def test_welcome_start_from_example_and_local_server_probe(window, app):
    from llmspace.ui.welcome import example_threads

    stems = [s for s, _ in example_threads()]
    assert stems
    for rel in list(window.tree_p.all_threads()):
        app.workspace.delete(rel)
    window.tree_view.refresh()
    rel = window.starter.example(stems[0])
    assert rel and app.workspace.exists(rel) and window.tabs.active == rel
    window.tab_pages.close_all()
    window.welcome.start_probe()
    pump_until(window.root, lambda: window.welcome.local is not None)
    assert "Local" in window.welcome.detected.cget("text") or "No local" in window.welcome.detected.cget("text")


def test_keyboard_shortcuts_close_reopen_and_switch_tabs(window, app):
    for stem in ("k1", "k2"):
        app.workspace.create_thread("", stem)
    window.tree_view.refresh()
    window.open_thread("k1.json")
    window.open_thread("k2.json")
    window.root.focus_force()
    window.root.update()
    window.root.event_generate("<Control-w>")
    window.root.update()
    assert window.tabs.tabs == ["k1.json"]
    window.root.event_generate("<Control-T>")
    window.root.update()
    assert window.tabs.tabs == ["k1.json", "k2.json"]
    window.root.event_generate("<Control-Alt-Right>")
    window.root.update()
    assert window.tabs.active == "k1.json"
    window.root.event_generate("<Control-n>")
    window.root.update()
    assert app.workspace.exists("untitled.json")


def test_dragging_a_thread_onto_a_folder_moves_it(window, app):
    app.workspace.create_folder("", "dest")
    app.workspace.create_thread("", "dragme")
    window.tree_view.refresh()
    tv = window.tree_view
    window.root.update()
    x, y, _w, h = tv.tree.bbox("dragme.json")
    _fx, fy, _fw, fh = tv.tree.bbox("dest")
    ev = types.SimpleNamespace
    tv._drag_start(ev(x=x + 5, y=y + h // 2))
    tv._drag_motion(ev(x=x + 5, y=fy + fh // 2))
    tv._drag_end(ev(x=x + 5, y=fy + fh // 2))
    assert app.workspace.exists("dest/dragme.json") and not app.workspace.exists("dragme.json")


def test_the_models_page_adds_a_provider_that_the_picker_then_offers(window, app):
    dlg = window.open_settings()
    page = dlg.models_page
    for key, value in (("id", "lab"), ("name", "Lab"), ("base_url", "http://127.0.0.1:9/v1"), ("models", "tiny"), ("api_key", "k")):
        page.fields[key].set(value)
    assert page.add()
    assert page.list.exists("lab")
    dlg.destroy()
    rel = app.workspace.create_thread("", "pick")
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    menu = ed.settings.pick_model()
    labels = [menu.entrycget(i, "label") for i in range(menu.index("end") + 1) if menu.type(i) == "cascade"]
    close_menu(menu)
    assert any(label.startswith("Lab") for label in labels)


def test_the_command_palette_filters_commands_and_runs_one(window, app):
    from llmspace.ui.palette import fuzzy_match

    assert fuzzy_match("nwfl", "File: New File") and not fuzzy_match("zz", "File: New File")
    pal = window.open_palette()
    pal.query.set("new file")
    window.root.update()
    assert pal.shown[0][0] == "File: New File"
    pal.run_selected()
    window.root.update()
    assert app.workspace.exists("untitled.json")


def test_the_palette_lists_the_command_registry_so_other_sources_join_the_built_ins(window, app):
    from llmspace.registries import BuiltinCommand

    builtin = [r for r in app.registries.commands.active() if r.source == "built-in"]
    assert "builtin:command:File/New File" in {r.canonical_id for r in builtin}
    ran: list[str] = []
    app.registries.commands.register("plugin:acme:command:greet", BuiltinCommand("Acme: Greet", lambda: ran.append("hi")),
                                     source="plugin:acme")
    pal = window.open_palette()
    pal.query.set("acme greet")
    window.root.update()
    assert [label for label, _ in pal.shown] == ["Acme: Greet"]
    pal.run_selected()
    window.root.update()
    assert ran == ["hi"]
    # a second source claiming a built-in's ID makes both inactive: neither is offered
    app.registries.commands.register("builtin:command:File/New File", BuiltinCommand("File: New File", lambda: None),
                                     source="plugin:acme")
    pal = window.open_palette()
    assert "File: New File" not in [label for label, _ in pal.commands]


def test_mcp_tools_are_listed_per_server_and_added_to_the_thread(ed, app):
    import sys
    from pathlib import Path

    demo = Path(__file__).resolve().parents[1] / "support" / "mcp_servers" / "demo_server.py"
    app.mcp.add_server(name="demo", transport="stdio", command=sys.executable, args=[str(demo), "stdio"])
    dlg = ed.settings.edit_tools()
    key = next(iter(dlg.mcp_holders))
    dlg._load_mcp(key, dlg.mcp_holders[key])
    pump_until(ed.ui.root, lambda: any(n.startswith("mcp__demo__") for n in dlg.checks), 60)
    name = next(n for n in dlg.checks if n.startswith("mcp__demo__"))
    dlg.checks[name][0].set(True)
    dlg.apply()
    tool = next(t for t in ed.p.tools if t.name == name)
    assert tool.type == "mcp" and tool.serverName == "demo"


def test_the_variables_dialog_edits_typed_variables_and_refuses_bad_names(ed, app):
    dlg = ed.settings.edit_variables()
    assert "current_working_directory" in dlg.typed_fields
    dlg.typed_fields["current_working_directory"][1].set("/tmp/elsewhere")
    dlg.typed_fields["current_date"][1].set("iso-date")
    dlg.add_row("bad name", "x")
    assert not dlg.save() and "not a valid variable name" in dlg.msg.cget("text")
    dlg.entries[-1][0].set("good_name")
    assert dlg.save()
    ed.flush()
    ctx = saved(app, ed.p.rel)["context"]
    assert ctx["variables"]["current_working_directory"]["value"] == "/tmp/elsewhere"
    assert ctx["variables"]["current_date"]["format"] == "iso-date"
    assert ctx["variableVariants"]["variants"]["default"]["good_name"] == "x"


def test_new_from_examples_offers_a_list_and_creates_the_chosen_one(window, app):
    from llmspace.ui.welcome import ExamplesDialog

    dlg = window.starter.example() or next(w for w in window.root.winfo_children() if isinstance(w, ExamplesDialog))
    assert dlg.items
    stem = dlg.items[0][0]
    dlg.listbox.selection_clear(0, "end")
    dlg.listbox.selection_set(0)
    rel = dlg.create()
    assert rel and rel.startswith(stem) and window.tabs.active == rel


def test_the_mcp_page_adds_tests_disables_and_removes_a_server(window, app):
    import sys
    from pathlib import Path

    demo = Path(__file__).resolve().parents[1] / "support" / "mcp_servers" / "demo_server.py"
    dlg = window.open_settings()
    page = dlg.mcp_page
    page.name.set("demo")
    page.transport.set("stdio")
    page.target.set(f'"{sys.executable}" "{demo}" stdio')
    assert page.add()
    sid = page.list.get_children("")[0]
    page.list.selection_set(sid)
    assert page.test()
    pump_until(window.root, lambda: "Ready" in page.msg.cget("text") or "rror" in page.msg.cget("text"), 60)
    assert "Ready" in page.msg.cget("text")
    assert "ready" in page.list.set(sid, "status")
    page.list.selection_set(sid)
    assert page.enable(False) and page.list.set(sid, "status") == "disabled"
    page.list.selection_set(sid)
    assert page.remove() and page.list.get_children("") == ()
    dlg.destroy()


def test_the_skills_variable_can_be_limited_to_chosen_skills(ed, app):
    dlg = ed.settings.edit_variables()
    assert dlg.skill_boxes
    name, (_v, lb, all_var, names) = next(iter(dlg.skill_boxes.items()))
    assert dlg.save()  # untouched: nothing written for the skills variable
    assert ed.p.typed_variables()[name].includeAll is not False
    dlg = ed.settings.edit_variables()
    _, lb, all_var, names = dlg.skill_boxes[name]
    all_var.set(False)
    if names:
        lb.selection_set(0)
    assert dlg.save()
    var = ed.p.typed_variables()[name]
    assert var.includeAll is False and var.skillNames == names[:1]
