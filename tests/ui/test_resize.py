"""Resizing the window: a minimum size (about 800x500) at which every control is reachable,
panes that keep their share of the width as the window shrinks and grows (in every open tab),
message text that re-wraps instead of being cut off, and dividers with a handle to grab."""

from __future__ import annotations

import pytest

from .conftest import pump_until
from .test_usability import fully_inside

RELS = ("general-agent.json", "recorded-run.json", "custom-function-tool.json")


def cut_off(ed) -> list[str]:
    """Message texts shown with fewer lines than they wrap to (while below the height cap)."""
    from llmspace.ui.editor.cards import MAX_LINES

    bad = []
    for card in ed.list.order:
        t = card.text
        if t is None or not t.winfo_ismapped() or t.winfo_width() <= 50:
            continue
        n = t.count("1.0", "end", "displaylines")
        n = int(n[0] if isinstance(n, tuple) else n or 1)
        if int(t.cget("height")) < min(n, MAX_LINES):
            bad.append(t.get("1.0", "1.30"))
    return bad


def show(window, rel):
    ed = window.open_thread(rel)
    pump_until(window.root, lambda: ed.winfo_ismapped() and any(c.winfo_ismapped() for c in ed.list.order), timeout=10)
    window.root.update()
    return ed


@pytest.fixture
def tabs(window):
    eds = [show(window, rel) for rel in RELS]
    eds[0].toggle_history()  # one tab has its History panel open
    window.root.update()
    return eds


def resize(window, geometry: str) -> None:
    window.root.geometry(geometry)
    window.root.update()


def test_message_columns_follow_the_window_in_every_tab_after_shrink_and_restore(tabs, window):
    before = {}
    for rel in RELS:
        ed = show(window, rel)
        before[rel] = ed.list.winfo_width()
    resize(window, "800x500")
    for rel in RELS:
        ed = show(window, rel)
        assert ed.list.winfo_width() >= 240, rel  # the message column keeps a usable width
        pump_until(window.root, lambda ed=ed: not cut_off(ed), timeout=5)
    resize(window, "1280x800")
    for rel in RELS:
        ed = show(window, rel)
        pump_until(window.root, lambda ed=ed, rel=rel: abs(ed.list.winfo_width() - before[rel]) <= 4, timeout=5)
        pump_until(window.root, lambda ed=ed: not cut_off(ed), timeout=5)


def test_a_divider_dragged_by_the_user_keeps_its_share_when_the_window_changes(window):
    ed = show(window, RELS[1])
    paned = ed.paned
    width = paned.winfo_width()
    paned.sashpos(0, int(width * 0.3))
    paned.event_generate("<ButtonRelease-1>", x=int(width * 0.3), y=10)
    window.root.update()
    resize(window, "900x600")
    pump_until(window.root, lambda: abs(paned.sashpos(0) / paned.winfo_width() - 0.3) < 0.03, timeout=5)
    resize(window, "1280x800")
    pump_until(window.root, lambda: abs(paned.sashpos(0) / paned.winfo_width() - 0.3) < 0.03, timeout=5)


def test_the_window_stops_at_its_minimum_size_with_the_run_button_visible(tabs, window):
    ed = show(window, RELS[0])
    resize(window, "600x400")
    try:
        root = window.root
        assert root.winfo_width() >= 800 and root.winfo_height() >= 500
        assert fully_inside(ed.header.run_btn, root)
        assert fully_inside(ed.header.run_btn, ed.header.run_btn.master)
        assert fully_inside(ed.header.history_btn, ed.header.history_btn.master)
        assert fully_inside(ed.add_btn, root)
        assert fully_inside(window.status.msg, root)
    finally:
        resize(window, "1280x800")


def test_the_dividers_have_a_handle_wide_enough_to_grab(window):
    style = window.root.style
    assert int(style.lookup("Sash", "sashthickness")) >= 6
    assert int(style.lookup("Sash", "gripcount")) > 0


def history_buttons(panel) -> list:
    found, stack = [], [panel]
    while stack:
        w = stack.pop()
        if w.winfo_class() == "TButton":
            found.append(w)
        stack.extend(w.winfo_children())
    return found


def _run(rid: str, ts: int) -> dict:
    return {"id": rid, "timestamp": ts, "thread": {"title": "h", "context": {"messages": [
        {"id": "u", "role": "user", "content": [{"type": "text", "text": "q"}]},
        {"id": "a" + rid, "role": "assistant", "content": [{"type": "text", "text": f"answer {rid}"}]}]}}}


@pytest.mark.parametrize("geometry", ["800x500", "1280x800"])
def test_the_history_panels_buttons_wrap_to_fit_a_narrow_window(window, app, geometry):
    import orjson

    from llmspace.jsonio import write_bytes_atomic

    write_bytes_atomic(app.workspace.root / "evaluated.json", orjson.dumps({
        "title": "evaluated", "runHistory": [_run("r1", 1000), _run("r2", 2000)],
        "evaluations": [{"id": "e1", "leftRunId": "r1", "rightRunId": "r2", "verdict": "tie", "createdAt": 1, "updatedAt": 1}]}))
    window.tree_view.refresh()
    ed = window.open_thread("evaluated.json")
    pump_until(window.root, ed.winfo_ismapped, timeout=10)
    ed.toggle_history()
    try:
        resize(window, geometry)
        panel = ed.history_panel
        labels = {"Inspect", "Restore", "Remove", "Compare two", "Fork", "Open"}
        buttons = [b for b in history_buttons(panel) if str(b.cget("text")) in labels]
        assert {str(b.cget("text")) for b in buttons} == labels
        pump_until(window.root, lambda: all(fully_inside(b, panel) for b in buttons), timeout=5)
        panel.list.selection_set("r1")  # the detail of a selected run does not push the list away
        pump_until(window.root, lambda: panel.list.winfo_height() >= 60, timeout=5)  # the runs list keeps rows
        assert panel.bar.rows() >= (2 if geometry == "800x500" else 1)
    finally:
        ed.toggle_history()
        resize(window, "1280x800")


def test_without_evaluations_the_history_panel_gives_their_room_to_the_runs(window):
    ed = show(window, RELS[1])
    ed.toggle_history()
    try:
        resize(window, "800x500")
        panel = ed.history_panel
        assert "none yet" in panel.evals_title.cget("text")
        assert not panel.evals.winfo_ismapped() and not panel.ebar.winfo_ismapped()
        pump_until(window.root, lambda: panel.list.winfo_height() >= 80, timeout=5)
    finally:
        ed.toggle_history()
        resize(window, "1280x800")


def test_a_narrow_settings_column_puts_its_labels_above_the_values(window):
    ed = show(window, RELS[1])
    ed.toggle_history()
    try:
        resize(window, "800x500")
        pump_until(window.root, lambda: ed.settings.stacker.narrow, timeout=5)
        label, button = ed.settings.model_row.label, ed.settings.model_btn
        assert button.winfo_rooty() >= label.winfo_rooty() + label.winfo_height() - 2  # the button is below
        assert button.winfo_width() >= 100 and ed.settings.tools_lbl.winfo_width() >= 80
    finally:
        ed.toggle_history()
        resize(window, "1280x800")
    pump_until(window.root, lambda: not ed.settings.stacker.narrow, timeout=5)
    assert abs(ed.settings.model_btn.winfo_rooty() - ed.settings.model_row.label.winfo_rooty()) < 12  # side by side again
