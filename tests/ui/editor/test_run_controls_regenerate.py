"""Regenerate in a real window against the loopback model server: Run on a thread that ends
with the reply asks nothing modal and points to Regenerate; the ↻ button on the last reply and
Ctrl+R run again from the user turn before it; the old reply leaves the messages but stays in
the run history, Ctrl+Z brings it back, and Regenerate is disabled while the run goes."""

from __future__ import annotations

import pytest

from tests.support.llm_server import LoopbackLLM, Turn, configure_provider

from ..conftest import pump_until


@pytest.fixture
def srv(home):
    with LoopbackLLM() as s:
        configure_provider(home, s)
        yield s


def replied(window, app, srv, stem="regen"):
    """A thread with one user turn and the reply "first answer"."""
    srv.push(Turn(text="first answer"))
    rel = app.workspace.create_thread("", stem)
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    window.root.update()
    ed.list.order[0].text.insert("1.0", "Tell me something.")
    window.root.update()
    assert ed.run_controls.start_run()
    pump_until(window.root, lambda: not ed.run.running and ed.p.messages[-1].text() == "first answer")
    return ed


def regen_button(ed):
    card = ed.list.cards.get(ed.p.messages[-1].id)
    return getattr(card, "regen_btn", None) if card is not None else None


def settle(window, rounds=5):
    """Let the list's deferred renders run (a card built before one is replaced by it)."""
    for _ in range(rounds):
        window.root.update()
        window.root.update_idletasks()


def click(window, widget):
    """Press and release the left button in the middle of `widget`, as the user clicks."""
    window.root.update()
    x, y = widget.winfo_width() // 2, widget.winfo_height() // 2
    widget.event_generate("<Enter>", x=x, y=y)
    widget.event_generate("<ButtonPress-1>", x=x, y=y)
    widget.event_generate("<ButtonRelease-1>", x=x, y=y)
    window.root.update()


def press(window, widget, sequence):
    widget.focus_force()
    window.root.update()
    widget.event_generate(sequence)
    window.root.update()


def test_run_on_a_thread_ending_with_the_reply_shows_no_modal_error_and_points_to_regenerate(window, app, srv):
    ed = replied(window, app, srv)
    press(window, ed.header.title_entry, "<Control-Return>")
    assert window.dialogs.errors == []
    assert not ed.run.running
    assert "Regenerate" in window.status.msg.cget("text")


def test_the_regenerate_button_on_the_last_reply_runs_the_turn_again_and_ctrl_z_brings_the_old_reply_back(
        window, app, srv):
    ed = replied(window, app, srv)
    user_id = ed.p.messages[0].id
    pump_until(window.root, lambda: regen_button(ed))
    settle(window)
    button = regen_button(ed)
    assert str(button.cget("state")) != "disabled"
    srv.push(Turn(text="second answer", chunk_size=2, delay_per_chunk=0.01))
    click(window, button)
    pump_until(window.root, lambda: ed.run.running or ed.p.messages[-1].text() == "second answer")
    if ed.run.running:  # while it runs, the new reply's card offers no Regenerate
        window.root.update()
        shown = regen_button(ed)
        assert shown is None or str(shown.cget("state")) == "disabled"
    pump_until(window.root, lambda: not ed.run.running)
    assert [m.role for m in ed.p.messages] == ["user", "assistant"]
    assert ed.p.messages[0].id == user_id
    assert ed.p.messages[-1].text() == "second answer"
    assert window.dialogs.errors == []
    # the old reply stays in the run history
    replies = [m.text() for run in ed.p.thread.runHistory or [] for m in run.thread.context.messages or []
               if m.role == "assistant"]
    assert "first answer" in replies and "second answer" in replies
    # Ctrl+Z brings the old reply back
    press(window, ed.header.title_entry, "<Control-z>")
    pump_until(window.root, lambda: ed.p.messages[-1].text() == "first answer")
    assert [m.role for m in ed.p.messages] == ["user", "assistant"]


def test_ctrl_r_regenerates_from_anywhere_in_the_editor_and_not_while_a_run_goes(window, app, srv):
    ed = replied(window, app, srv, stem="ctrl-r")
    srv.push(Turn(text="x" * 400, chunk_size=2, delay_per_chunk=0.01))
    press(window, ed.settings.prompt, "<Control-r>")
    pump_until(window.root, lambda: ed.run.running)
    assert ed.p.messages[-1].text() != "first answer"
    requests = len(srv.requests)
    press(window, ed.header.title_entry, "<Control-r>")  # while it runs: nothing happens
    assert ed.run.running and ed.run.regenerate_from() and not ed.run.can_regenerate()
    pump_until(window.root, lambda: not ed.run.running)
    assert len(srv.requests) == requests
    assert ed.p.messages[-1].text() == "x" * 400
    assert [m.role for m in ed.p.messages] == ["user", "assistant"]
    assert window.dialogs.errors == []
