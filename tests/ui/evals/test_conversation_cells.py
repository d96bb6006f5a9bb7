"""Conversation cells in the app (Xvfb, real events): a finished conversation run opened in
the results grid, a cell's window showing the whole conversation (tool calls and results,
simulated ones marked), and "Open as thread" making a thread of the conversation whose
simulated text is marked literal."""

from __future__ import annotations

from llmspace.cli import main
from llmspace.core.threadio import thread_to_data
from llmspace.ui.evals.cell_window import CellWindow
from tests.evals.conversation.scripted import Scripted, setup
from tests.evals.conversation.test_example import only_folder
from tests.support.llm_server import LoopbackLLM


def test_a_conversation_cell_opens_the_whole_conversation_and_open_as_thread_makes_a_thread_of_it(home, make_window):
    with LoopbackLLM() as srv:
        srv.responder = Scripted()
        path = setup(home, srv, repeat=1)
        assert main(["eval", "run", str(path)]) == 1
    win = make_window()
    results = win.evals.open_results(only_folder(home))
    grid = results.grid_model
    assert grid.counts() == {"pass": 3, "fail": 2, "error": 0, "pending": 0}
    cell = grid.cells[("changed-mind", "loop/agent")]

    cell_win = CellWindow(results, cell, results.open_as_thread)
    win.root.update()

    text = cell_win.text.get("1.0", "end")
    assert "Conversation:" in text and "User:\nPlease refund order C3." in text
    assert "Actually, don't refund it. I changed my mind." in text and "Tool refund, simulated (fixed):" in text
    assert '✗ no-tool-called "refund" — refund was called' in text
    cell_win.btn_thread.invoke()
    win.root.update()
    thread = win.app.workspace.open("support-changed-mind.json")
    messages = thread_to_data(thread)["context"]["messages"]
    assert [m["role"] for m in messages][:3] == ["user", "assistant", "assistant"]
    assert messages[0]["literal"] is True and messages[0]["content"][0]["text"] == "Please refund order C3."
    call = messages[1]["toolCalls"][0]
    assert call["input"] == {"name": "lookup_order", "arguments": {"order_id": "C3"}}
    assert call["output"]["literal"] is True and "delivered" in call["output"]["content"][0]["text"]
    assert win.dialogs.infos == []  # the support thread reads no local file
