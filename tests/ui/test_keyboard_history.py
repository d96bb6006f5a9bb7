"""Every control by keyboard, in a real window with real key events: Space presses every
button of the editor and of the evaluation windows (ttkbootstrap unbinds it); History is a
menu item, a shortcut (Ctrl+Shift+H) and a palette command; in the runs list the arrows
move, Home/End go to the ends, Space selects, Ctrl+arrows move without selecting and
Ctrl+Space adds, so Trace (T), Inspect (Return) and Compare two are reached by keys only;
Esc closes the history panel and the evaluation windows, which have a Close button."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from llmspace.jsonio import write_bytes_atomic
from tests.evals.test_compare import _folder

from .conftest import pump_until


def focused(window: Any) -> Any:
    return window.root.focus_get()


def key(window: Any, keysym: str) -> None:
    """A key pressed where the keyboard focus is, as a user would."""
    (focused(window) or window.root).event_generate(f"<{keysym}>")
    window.root.update()


def tab_to(window: Any, widget: Any, limit: int = 60) -> None:
    for _ in range(limit):
        if focused(window) is widget:
            return
        key(window, "Tab")
    raise AssertionError(f"{widget} not reached with Tab in {limit} presses")


def descendants(widget: Any) -> list[Any]:
    out = []
    for child in widget.winfo_children():
        out.append(child)
        out.extend(descendants(child))
    return out


def toplevel_of(root: Any, kind: type) -> Any:
    found = [w for w in root.winfo_children() if isinstance(w, kind)]
    return found[-1] if found else None


def press_every_button_with_space(window: Any, container: Any) -> list[str]:
    """Give each enabled, shown button of `container` the focus and press Space; the button's
    command is swapped for a recorder meanwhile (so no dialog opens). Returns the buttons'
    texts; fails naming the buttons Space did not press."""
    buttons = [w for w in descendants(container) if w.winfo_class() == "TButton" and w.winfo_viewable()
               and not w.instate(["disabled"])]
    assert buttons, f"no buttons in {container}"
    missed = []
    for b in buttons:
        pressed: list[bool] = []
        command = b.cget("command")
        b.configure(command=lambda p=pressed: p.append(True))
        try:
            b.focus_force()
            window.root.update()
            key(window, "space")
        finally:
            b.configure(command=command)
        if not pressed:
            missed.append(str(b.cget("text")))
    assert not missed, f"Space did not press: {missed}"
    return [str(b.cget("text")) for b in buttons]


def _run(rid: str, ts: int, answer: str) -> dict[str, Any]:
    return {"id": rid, "timestamp": ts, "thread": {"title": "h", "context": {"systemPrompt": f"sp {rid}", "messages": [
        {"id": "u", "role": "user", "content": [{"type": "text", "text": "q"}]},
        {"id": "a" + rid, "role": "assistant", "content": [{"type": "text", "text": answer}]}]}}}


@pytest.fixture
def ed(window, app):
    """A thread with three runs (r3 is the newest, listed first), open and focused."""
    write_bytes_atomic(app.workspace.root / "h.json", orjson.dumps({
        "title": "h", "context": {"systemPrompt": "now"},
        "runHistory": [_run("r1", 1000, "one"), _run("r2", 2000, "two"), _run("r3", 3000, "three")]}))
    window.tree_view.refresh()
    editor = window.open_thread("h.json")
    window.root.focus_force()
    editor.header.title_entry.focus_force()
    window.root.update()
    return editor


def test_history_is_a_view_menu_item_a_shortcut_and_a_palette_command(ed, window):
    menu = window.menus.view_menu
    entries = {str(menu.entrycget(i, "label")): str(menu.entrycget(i, "accelerator"))
               for i in range(int(menu.index("end")) + 1) if menu.type(i) == "command"}
    assert entries.get("Toggle Run History") == "Ctrl+Shift+H"
    assert "View: Toggle Run History" in [label for label, _cmd in window.menus.commands]
    key(window, "Control-H")  # Ctrl+Shift+H
    panel = pump_until(window.root, lambda: ed.history_panel, 10)
    pump_until(window.root, lambda: focused(window) is panel.list, 10)  # the runs take the keys
    key(window, "Control-H")
    assert ed.history_panel is None


def test_runs_are_selected_by_keys_and_trace_inspect_and_compare_open_by_keys_only(ed, window):
    from llmspace.ui.editor.compare import CompareDialog
    from llmspace.ui.editor.inspect import RunInspector
    from llmspace.ui.editor.trace_view import TraceWindow

    root = window.root
    key(window, "Control-H")
    panel = pump_until(root, lambda: ed.history_panel, 10)
    runs = panel.list
    pump_until(root, lambda: focused(window) is runs, 10)
    assert list(runs.get_children()) == ["r3", "r2", "r1"]
    ed.refresh_history()  # a refresh (as after a run) keeps the row the arrows move from
    root.update()
    key(window, "Down")
    assert runs.selection() == ("r2",) and runs.focus() == "r2"
    key(window, "End")
    assert runs.selection() == ("r1",)
    key(window, "Home")
    assert runs.selection() == ("r3",)
    key(window, "Control-Down")  # the focus row moves, the selection stays
    assert runs.focus() == "r2" and runs.selection() == ("r3",)
    key(window, "space")
    assert runs.selection() == ("r2",)
    # the trace of the selected run: T; Esc closes it
    key(window, "t")
    trace = pump_until(root, lambda: toplevel_of(root, TraceWindow), 10)
    assert trace.title().startswith("Trace · ")
    trace.focus_force()
    root.update()
    key(window, "Escape")
    assert not trace.winfo_exists()
    pump_until(root, lambda: focused(window) is runs, 10)  # the keys are back in the list
    # Return inspects the selected run
    key(window, "Return")
    inspector = pump_until(root, lambda: toplevel_of(root, RunInspector), 10)
    assert inspector.run_id == "r2"
    inspector.focus_force()
    root.update()
    key(window, "Escape")
    pump_until(root, lambda: focused(window) is runs, 10)
    # Ctrl+Down to r1, Ctrl+Space adds it: two runs, then Tab to Compare two and Space
    key(window, "Control-Down")
    key(window, "Control-space")
    assert set(runs.selection()) == {"r1", "r2"}
    key(window, "Control-space")  # again: it leaves the selection
    assert runs.selection() == ("r2",)
    key(window, "Control-space")
    compare_btn = next(b for b in panel.bar.winfo_children() if str(b.cget("text")) == "Compare two")
    tab_to(window, compare_btn)
    key(window, "space")
    dialog = pump_until(root, lambda: toplevel_of(root, CompareDialog), 20)
    assert (dialog.run_a, dialog.run_b) == ("r1", "r2")  # the earlier run is A
    dialog.focus_force()
    root.update()
    key(window, "Escape")
    pump_until(root, lambda: focused(window) is compare_btn, 10)


def test_escape_in_the_history_panel_closes_it_and_the_history_button_gets_the_focus(ed, window):
    ed.header.history_btn.focus_force()
    window.root.update()
    key(window, "space")  # the History button takes Space
    panel = pump_until(window.root, lambda: ed.history_panel, 10)
    panel.list.focus_force()
    window.root.update()
    key(window, "Escape")
    assert ed.history_panel is None and not panel.winfo_exists()
    pump_until(window.root, lambda: focused(window) is ed.header.history_btn, 10)


def test_space_presses_every_button_of_the_editor_and_its_history_panel(ed, window):
    ed.toggle_history()
    window.root.update()
    ed.history_panel.list.selection_set("r2")
    window.root.update()
    texts = press_every_button_with_space(window, ed)
    assert {"History", "Inspect", "Trace", "Compare two", "Fork"} <= set(texts)
    assert ed.settings.model_btn.cget("text") in texts


def test_the_evaluation_windows_have_a_close_button_take_space_and_close_with_escape(window, home):
    from llmspace.ui.evals.compare_window import CompareWindow
    from llmspace.ui.evals.results_window import ResultsWindow

    base = home / "evals" / "quiz"
    first = _folder(base / "20260101-100000", [("c1", "p/m", "pass", 1.0), ("c2", "p/m", "fail", 0.0)])
    _folder(base / "20260102-100000", [("c1", "p/m", "fail", 0.0), ("c2", "p/m", "pass", 1.0)])
    root = window.root
    window.dialogs.folders.append(str(first))
    results = window.open_results()
    assert isinstance(results, ResultsWindow)
    cmp = window.compare_results()
    assert isinstance(cmp, CompareWindow)
    for win in (results, cmp):
        pump_until(root, win.winfo_ismapped, 10)
        texts = press_every_button_with_space(window, win)
        assert "Close" in texts, texts
        close = next(b for b in descendants(win) if b.winfo_class() == "TButton" and str(b.cget("text")) == "Close")
        close.focus_force()
        root.update()
        key(window, "space")
        assert not win.winfo_exists()
    # the cell and New Evaluation windows had their Close / Cancel already: Space presses them all
    window.dialogs.folders.append(str(first))
    results = window.open_results()
    cell = results.open_cell(results.grid_model.cells[("c1", results.grid_model.columns[0])])
    for win in (cell, window.new_evaluation()):
        pump_until(root, win.winfo_ismapped, 10)
        press_every_button_with_space(window, win)
        win.destroy()
    for win in (results, window.compare_results()):
        pump_until(root, win.winfo_ismapped, 10)
        win.focus_force()
        root.update()
        key(window, "Escape")
        assert not win.winfo_exists()
