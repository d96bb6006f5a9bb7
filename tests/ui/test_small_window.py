"""The window at its minimum size (800×500): every section of the editor's settings column
can be reached (it scrolls, by the wheel too, and a section that gets the keyboard focus is
scrolled into view), names in the Tools and Variables rows wrap between names only, the
workspace sidebar keeps its New and Refresh buttons, a message card's actions stay on one row,
and with History open the runs list shows enough rows to pick two, with whole summaries and
times (the settings column folds while it is open)."""

from __future__ import annotations

import tkinter.font as tkfont

import pytest

from .conftest import pump_until
from .test_usability import fully_inside

SAMPLE = "general-agent.json"  # a model row, many tools, several variables and a long prompt


def resize(window, geometry: str) -> None:
    window.root.geometry(geometry)
    window.root.update()
    window.root.update()


@pytest.fixture
def small(window):
    ed = window.open_thread(SAMPLE)
    pump_until(window.root, ed.winfo_ismapped, timeout=10)
    resize(window, "800x500")
    yield ed
    resize(window, "1280x800")


def scroll_into_view(widget) -> None:
    """What a user does to reach `widget`: scroll its column until it shows (when it scrolls)."""
    w = widget
    while w is not None:
        see = getattr(w, "see", None)
        if callable(see) and getattr(w, "scrolls_children", False):
            see(widget)
            break
        w = w.master
    widget.update()


def visible_in(widget, area) -> bool:
    """Mapped, not squeezed below its requested height, and inside `area` on screen."""
    if not widget.winfo_viewable():
        return False
    top = widget.winfo_rooty() - area.winfo_rooty()
    left = widget.winfo_rootx() - area.winfo_rootx()
    return (top >= 0 and left >= 0 and top + widget.winfo_height() <= area.winfo_height()
            and left + widget.winfo_width() <= area.winfo_width())


def descendants(widget) -> list:
    found, stack = [], [widget]
    while stack:
        w = stack.pop()
        found.append(w)
        stack.extend(w.winfo_children())
    return found


def heading(ed, text: str):
    return next(w for w in descendants(ed.settings) if w.winfo_class() == "TLabel" and str(w.cget("text")) == text)


def sections(ed) -> dict[str, object]:
    return {"model": ed.settings.model_btn, "parameters": ed.settings.params_btn, "tools": ed.settings.tools_lbl, "edit tools": ed.settings.tools_btn,
            "variables": ed.settings.vars_lbl, "edit variables": ed.settings.vars_btn, "system prompt heading": heading(ed, "System prompt"),
            "system prompt": ed.settings.prompt}


def test_at_800x500_every_editor_section_can_be_scrolled_into_view_and_is_then_whole(small, window):
    ed = small
    area = ed.settings
    line = tkfont.nametofont("TkTextFont", root=ed).metrics("linespace")
    for name, widget in sections(ed).items():
        scroll_into_view(widget)
        assert visible_in(widget, area), name
        assert widget.winfo_height() >= widget.winfo_reqheight() - 1 or widget is ed.settings.prompt, name
    # the system prompt shows several lines to type in, not a sliver under its heading
    assert ed.settings.prompt.winfo_height() >= 5 * line
    assert fully_inside(ed.header.run_btn, window.root)


def test_at_800x500_the_wheel_scrolls_the_settings_column_to_its_end(small, window):
    ed = small
    column = getattr(ed, "settings", None)
    assert column is not None and column.scrolls_children, "the settings column does not scroll"
    assert column.yview() != (0.0, 1.0)  # at this size it does not fit (the column overflows)
    for _ in range(40):
        if column.yview()[1] >= 1.0:
            break
        ed.settings.tools_lbl.event_generate("<Button-5>", x=2, y=2)  # the wheel over a label of the column
        window.root.update()
    assert column.yview()[0] > 0 and column.yview()[1] >= 1.0
    assert visible_in(ed.settings.hints, ed.settings) and visible_in(ed.settings.prompt, ed.settings)
    for _ in range(40):
        if column.yview()[0] <= 0.0:
            break
        ed.settings.prompt.event_generate("<Button-4>", x=2, y=2)  # over the prompt, which has nothing to scroll
        window.root.update()
    assert column.yview()[0] == 0.0 and visible_in(ed.settings.model_btn, ed.settings)


def test_a_section_that_gets_the_keyboard_focus_is_scrolled_into_view(small, window):
    ed = small
    ed.settings.see(ed.settings.model_btn)
    window.root.update()
    ed.settings.prompt.focus_force()
    pump_until(window.root, lambda: visible_in(ed.settings.prompt, ed.settings), timeout=5)
    ed.settings.model_btn.focus_force()
    pump_until(window.root, lambda: visible_in(ed.settings.model_btn, ed.settings), timeout=5)


def test_at_1280x800_the_system_prompt_fills_the_column_without_a_scrollbar(window):
    ed = window.open_thread(SAMPLE)
    pump_until(window.root, ed.winfo_ismapped, timeout=10)
    resize(window, "1280x800")
    pump_until(window.root, lambda: ed.settings.prompt.winfo_height() > 300, timeout=5)
    assert tuple(ed.settings.yview()) == (0.0, 1.0)
    bottom = ed.settings.prompt.winfo_rooty() + ed.settings.prompt.winfo_height()
    column_bottom = ed.settings.winfo_rooty() + ed.settings.winfo_height()
    assert column_bottom - bottom < 80  # only the hints line and padding below it


def whole_names(label, names: list[str]) -> None:
    """The label's lines break between names only: Tk's own wrapping (which cuts a word wider
    than its wraplength) is off and every line is a run of whole names that fits the label."""
    assert int(str(label.cget("wraplength")) or 0) == 0
    text = str(label.cget("text"))
    assert [w.rstrip(",") for w in text.split()] == names
    font = tkfont.nametofont(str(label.cget("font")) or "TkDefaultFont", root=label)
    for line in text.split("\n"):
        assert font.measure(line) <= label.winfo_width(), line


@pytest.mark.parametrize(("geometry", "history"), [("800x500", False), ("1280x800", True)])
def test_tool_and_variable_names_wrap_between_names_never_inside_one(window, geometry, history):
    from llmspace.presenters import catalog

    ed = window.open_thread(SAMPLE)
    pump_until(window.root, ed.winfo_ismapped, timeout=10)
    try:
        resize(window, geometry)
        if history:
            ed.toggle_history()  # the narrowest settings column at this size
            window.root.update()
        names = list(ed.p.typed_variables()) + list(ed.p.custom_variables())
        tools = [catalog.tool_label(t) for t in ed.p.tools]
        assert len(names) >= 3 and len(tools) >= 3
        pump_until(window.root, lambda: "\n" in str(ed.settings.vars_lbl.cget("text")) or geometry != "800x500", timeout=5)
        whole_names(ed.settings.vars_lbl, names)
        whole_names(ed.settings.tools_lbl, [t for tool in tools for t in tool.split()])
    finally:
        if ed.history_panel is not None:
            ed.toggle_history()
        resize(window, "1280x800")


def test_at_800x500_the_sidebar_keeps_its_new_and_refresh_buttons_whole(small, window):
    bar = window.tree_view.winfo_children()[0]
    buttons = [w for w in bar.winfo_children() if w.winfo_class() == "TButton"]
    assert {str(b.cget("text")) for b in buttons} == {"+", "⟳"}
    for b in buttons:
        assert fully_inside(b, bar), b.cget("text")


def test_the_focus_ring_follows_the_window_down_to_800x500_and_stays_in_the_settings_column(window):
    from llmspace.ui.focus_ring import FocusRing

    ed = window.open_thread(SAMPLE)
    pump_until(window.root, ed.winfo_ismapped, timeout=10)
    resize(window, "1280x800")
    ed.settings.prompt.focus_force()
    window.root.update()
    resize(window, "800x500")
    try:
        ed.settings.see(ed.settings.model_btn)  # the prompt partly scrolled out of the column
        window.root.update()
        canvas = ed.settings.canvas
        top, bottom = canvas.winfo_rooty(), canvas.winfo_rooty() + canvas.winfo_height()
        bars = [b for b in FocusRing.install(window.root).bars.get(str(window.root), []) if b.winfo_ismapped()]
        assert bars, "no focus ring around the system prompt"
        for bar in bars:
            assert bar.winfo_rooty() >= top - 3 and bar.winfo_rooty() + bar.winfo_height() <= bottom + 3, \
                (bar.winfo_rooty(), bar.winfo_height(), top, bottom)
        right = max(b.winfo_rootx() + b.winfo_width() for b in bars)
        assert abs(right - (ed.settings.prompt.winfo_rootx() + ed.settings.prompt.winfo_width())) <= 3  # the new width, not the old
    finally:
        window.root.focus_force()
        resize(window, "1280x800")


def _card_action_rows(ed) -> dict[str, int]:
    """Each card's role → how many rows its actions (↑ ↓ + ▶ ✕, Copy, …) take."""
    return {f"{i}:{c.role_btn.cget('text')}": len({int(w.place_info().get("y", 0)) for w in c.header.actions})
            for i, c in enumerate(ed.list.order)}


def test_at_800x500_each_message_cards_actions_stay_on_one_row(window, app):
    from .test_history_fit import long_thread

    rel = long_thread(app, 4, 30)
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    pump_until(window.root, lambda: ed.winfo_ismapped() and ed.list.order, timeout=10)
    try:
        resize(window, "800x500")
        pump_until(window.root, lambda: ed.list.order[0].header.winfo_width() < 600, timeout=10)
        rows = _card_action_rows(ed)
        assert set(rows.values()) == {1}, rows
        names = list(ed.p.typed_variables()) + list(ed.p.custom_variables())
        whole_names(ed.settings.vars_lbl, names)  # the settings column gave up room, not whole names
    finally:
        resize(window, "1280x800")


def test_at_800x500_history_shows_enough_runs_to_pick_two_with_whole_summaries_and_times(window, app):
    """Six runs and a saved evaluation: the runs list shows at least four rows, the summary and
    time columns are inside the list, and no variable name is broken in the settings column."""
    import orjson

    from llmspace.jsonio import write_bytes_atomic

    from .test_history_fit import _run, long_thread

    rel = long_thread(app, 4, 30)
    path = app.workspace.root / rel
    data = orjson.loads(path.read_bytes())
    data["runHistory"] += [_run(f"r{i}", data["runHistory"][0]["timestamp"] - i * 60_000) for i in range(4, 7)]
    data["evaluations"] = [{"id": "e1", "leftRunId": "r1", "rightRunId": "r2", "verdict": "tie",
                            "createdAt": 1, "updatedAt": 1}]
    write_bytes_atomic(path, orjson.dumps(data))
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    pump_until(window.root, lambda: ed.winfo_ismapped() and ed.list.order, timeout=10)
    try:
        resize(window, "800x500")
        ed.toggle_history()
        panel = ed.history_panel
        runs = panel.list
        pump_until(window.root, lambda: runs.winfo_height() > 1 and len(runs.get_children("")) == 6, timeout=10)
        window.root.update()
        shown = [i for i in runs.get_children("") if runs.bbox(i) and sum(runs.bbox(i)[1::2]) <= runs.winfo_height()]
        assert len(shown) >= 4, f"the runs list shows {len(shown)} row(s) in {runs.winfo_height()} px"
        font = tkfont.nametofont("TkDefaultFont", root=runs)
        summary = max(font.measure(runs.item(i, "text")) for i in runs.get_children(""))
        assert int(runs.column("#0", "width")) >= summary + 10, (runs.column("#0", "width"), summary)
        when = int(runs.column("#0", "width")) + int(runs.column("when", "width"))
        assert when <= runs.winfo_width(), f"the time ends at {when} px in a list {runs.winfo_width()} px wide"
        if ed.settings.winfo_ismapped():
            names = list(ed.p.typed_variables()) + list(ed.p.custom_variables())
            whole_names(ed.settings.vars_lbl, names)
        rows = _card_action_rows(ed)
        assert max(rows.values()) <= 2, rows
    finally:
        if ed.history_panel is not None:
            ed.toggle_history()
        resize(window, "1280x800")
    assert ed.settings.winfo_ismapped()  # back when History closes
