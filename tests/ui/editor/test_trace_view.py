"""The trace view in a real window (ui/editor/trace_view.py): a run against the loopback
server that calls a tool is opened from the run in History with T on the runs list (a real
key event); its three steps show with their timing, the arrow keys walk them, each shows what
was sent and answered and the request as folded JSON, and no configured secret shows; a
trace pruned since shows as removed (opened with the Trace button by keyboard); Escape closes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.agent.test_run_traces import run_reading_a_secret_file
from tests.support.llm_server import LoopbackLLM

from ..conftest import pump_until


@pytest.fixture
def srv():
    with LoopbackLLM() as s:
        yield s


def find(widget: Any, cls: type) -> Any:
    for child in widget.winfo_children():
        if isinstance(child, cls):
            return child
        found = find(child, cls)
        if found is not None:
            return found
    return None


def key(root: Any, widget: Any, keysym: str) -> None:
    widget.focus_force()
    root.update()
    widget.event_generate(f"<{keysym}>")
    root.update()


def open_history(window: Any, app: Any, thread: Any) -> Any:
    app.workspace.save("t.json", thread)
    window.tree_view.refresh()
    ed = window.open_thread("t.json")
    ed.toggle_history()
    panel = pump_until(window.root, lambda: ed.history_panel, 10)
    pump_until(window.root, lambda: panel.list.get_children(""), 10)
    run_id = thread.runHistory[-1].id
    panel.list.selection_set(run_id)
    panel.list.focus(run_id)
    window.root.update()
    return panel


def all_text(trace: Any) -> str:
    parts = [trace.text.get("1.0", "end"), trace.heading.cget("text"), trace.detail.cget("text")]
    for tree in (trace.steps, trace.request, trace.response):
        stack = list(tree.get_children(""))
        while stack:
            iid = stack.pop()
            parts.append(str(tree.item(iid, "text")) + " ".join(map(str, tree.item(iid, "values") or ())))
            stack.extend(tree.get_children(iid))
    return "\n".join(parts)


def test_t_on_a_run_opens_its_trace_with_each_step_timed_and_no_secret(window, app, home, srv, tmp_path):
    from llmspace.ui.editor.trace_view import TraceWindow

    thread, _result, secrets = run_reading_a_secret_file(app, home, srv, tmp_path)
    root = window.root
    panel = open_history(window, app, thread)

    key(root, panel.list, "t")
    trace = pump_until(root, lambda: find(root, TraceWindow), 10)
    pump_until(root, lambda: len(trace.steps.get_children("")) == 3, 30)

    rows = [trace.steps.item(i) for i in trace.steps.get_children("")]
    assert [r["text"] for r in rows] == ["1 · Model loop/loopback-model", "2 · Tool read",
                                         "3 · Model loop/loopback-model"]
    assert all(r["values"][2].endswith("ms") or r["values"][2].endswith(" s") for r in rows)  # timing per step
    assert rows[0]["values"][1] == "+0.00 s" and trace.summary.cget("text").startswith("3 steps · ")
    assert trace.steps.selection() == ("0",)
    assert "What is in notes.txt?" in trace.text.get("1.0", "end")
    assert [trace.request.item(i, "text") for i in trace.request.get_children("")] == ["{6 keys}"]
    key(root, trace.steps, "Down")  # the tool call
    assert trace.steps.selection() == ("1",)
    shown = trace.text.get("1.0", "end")
    assert shown.startswith("Arguments\n") and "notes.txt" in shown and "key=***" in shown
    assert trace.heading.cget("text") == "2 · Tool read" and " ms" in trace.detail.cget("text")
    seen = all_text(trace)
    key(root, trace.steps, "Down")
    seen += all_text(trace)
    assert "The file holds credentials." in seen
    for name, value in secrets.items():
        assert value not in seen, name
    key(root, trace.steps, "Escape")
    assert not trace.winfo_exists()


def test_a_pruned_trace_shows_as_removed_in_the_view(window, app, home, srv, tmp_path):
    from llmspace.ui.editor.trace_view import TraceWindow

    thread, _result, _s = run_reading_a_secret_file(app, home, srv, tmp_path)
    folder = home / "traces" / "calls"
    app.traces.max_total_bytes = sum(p.stat().st_size for p in folder.glob("*.json")) - 1
    assert len(app.traces.prune()) == 1  # the oldest: the first model call
    root = window.root
    panel = open_history(window, app, thread)
    button = next(b for b in panel.bar.winfo_children() if str(b.cget("text")) == "Trace")

    key(root, button, "Return")
    trace = pump_until(root, lambda: find(root, TraceWindow), 10)
    pump_until(root, lambda: len(trace.steps.get_children("")) == 3, 30)

    first = trace.steps.item("0")
    assert first["text"] == "1 · removed" and "removed" in first["tags"]
    assert "was removed" in trace.text.get("1.0", "end") and not trace.request.get_children("")
    assert trace.summary.cget("text").endswith("1 removed")
    assert trace.steps.item("1", "text") == "2 · Tool read"
    trace.destroy()
