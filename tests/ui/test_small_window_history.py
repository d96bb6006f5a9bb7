"""At the minimum window size (800×500) with History open: two runs are picked for
comparison with the mouse, without scrolling the runs list, and Compare opens them; the last
reply's actions (↻ Regenerate, Copy, Edit, ↑ ↓ + ▶ ✕) stay on one row."""

from __future__ import annotations

import time

import orjson

from llmspace.jsonio import write_bytes_atomic

from .conftest import pump_until
from .test_small_window import _card_action_rows, resize


def _thread_with_runs(app, n: int = 6) -> str:
    from .test_history_fit import _run, long_thread

    rel = long_thread(app, 4, 30)
    path = app.workspace.root / rel
    data = orjson.loads(path.read_bytes())
    data["runHistory"] += [_run(f"r{i}", data["runHistory"][0]["timestamp"] - i * 60_000) for i in range(4, n + 1)]
    write_bytes_atomic(path, orjson.dumps(data))
    return rel


def pause(root, seconds: float) -> None:
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        root.update()
        time.sleep(0.01)


def click_row(tree, item, *, ctrl: bool = False) -> None:
    x, y, _w, h = tree.bbox(item)
    mod = "Control-" if ctrl else ""
    tree.event_generate(f"<{mod}ButtonPress-1>", x=x + 12, y=y + h // 2)
    tree.event_generate(f"<{mod}ButtonRelease-1>", x=x + 12, y=y + h // 2)
    tree.update()


def test_at_800x500_with_history_open_two_runs_are_picked_by_clicks_and_compared_and_the_reply_toolbar_is_one_row(
        window, app):
    rel = _thread_with_runs(app)
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    root = window.root
    pump_until(root, lambda: ed.winfo_ismapped() and ed.list.order, timeout=10)
    try:
        resize(window, "800x500")
        ed.toggle_history()
        panel = ed.history_panel
        runs = panel.list
        pump_until(root, lambda: runs.winfo_height() > 1 and len(runs.get_children("")) == 6, timeout=10)
        root.update()
        first, second = runs.get_children("")[:2]
        before = runs.yview()
        assert runs.bbox(first) and runs.bbox(second), "the first two runs are not both in view"
        click_row(runs, first)
        pause(root, 0.8)  # two clicks, not a double-click (which opens Inspect)
        click_row(runs, second, ctrl=True)
        assert set(runs.selection()) == {first, second} and runs.yview() == before  # no scrolling
        button = panel.compare_btn if hasattr(panel, "compare_btn") else None
        dialog = panel.compare()
        try:
            root.update()
            assert dialog is not None and dialog.winfo_exists()
        finally:
            dialog.destroy()
        rows = _card_action_rows(ed)
        last = f"{len(ed.list.order) - 1}:Assistant"
        card = ed.list.order[-1]
        assert rows[last] == 1, (rows, card.header.winfo_width(), [(b.cget("text"), b.winfo_reqwidth()) for b in card.header.left],
                                 [(b.cget("text"), b.winfo_reqwidth()) for b in card.header.actions])
        assert button is None or button.winfo_ismapped()
    finally:
        if ed.history_panel is not None:
            ed.toggle_history()
        resize(window, "1280x800")
