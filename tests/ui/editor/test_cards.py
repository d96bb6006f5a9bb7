"""Message cards in a real window: images from a file, the ask_user_question form, the
todo_write list, collapse, role switch, reorder, insert, remove, and the title rename."""

from __future__ import annotations

import json

import orjson
import pytest

from llmspace.jsonio import write_bytes_atomic


@pytest.fixture
def ed(window, app):
    write_bytes_atomic(app.workspace.root / "cards.json", orjson.dumps({
        "title": "cards", "context": {"messages": [
            {"id": "u1", "role": "user", "content": [{"type": "text", "text": "first"}]},
            {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "answer"}], "thinking": "pondering",
             "toolCalls": [
                 {"id": "q1", "input": {"name": "ask_user_question", "arguments": {"questions": [
                     {"question": "Which colour?", "options": [{"label": "Red"}, {"label": "Blue"}]}]}}},
                 {"id": "t1", "input": {"name": "todo_write", "arguments": {"todos": [
                     {"content": "Write tests", "status": "completed"}, {"content": "Ship", "status": "pending"}]}}}]}]}}))
    window.tree_view.refresh()
    view = window.open_thread("cards.json")
    view.list.follow = False
    view.list.first = 0
    view.list.render()
    return view


def labels(widget):
    out = []
    stack = [widget]
    while stack:
        w = stack.pop()
        try:
            out.append(str(w.cget("text")))
        except Exception:
            pass
        stack.extend(w.winfo_children())
    return out


def test_assistant_cards_show_thinking_todos_and_the_question_form(ed, app):
    card = ed.list.cards["a1"]
    assert card.thinking is not None and "pondering" in card.thinking.get("1.0", "end")
    texts = labels(card)
    assert "☑ Write tests" in texts and "☐ Ship" in texts
    from llmspace.ui.editor.ask_user_form import AskUserForm

    form = next(w for w in card.winfo_children() for w in [w, *w.winfo_children()] if isinstance(w, AskUserForm))
    form.fields[0][1][1][1].set(True)  # Blue
    form.fields[0][2].set("Green too")
    form.submit()
    out = ed.p.messages[1].toolCalls[0].output.text()
    assert json.loads(out) == {"answers": {"Which colour?": ["Blue", "Green too"]}}


def test_an_image_from_a_file_goes_into_the_user_message(ed, window, tmp_path):
    from PIL import Image

    png = tmp_path / "dot.png"
    Image.new("RGB", (4, 4), (255, 0, 0)).save(png)
    window.dialogs.files = [str(png)]
    ed.list.cards["u1"].pick_image()
    content = ed.p.messages[0].content
    assert [c.type for c in content] == ["image_data", "text"] and content[0].mimeType == "image/png"
    assert any("[image] dot.png · " in t for t in labels(ed.list.cards["u1"]))  # its file name, not its MIME type


def test_collapse_switch_role_reorder_insert_and_remove(ed):
    ed.p.message_intents.toggle_collapsed("u1")
    assert ed.list.cards["u1"].text is None
    ed.p.message_intents.toggle_collapsed("u1")
    ed.p.message_intents.toggle_collapsed("a1")
    ed.list.cards["a1"].role_btn.invoke()
    assert ed.p.messages[1].role == "user"
    ed.p.undo()
    ed.p.message_intents.move_message(1, 0)
    assert [m.id for m in ed.p.messages] == ["a1", "u1"]
    ed.p.message_intents.add_message("user", before=0)
    assert len(ed.p.messages) == 3 and ed.list.order
    ed.p.message_intents.remove_message(0)
    assert [m.id for m in ed.p.messages] == ["a1", "u1"]


def test_editing_the_title_renames_the_file_and_the_tab(ed, window, app):
    ed.header.title_var.set("renamed-cards")
    ed.header.title.commit()
    assert app.workspace.exists("renamed-cards.json") and not app.workspace.exists("cards.json")
    assert window.tabs.active == "renamed-cards.json"
    assert window.notebook.tab(window.pages["renamed-cards.json"], "text").strip() == "renamed-cards"


def test_a_growing_message_pushes_the_cards_below_it_down(ed, window):
    window.root.update()
    first, second = ed.list.order[0], ed.list.order[1]
    y_before = second.winfo_y()
    first.text.insert("end", "\n".join(f"line {i}" for i in range(6)))
    window.root.update()
    assert second.winfo_y() > y_before
    assert first.winfo_y() + first.winfo_height() <= second.winfo_y()


def test_call_tools_runs_every_executable_call_of_a_message(window, app, tmp_path):
    note = tmp_path / "n.txt"
    note.write_text("from disk", "utf-8")
    write_bytes_atomic(app.workspace.root / "multi.json", orjson.dumps({
        "title": "multi", "context": {
            "tools": [{"type": "builtin", "name": "read", "description": "Read",
                       "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
                      {"type": "function", "name": "ask_human", "description": "Ask",
                       "parameters": {"type": "object", "properties": {}}}],
            "messages": [
                {"id": "u", "role": "user", "content": [{"type": "text", "text": "go"}]},
                {"id": "a", "role": "assistant", "content": [{"type": "text", "text": ""}], "toolCalls": [
                    {"id": "r1", "input": {"name": "read", "arguments": {"path": str(note)}}},
                    {"id": "h1", "input": {"name": "ask_human", "arguments": {}}}]}]}}))
    window.tree_view.refresh()
    ed = window.open_thread("multi.json")
    window.root.update()
    assert ed.run_controls.call_tools("a") == 1
    from ..conftest import pump_until

    pump_until(window.root, lambda: ed.run.tool_status.get("r1") in ("done", "error"))
    calls = ed.p.messages[1].toolCalls
    assert "from disk" in calls[0].output.text() and calls[1].output is None
