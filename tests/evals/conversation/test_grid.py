"""The results grid with conversation cells (no display): journal records read live (turn
records change no cell), a cell's detail with its transcript, and the thread "Open as thread"
makes: the conversation's messages, simulated text literal, and the warning about local files
a thread would read."""

from __future__ import annotations

from llmspace.cli import main
from llmspace.core.threadio import thread_from_data, thread_to_data
from llmspace.evals.compare import read_rows
from llmspace.evals.journal import read_journal
from llmspace.evals.records import TurnRecord
from llmspace.presenters.eval_conversation import file_read_warning
from llmspace.presenters.eval_grid import EvalGrid, open_as_thread
from tests.evals.conversation.scripted import setup
from tests.evals.conversation.test_example import only_folder


def test_turn_records_change_no_grid_cell_and_a_conversation_cell_opens_as_a_thread_of_its_conversation(home, srv):
    path = setup(home, srv, repeat=1)
    assert main(["eval", "run", str(path)]) == 1
    folder = only_folder(home)
    records = read_journal(folder / "journal.jsonl").records[1:]
    live = EvalGrid.from_rows([], 1)
    assert [live.add_record(r) for r in records if isinstance(r, TurnRecord)] == [False] * sum(isinstance(r, TurnRecord) for r in records)
    thread = thread_from_data({"title": "support", "context": {"systemPrompt": '{{@include("notes.txt")}} Help.', "messages": []}})
    rows = read_rows(folder / "results.jsonl")
    finished = EvalGrid.from_rows(rows, 1)
    cell = finished.cells[("refund-broken", "loop/agent")]
    detail = cell.detail().text()
    assert "Conversation:" in detail and "Tool lookup_order, simulated (model):" in detail and "Final reply:\nDone:" in detail
    new = open_as_thread(thread, cell)
    messages = thread_to_data(new)["context"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "assistant", "user", "assistant", "assistant"]
    assert all(m.get("literal") is True for m in messages if m["role"] == "user")
    assert messages[4]["toolCalls"][0]["output"]["content"][0]["text"] == '{"refunded": true}'
    assert "support-refund-broken.json would read these local files when run: notes.txt" in (file_read_warning(new, "support-refund-broken.json") or "")
