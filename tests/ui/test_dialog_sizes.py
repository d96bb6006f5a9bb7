"""Dialogs fit their content at their default size and scroll when smaller: every dialog the
app opens asks for no more than the size it opens at, a plugin's long settings form scrolls
(by the wheel too) down to its last group, and plugin diagnostics keep their buttons whole."""

from __future__ import annotations

import orjson

from llmspace.jsonio import write_bytes_atomic
from tests.plugins.code_plugins import BROKEN_CONSTRUCTOR, ECHO_TOOL, FOLDER_STORAGE, code_plugin

from .conftest import pump_until
from .test_small_window import descendants, scroll_into_view, visible_in
from .test_usability import fully_inside

GROUPS = 6
BIG_SCHEMA = {"type": "object", "properties": {
    f"group{g}": {"type": "object", "title": f"Group {g}", "description": "Settings of one part of the service.",
                  "properties": {f"field{g}{i}": {"type": "string", "title": f"Field {g}.{i}",
                                                  "description": "What this field is for, in a sentence."}
                                 for i in range(4)}}
    for g in range(GROUPS)}}


def settings_page(window, app, home, **plugin):
    code_plugin(home, **plugin)
    app.plugins.refresh()
    app.plugin_code.ensure_loaded()
    dialog = window.open_settings()
    page = dialog.plugins_page
    dialog.nb.select(page)
    window.root.update()
    return dialog, page


def test_a_long_plugin_settings_form_scrolls_to_its_last_group_at_the_dialogs_default_size(window, app, home):
    dialog, page = settings_page(window, app, home, tools={"echo": ECHO_TOOL}, schema=BIG_SCHEMA, displayName="Kit")
    try:
        page.tabs.select(page.settings_tab)
        window.root.update()
        form = page.settings_form
        groups = {str(w.cget("text")): w for w in descendants(form) if w.winfo_class() == "TLabelframe"}
        assert len(groups) == GROUPS
        last, first_field = groups[f"Group {GROUPS - 1}"], form.inputs
        assert not visible_in(last, dialog)  # it does not fit: the form must scroll
        label = next(w for w in descendants(groups["Group 0"]) if w.winfo_class() == "TLabel")
        for _ in range(60):
            if visible_in(last, dialog):
                break
            label.event_generate("<Button-5>", x=2, y=2)  # the wheel over the form
            window.root.update()
        assert visible_in(last, dialog), "the wheel does not scroll the form to its last group"
        assert first_field
    finally:
        dialog.destroy()


def test_plugin_diagnostics_keep_their_text_and_buttons_whole(window, app, home):
    dialog, page = settings_page(window, app, home, tools={"broken": BROKEN_CONSTRUCTOR}, displayName="Broken kit")
    try:
        for geometry in ("980x680", "800x500"):
            dialog.geometry(geometry)
            window.root.update()
            buttons = pump_until(window.root, lambda: [w for w in descendants(page.general)
                                                       if w.winfo_class() == "TButton"
                                                       and str(w.cget("text")) in ("Reveal log", "Copy path")], timeout=30)
            assert {str(b.cget("text")) for b in buttons} == {"Reveal log", "Copy path"}
            for b in buttons:
                scroll_into_view(b)
                assert fully_inside(b, b.master), (geometry, b.cget("text"))  # not squeezed ("C")
                assert visible_in(b, dialog), (geometry, b.cget("text"))
    finally:
        dialog.destroy()


# -- every dialog at its default size ---------------------------------------------------------
def _run(rid: str, ts: int) -> dict:
    return {"id": rid, "timestamp": ts, "thread": {"title": "h", "context": {"messages": [
        {"id": "u", "role": "user", "content": [{"type": "text", "text": "q"}]},
        {"id": "a" + rid, "role": "assistant", "content": [{"type": "text", "text": f"answer {rid}"}]}]}}}


def dialogs(window, app, home):
    """(name, builder) for every dialog a test can open without a model server."""
    from llmspace.ui.editor.panels import JsonEditor, ParamsPopover
    from llmspace.ui.palette import CommandPalette, PaletteItem
    from llmspace.ui.plugin_install import InstallProgress
    from llmspace.ui.welcome import ExamplesDialog

    write_bytes_atomic(app.workspace.root / "runs.json", orjson.dumps({
        "title": "runs", "runHistory": [_run("r1", 1000), _run("r2", 2000)]}))
    code_plugin(home, storages={"folder": FOLDER_STORAGE}, schema=BIG_SCHEMA, tools={"echo": ECHO_TOOL})
    app.plugins.refresh()
    app.plugin_code.ensure_loaded()
    window.tree_view.refresh()
    ed = window.open_thread("runs.json")
    pump_until(window.root, ed.winfo_ismapped, timeout=10)
    ed.toggle_history()
    window.root.update()
    panel = ed.history_panel

    def compare():
        panel.list.selection_set(("r1", "r2"))
        return panel.compare()

    def inspect():
        panel.list.selection_set("r1")
        return panel.inspect()

    def rubric():
        return compare().new_rubric()

    return [
        ("Settings", window.open_settings),
        ("Tools", ed.settings.edit_tools),
        ("Variables", ed.settings.edit_variables),
        ("Model parameters", lambda: ParamsPopover(ed, ed.p, lambda: None)),
        ("JSON editor", lambda: JsonEditor(ed, "Function tool", "{}", lambda t: None, example="{}")),
        ("Examples", lambda: ExamplesDialog(window.root, window.starter.example)),
        ("Command palette", lambda: CommandPalette(window.root, [PaletteItem("Say hi", lambda args: None)])),
        ("Install progress", lambda: InstallProgress(window.root, ["a-plugin-with-a-long-name.zip"])),
        ("Import from Storage", window.import_from_storage),
        ("Inspect run", inspect),
        ("Compare runs", compare),
        ("Rubric", rubric),
    ]


def opened(window, dialog):
    """The dialog at the size it opens at: its own default, or its requested size when it has none."""
    window.root.update()
    window.root.update()
    return dialog.winfo_width(), dialog.winfo_height()


def test_every_dialog_asks_for_no_more_than_the_size_it_opens_at(window, app, home):
    too_small = []
    for name, build in dialogs(window, app, home):
        dialog = build()
        assert dialog is not None, name
        try:
            pages = [dialog.nb.nametowidget(t) for t in dialog.nb.tabs()] if hasattr(dialog, "nb") else [None]
            for page in pages:
                if page is not None:
                    dialog.nb.select(page)
                width, height = opened(window, dialog)
                req = dialog.winfo_reqwidth(), dialog.winfo_reqheight()
                if req[0] > width + 1 or req[1] > height + 1:
                    label = name + (f" › {dialog.nb.tab(page, 'text')}" if page is not None else "")
                    too_small.append(f"{label}: asks {req[0]}x{req[1]}, opens at {width}x{height}")
        finally:
            for child in list(window.root.winfo_children()):
                if child.winfo_class() == "Toplevel" and child.winfo_exists():
                    child.destroy()
            window.root.update()
    assert not too_small, "\n".join(too_small)
