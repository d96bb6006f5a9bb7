"""The History panel at 1280×800 and across a theme switch: the runs table shows whole
columns, the message list leaves no blank gap when History opens or the theme changes, the
History button looks pressed while the panel is open, and in the dark theme the tree's
inline rename box (Ctrl+N) shows whole glyphs and a readable selection."""

from __future__ import annotations

import orjson
import pytest

from llmspace.core.history import now_ms
from llmspace.jsonio import write_bytes_atomic
from llmspace.ui import theme as themes

from .conftest import pump_until

DAY_MS = 86_400_000


def _run(rid: str, ts: int) -> dict:
    return {"id": rid, "timestamp": ts, "model": {"provider": "openai", "id": "gpt-4o-mini"},
            "usage": {"inputTokens": 1234, "outputTokens": 567},
            "thread": {"title": "h", "context": {"messages": [
                {"id": "u", "role": "user", "content": [{"type": "text", "text": "q"}]},
                {"id": "a" + rid, "role": "assistant", "content": [{"type": "text", "text": f"answer {rid}"}]}]}}}


def long_thread(app, count: int = 10, words: int = 60) -> str:
    messages = [{"id": f"m{i}", "role": "user" if i % 2 == 0 else "assistant",
                 "content": [{"type": "text", "text": f"message {i} " + "word " * words}]} for i in range(count)]
    if count == 0:  # a question, a tool call and the reply (the screenshots' thread)
        messages = [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "Tell me about Lisbon."}]},
                    {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": ""}],
                     "toolCalls": [{"id": "c1", "input": {"name": "city_facts", "arguments": {"city": "Lisbon"}}}]},
                    {"id": "a2", "role": "assistant", "content": [{"type": "text", "text": "Lisbon: hills, trams."}]}]
    write_bytes_atomic(app.workspace.root / "long.json", orjson.dumps({
        # runs of today, of three days ago and of last year: their times read "14:05", "Nov 28
        # 14:05" and "2025-12-01 14:05" whatever the hour (a test at midnight saw a date only then)
        "title": "long", "runHistory": [_run(f"r{i}", now_ms() - ago) for i, ago in
                                        enumerate((600_000, 3 * DAY_MS, 400 * DAY_MS), start=1)],
        "context": {"systemPrompt": "You are helpful.", "messages": messages}}))
    return "long.json"


@pytest.fixture(params=[(10, 60), (4, 30), (0, 0)], ids=["ten-long", "four-short", "tool-call"])
def ed(window, app, request):
    rel = long_thread(app, *request.param)
    window.tree_view.refresh()
    view = window.open_thread(rel)
    pump_until(window.root, lambda: view.winfo_ismapped() and view.list.order, timeout=10)
    window.root.update()
    yield view
    if view.winfo_exists() and view.history_panel is not None:
        view.toggle_history()


def set_theme(window, name: str) -> None:
    window.appearance.theme_var.set(name)
    window.appearance.apply_theme()
    window.root.update()


def blank_px(lst) -> int:
    """Pixels of the message area no card covers while messages are left out of it."""
    body = lst.body
    total = len(lst.p.messages)
    shown = [c for c in lst.order if c.winfo_ismapped()]
    if not shown or len(shown) >= total:
        return 0
    top = min(c.winfo_rooty() for c in shown) - body.winfo_rooty()
    bottom = body.winfo_rooty() + body.winfo_height() - max(c.winfo_rooty() + c.winfo_height() for c in shown)
    return max(0, top) + max(0, bottom)


def settle(window, lst) -> None:
    """Until the cards stop changing (their texts fit their wrapped lines)."""
    last = None
    for _ in range(200):
        window.root.update()
        now = tuple((c.winfo_rooty(), c.winfo_height()) for c in lst.order if c.winfo_exists())
        if now == last and lst._fit_job is None:
            return
        last = now


def test_opening_history_and_switching_theme_leave_no_blank_gap_in_the_messages(ed, window):
    lst = ed.list
    settle(window, lst)
    assert blank_px(lst) <= 12
    ed.toggle_history()
    settle(window, lst)
    assert blank_px(lst) <= 12, "a gap after History opened"
    try:
        for name in ("dark", "light"):
            set_theme(window, name)
            settle(window, lst)
            assert blank_px(lst) <= 12, f"a gap after switching to {name}"
    finally:
        set_theme(window, "light")


def test_the_history_button_looks_pressed_while_the_panel_is_open(ed, window):
    closed = str(ed.header.history_btn.cget("style"))
    ed.toggle_history()
    window.root.update()
    opened = str(ed.header.history_btn.cget("style"))
    style = window.root.style
    assert opened != closed
    assert style.lookup(opened, "background") != style.lookup(closed, "background")
    ed.toggle_history()
    window.root.update()
    assert str(ed.header.history_btn.cget("style")) == closed


def test_at_1280x800_the_runs_table_shows_the_reply_and_the_time_whole_and_the_settings_stack(ed, window):
    window.root.geometry("1280x800")
    ed.toggle_history()
    panel = ed.history_panel
    pump_until(window.root, lambda: panel.list.winfo_width() > 100, timeout=5)
    settle(window, ed.list)
    tree = panel.list
    # the first line of the reply and the run's time need no sideways scrolling (the other
    # figures are a scroll away and in the selected run's detail line)
    needed = int(tree.column("#0", "width")) + int(tree.column("when", "width"))
    assert needed <= tree.winfo_width(), (needed, tree.winfo_width())
    assert ed.list.winfo_width() >= 380  # the messages keep a comfortable column
    assert ed.settings.stacker.narrow  # the settings rows put labels above values: the model button gets the width
    assert ed.settings.model_btn.winfo_width() >= ed.settings.body.winfo_width() - 60


def test_in_the_dark_theme_the_inline_rename_box_shows_whole_glyphs_and_a_readable_selection(window, app):
    set_theme(window, "dark")
    try:
        window.tree_view.tree.selection_set("general-agent.json")
        entry = window.tree_view.begin_rename("general-agent.json")
        assert entry is not None
        window.root.update()
        assert entry.winfo_height() >= entry.winfo_reqheight()  # nothing of the text is cut off
        style = window.root.style
        name = str(entry.cget("style")) or "TEntry"
        fg = style.lookup(name, "selectforeground", ("focus",)) or style.lookup(name, "selectforeground")
        bg = style.lookup(name, "selectbackground", ("focus",)) or style.lookup(name, "selectbackground")
        assert themes.contrast_ratio(window.root, fg, bg) >= 4.5, (fg, bg)
        window.tree_view.cancel_rename()
    finally:
        set_theme(window, "light")
