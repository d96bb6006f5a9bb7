"""Running from the editor in a real window against the loopback model server: streamed
text shows up in the assistant card, Stop keeps the partial text, a custom function tool
call is answered in its result box and the run continues, errors land in the banner."""

from __future__ import annotations

import pytest

from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider

from ..conftest import pump_until


@pytest.fixture
def srv(home):
    with LoopbackLLM() as s:
        configure_provider(home, s)
        yield s


def open_editor(window, app, text="Hello?", stem="chat"):
    rel = app.workspace.create_thread("", stem)
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    window.root.update()
    ed.list.order[0].text.insert("1.0", text)
    window.root.update()
    return ed


def card_text(ed):
    card = ed.list.cards.get(ed.p.messages[-1].id)
    return card.text.get("1.0", "end-1c") if card is not None and card.text is not None else ""


def test_a_run_streams_into_the_assistant_card_and_lands_in_the_file(window, app, srv):
    srv.push(Turn(text="Streaming into the window works.", chunk_size=2, delay_per_chunk=0.002))
    ed = open_editor(window, app)
    assert ed.run_controls.start_run()
    assert ed.header.run_btn.cget("text") == "■ Stop"
    assert str(ed.settings.prompt.cget("state")) == "disabled"
    pump_until(window.root, lambda: ed.run.status != "running")
    assert card_text(ed) == "Streaming into the window works."
    assert ed.header.run_btn.cget("text") == "▶ Run"
    assert "Streaming into the window works." in app.workspace.resolve(ed.p.rel).read_text("utf-8")
    assert window.pump.text_flushes >= 1


def test_stop_ends_the_run_and_keeps_the_partial_text(window, app, srv):
    srv.push(Turn(text="y" * 2000, chunk_size=2, delay_per_chunk=0.005))
    ed = open_editor(window, app)
    window.tab_pages.run_or_stop()
    pump_until(window.root, lambda: len(card_text(ed)) > 10 and ed.p.messages[-1].role == "assistant")
    window.tab_pages.run_or_stop()  # Ctrl+Enter again: stop
    pump_until(window.root, lambda: ed.run.status != "running")
    assert 0 < len(ed.p.messages[-1].text()) < 2000
    assert not ed.p.read_only
    assert ed.header.status.cget("text") == "Stopped"


def test_a_function_tool_result_is_entered_in_its_box_and_the_run_continues(window, app, srv):
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_9", name="lookup", arguments={"q": "life"})]),
             Turn(text="It is 42."))
    ed = open_editor(window, app)
    ed.p.upsert_function_tool('{"name": "lookup", "description": "Look it up", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}')
    window.switches.auto_run.set(True)
    try:
        ed.run_controls.start_run()
        pump_until(window.root, lambda: ed.run.status == "paused")
        assert "lookup" in ed.run.pause_reason
        box = ed.run_controls.focus_pending_result()
        assert box is ed.list.cards[ed.p.messages[-1].id].results["call_9"]
        box.insert("1.0", "42")
        window.root.update()
        assert ed.p.messages[-1].toolCalls[0].output.text() == "42"
        ed.run_controls.continue_run()
        pump_until(window.root, lambda: ed.run.status != "running" and ed.p.messages[-1].text() == "It is 42.")
    finally:
        window.switches.auto_run.set(False)


def test_a_failed_run_shows_the_error_in_the_editor(window, app, srv):
    srv.push_raw(status=401, body=b'{"error": {"message": "invalid key"}}')
    ed = open_editor(window, app)
    ed.run_controls.start_run()
    pump_until(window.root, lambda: ed.run.status != "running")
    assert ed.run.status == "error"
    assert ed.banner.winfo_ismapped() or ed.banner.winfo_manager() == "pack"


def test_two_tabs_can_run_at_once(window, app, srv):
    srv.push(Turn(text="first", chunk_size=1, delay_per_chunk=0.01), Turn(text="second", chunk_size=1, delay_per_chunk=0.01))
    a = open_editor(window, app, stem="a")
    b = open_editor(window, app, stem="b")
    a.run_controls.start_run()
    b.run_controls.start_run()
    assert a.run.running and b.run.running
    pump_until(window.root, lambda: not a.run.running and not b.run.running)
    assert {a.p.messages[-1].text(), b.p.messages[-1].text()} == {"first", "second"}


def test_a_risky_command_pauses_and_runs_only_after_confirmation(window, app, srv, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("x", "utf-8")
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_rm", name="bash", arguments={"command": f"rm -f {victim}"})]),
             Turn(text="Removed."))
    ed = open_editor(window, app, stem="risky")
    ed.p.add_tools([{"type": "builtin", "name": "bash", "description": "Run a shell command",
                     "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}])
    from llmspace.core.model import Variable

    ed.p.thread.ensure_context().variables = {"current_working_directory": Variable(type="workingDirectory", value=str(tmp_path))}
    window.switches.auto_run.set(True)
    try:
        ed.run_controls.start_run()
        pump_until(window.root, lambda: ed.run.status == "paused")
        assert "risky" in ed.run.pause_reason and victim.exists()
        window.dialogs.answer = False
        ed.run_controls.confirm_risky()
        assert victim.exists() and ed.run.status == "paused"
        window.dialogs.answer = True
        ed.run_controls.confirm_risky()
        pump_until(window.root, lambda: ed.p.messages[-1].text() == "Removed." and ed.run.status != "running")
        out = ed.p.messages[-2].toolCalls[0].output
        assert not victim.exists(), out.text()
    finally:
        window.switches.auto_run.set(False)


def test_an_open_unedited_thread_reloads_when_changed_on_disk(window, app):
    ed = open_editor(window, app, stem="ext")
    ed.flush()
    path = app.workspace.resolve(ed.p.rel)
    data = path.read_text("utf-8").replace("Hello?", "Changed elsewhere")
    import os
    st = os.stat(path)
    path.write_text(data, "utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    window.tab_pages.check_open_files()
    assert ed.p.messages[0].text() == "Changed elsewhere"


def test_closing_a_running_tab_stops_the_run_and_saves_what_it_produced(window, app, srv):
    srv.push(Turn(text="z" * 2000, chunk_size=2, delay_per_chunk=0.005))
    ed = open_editor(window, app, stem="closing")
    rel = ed.p.rel
    ed.run_controls.start_run()
    pump_until(window.root, lambda: len(ed.p.messages) > 1 and ed.p.messages[-1].text())
    run = ed.run
    window.tab_pages.close_tab(rel)
    pump_until(window.root, lambda: not run.running)
    pump_until(window.root, lambda: "zz" in app.workspace.resolve(rel).read_text("utf-8"))


def test_render_warnings_of_a_run_show_in_the_status_bar_and_the_prompt_hints(window, app, srv):
    srv.push(Turn(text="done"))
    ed = open_editor(window, app, text="Hi {% if %}x", stem="warn")
    assert ed.run_controls.start_run()
    pump_until(window.root, lambda: ed.run.status != "running")
    status = window.status.msg.cget("text")
    assert status.startswith("Run finished with 1 warning: Template error in message 1"), status
    assert "Last run: Template error in message 1" in ed.settings.hints.cget("text")


def test_a_finished_reply_whose_lines_wrap_is_shown_whole(window, app, srv):
    # Lines longer than the first 90-characters-a-line estimate wrap to more display lines
    # than the box was given; once shown at its real width the box grows to fit them all.
    text = "\n".join(["w" * 40 + " " + "x" * 60 + " " + "y" * 60] * 4 + ["the last line"])
    srv.push(Turn(text=text, chunk_size=50))
    ed = open_editor(window, app)
    assert ed.run_controls.start_run()
    pump_until(window.root, lambda: ed.run.status != "running")

    def shows_every_line():
        card = ed.list.cards.get(ed.p.messages[-1].id)
        if card is None or card.text is None or not card.text.winfo_ismapped():
            return False
        shown = card.text.count("1.0", "end", "displaylines")
        lines = int(shown[0] if isinstance(shown, tuple) else shown)
        return int(card.text.cget("height")) >= lines

    assert pump_until(window.root, shows_every_line, timeout=10)


def test_a_reply_cut_at_max_tokens_is_kept_and_a_warning_toast_says_so(window, app, srv):
    srv.push(Turn(text="Half an answer", finish_reason="length"))
    ed = open_editor(window, app, stem="cut")
    assert ed.run_controls.start_run()
    pump_until(window.root, lambda: ed.run.status != "running")
    assert ed.p.messages[-1].text() == "Half an answer"
    assert ed.header.status.cget("text") == "Done"
    texts = list(window.ui.toasts.texts.values())
    assert any(t.startswith("loop: the reply was cut at the model's output limit (finish reason length)") for t in texts), texts
