"""Run presenter: eligibility, live folding of streamed events, stop, pauses for function
tools and continuing with a typed result — against the loopback model server."""

import queue
import time

import pytest

from llmspace.errors import UserFacingError
from llmspace.presenters import view_updates as vu
from llmspace.presenters.editor import EditorPresenter
from llmspace.presenters.run import RunPresenter
from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider


class QueuePump:
    """Stands in for the UI pump: workers post, the test thread drains."""

    def __init__(self):
        self.q = queue.SimpleQueue()
        self.text_calls = 0

    def post(self, fn, *args):
        self.q.put((fn, args))

    def post_text(self, key, text, sink):
        self.q.put((sink, (text,)))

    def drain_until(self, cond, timeout=20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                fn, args = self.q.get(timeout=0.05)
            except queue.Empty:
                if cond():
                    return True
                continue
            fn(*args)
            if cond():
                return True
        raise AssertionError("condition not met in time")


@pytest.fixture
def srv(home):
    with LoopbackLLM() as s:
        configure_provider(home, s)
        yield s


def make(app, text="Hi"):
    rel = app.workspace.create_thread("", "run")
    ed = EditorPresenter(app.workspace, rel)
    ed.message_intents.set_message_text(0, text)
    return ed, RunPresenter(ed, app)


def test_a_run_streams_text_into_a_new_assistant_message_and_is_recorded(app, srv):
    srv.push(Turn(text="Hello there, streaming works.", chunk_size=3))
    ed, run = make(app)
    pump = QueuePump()
    seen = []
    ed.listeners.append(seen.append)
    run.start(pump.post, pump.post_text)
    assert ed.read_only and run.running
    pump.drain_until(lambda: run.status != "running")
    assert run.status == "idle" and not ed.read_only
    assert ed.messages[-1].role == "assistant"
    assert ed.messages[-1].text() == "Hello there, streaming works."
    assert any(isinstance(u, vu.TextStreamed) for u in seen)
    ed.save()
    assert "Hello there" in app.workspace.resolve(ed.rel).read_text("utf-8")
    assert ed.thread.runHistory


def test_a_thread_ending_with_an_assistant_message_cannot_run(app, srv):
    ed, run = make(app)
    ed.message_intents.add_message("assistant")
    with pytest.raises(UserFacingError, match="last message"):
        run.check()


def test_stop_keeps_the_partial_message(app, srv):
    srv.push(Turn(text="x" * 400, chunk_size=2, delay_per_chunk=0.01))
    ed, run = make(app)
    pump = QueuePump()
    run.start(pump.post, pump.post_text)
    pump.drain_until(lambda: len(ed.messages) > 1 and ed.messages[-1].text())
    run.stop()
    pump.drain_until(lambda: run.status != "running")
    assert run.status == "idle" and run.stopped
    assert 0 < len(ed.messages[-1].text()) < 400


def test_a_function_tool_call_pauses_and_continues_with_the_typed_result(app, srv):
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_1", name="lookup", arguments={"q": "x"})]),
             Turn(text="The answer is 42."))
    ed, run = make(app)
    ed.upsert_function_tool('{"name": "lookup", "description": "Look up", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}')
    pump = QueuePump()
    run.start(pump.post, pump.post_text, auto_tools=True)
    pump.drain_until(lambda: run.status != "running")
    assert run.status == "paused" and "lookup" in (run.pause_reason or "")
    assert [c.id for _, c in ed.message_intents.pending_function_calls()] == ["call_1"]
    ed.message_intents.set_tool_result(len(ed.messages) - 1, "call_1", "42")
    run.start(pump.post, pump.post_text)
    pump.drain_until(lambda: run.status != "running")
    assert ed.messages[-1].text() == "The answer is 42."


def test_errors_are_reported_with_what_to_do(app, srv):
    srv.push_raw(status=401, body=b'{"error": {"message": "bad key"}}')
    _ed, run = make(app)
    pump = QueuePump()
    run.start(pump.post, pump.post_text)
    pump.drain_until(lambda: run.status != "running")
    assert run.status == "error" and run.error


def test_run_from_a_message_cuts_after_it_in_one_undo_step(app, srv):
    srv.push(Turn(text="again"))
    ed, run = make(app, "first")
    ed.message_intents.add_message("assistant")
    ed.message_intents.set_message_text(1, "old answer")
    ed.message_intents.add_message("user")
    pump = QueuePump()
    run.start(pump.post, pump.post_text, from_message_id=ed.messages[0].id)
    pump.drain_until(lambda: run.status != "running")
    assert [m.text() for m in ed.messages] == ["first", "again"]
    ed.undo()
    assert [m.text() for m in ed.messages] == ["first", "old answer", ""]


def test_regenerate_runs_again_from_the_user_turn_before_the_last_reply_in_one_undo_step(app, srv):
    srv.push(Turn(text="new answer"))
    ed, run = make(app, "first")
    ed.message_intents.add_message("assistant")
    ed.message_intents.set_message_text(1, "call made")
    ed.message_intents.add_message("user")
    ed.message_intents.set_message_text(2, "second")
    ed.message_intents.add_message("assistant")
    ed.message_intents.set_message_text(3, "old answer")
    assert run.ends_with_reply() and run.can_regenerate()
    assert run.regenerate_from() == ed.messages[2].id
    pump = QueuePump()
    run.regenerate(pump.post, pump.post_text)
    assert not run.can_regenerate()
    with pytest.raises(UserFacingError, match="already running"):
        run.regenerate(pump.post, pump.post_text)
    pump.drain_until(lambda: run.status != "running")
    assert [m.text() for m in ed.messages] == ["first", "call made", "second", "new answer"]
    ed.undo()
    assert [m.text() for m in ed.messages] == ["first", "call made", "second", "old answer"]


def test_regenerate_needs_a_reply_after_a_user_message(app, srv):
    ed, run = make(app, "only a question")
    assert not run.can_regenerate()
    with pytest.raises(UserFacingError, match="no reply to regenerate"):
        run.regenerate_from()
    ed.message_intents.set_message_text(0, "")
    ed.message_intents.toggle_role(0)
    assert not run.can_regenerate()


def test_auto_run_executes_builtin_tools_and_reports_their_status(app, srv, tmp_path):
    target = tmp_path / "note.txt"
    target.write_text("hello file", "utf-8")
    srv.push(Turn(tool_calls=[ToolCallSpec(id="c_read", name="read", arguments={"path": str(target)})]))
    ed, run = make(app)
    ed.add_tools([{"type": "builtin", "name": "read", "description": "Read a file",
                   "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}])
    pump = QueuePump()
    events = []
    run.listeners.append(events.append)
    run.start(pump.post, pump.post_text, auto_tools=True)
    pump.drain_until(lambda: run.status != "running")
    assert run.tool_status.get("c_read") == "done"
    assert "hello file" in ed.messages[-1].toolCalls[0].output.text()
    assert vu.ToolCallChanged("c_read") in events


def test_render_warnings_of_the_run_are_kept_until_the_next_run(app, srv):
    srv.push(Turn(text="ok"))
    ed, run = make(app, "Hi {{ nope }}")
    pump = QueuePump()
    run.start(pump.post, pump.post_text)
    pump.drain_until(lambda: run.status != "running")
    assert run.status == "idle" and len(run.warnings) == 1 and "{{ nope }}" in run.warnings[0]
    ed.message_intents.set_message_text(0, "Hi")
    ed.message_intents.add_message("user")
    ed.message_intents.set_message_text(2, "again")
    srv.push(Turn(text="fine"))
    run.start(pump.post, pump.post_text)
    assert run.warnings == []
    pump.drain_until(lambda: run.status != "running")
    assert run.warnings == []


def test_a_run_service_that_cannot_start_reports_its_own_message(app, monkeypatch):
    ed, run = make(app)
    before = app.workspace.resolve(ed.rel).read_bytes()

    def broken(self):
        raise UserFacingError("Cannot use /x/settings as a folder: Not a directory.", hint="Check LLM_SPACE_HOME.")

    monkeypatch.setattr(type(app), "runner", property(broken))
    pump = QueuePump()
    with pytest.raises(UserFacingError) as info:
        run.start(pump.post, pump.post_text)
    assert str(info.value) == "Cannot use /x/settings as a folder: Not a directory. Check LLM_SPACE_HOME."
    assert len(ed.thread.messages) == 1 and app.workspace.resolve(ed.rel).read_bytes() == before


def test_a_run_that_finishes_by_itself_is_not_reported_as_stopped(app, srv):
    srv.push(Turn(text="done"))
    _ed, run = make(app)
    run.stopped = True  # left over from an earlier stopped run
    pump = QueuePump()
    run.start(pump.post, pump.post_text)
    pump.drain_until(lambda: run.status != "running")
    assert run.status == "idle" and not run.stopped


def test_a_retried_call_is_announced_while_the_run_waits(app, srv):
    srv.push_raw(status=503, headers={"Retry-After": "0"}, body=b'{"error": {"message": "overloaded"}}')
    srv.push(Turn(text="second try"))
    ed, run = make(app)
    pump = QueuePump()
    notes = []
    run.listeners.append(lambda update: notes.append(update.note) if isinstance(update, vu.RetryNote) else None)
    run.start(pump.post, pump.post_text)
    pump.drain_until(lambda: run.status != "running")
    assert ed.messages[-1].text() == "second try"
    assert notes and "attempt 2" in notes[0] and "overloaded" in notes[0]


def test_undoing_past_a_failed_run_forgets_its_error(app, srv):
    srv.push_raw(status=401, body=b'{"error": {"message": "bad key"}}')
    ed, run = make(app)
    pump = QueuePump()
    assert not run.forget_error()  # nothing to forget
    run.start(pump.post, pump.post_text)
    pump.drain_until(lambda: run.status != "running")
    assert run.status == "error" and run.error
    assert ed.undo() and run.forget_error()
    assert run.error is None and run.status == "idle"
