"""The whole core loop with key events only, in a real window against the loopback model
server: Ctrl+N makes a thread (named in the tree's inline box), F6 reaches the title, Tab
the system prompt, F6 the messages; the model is picked from the model menu with the
arrows, Ctrl+Enter runs (then again from the user message), Space on History opens it, F6 reaches the runs, Home
selects the newest, T opens its trace (Escape closes it), Shift+Down selects two and Enter on "Compare two"
compares them; Escape closes the comparison."""

from __future__ import annotations

import pytest

from tests.support.llm_server import LoopbackLLM, Turn, configure_provider

from .conftest import pump_until

KEYSYMS = {" ": "space", ".": "period", ",": "comma", "?": "question", "!": "exclam"}


@pytest.fixture
def srv(home):
    with LoopbackLLM() as s:
        configure_provider(home, s, make_default=False)  # the model has to be picked
        yield s


def focus(window):
    return window.root.focus_get() or window.root


def key(window, keysym: str) -> None:
    focus(window).event_generate(f"<{keysym}>")
    window.root.update()


def type_text(window, text: str) -> None:
    for ch in text:
        focus(window).event_generate("<KeyPress>", keysym=KEYSYMS.get(ch, ch))
    window.root.update()


def tab_to(window, widget, back: bool = False, limit: int = 40) -> None:
    """Tab (Shift+Tab) until `widget` has the focus, as a user would."""
    for _ in range(limit):
        if window.root.focus_get() is widget:
            return
        key(window, "Shift-Tab" if back else "Tab")
    raise AssertionError(f"{widget} not reached with {'Shift+' if back else ''}Tab in {limit} presses")


def find(widget, cls):
    for child in widget.winfo_children():
        if isinstance(child, cls):
            return child
        found = find(child, cls)
        if found is not None:
            return found
    return None


def test_the_core_loop_by_keyboard_only(window, app, srv):
    from llmspace.ui.editor.compare import CompareDialog
    from llmspace.ui.editor.trace_view import TraceWindow

    root = window.root
    root.focus_force()
    window.tree_view.tree.focus_set()
    root.update()
    # a new thread, named in the tree
    key(window, "Control-n")
    ed = pump_until(root, lambda: window.tab_pages.active_editor(), 20)
    assert window.tree_view._editor is not None and root.focus_get() is window.tree_view._editor
    type_text(window, "loop")
    key(window, "Return")
    pump_until(root, lambda: app.workspace.exists("loop.json"), 10)
    ed = window.tab_pages.active_editor()
    # the title
    key(window, "F6")
    assert root.focus_get() is ed.header.title_entry
    key(window, "Control-slash")  # select all
    type_text(window, "Keyboard loop")
    key(window, "Return")
    pump_until(root, lambda: ed.p.title == "Keyboard loop", 10)
    # the system prompt: Tab through the settings
    tab_to(window, ed.settings.prompt)
    type_text(window, "Be brief.")
    assert ed.p.system_prompt == "Be brief."
    # a user message: F6 to the messages
    key(window, "F6")
    assert root.focus_get() is ed.list.order[0].text
    type_text(window, "Hello there?")
    assert ed.p.messages[0].text() == "Hello there?"
    # the model: back to the settings, Tab to the model button, the menu with the arrows
    key(window, "Shift-F6")
    tab_to(window, ed.settings.model_btn)
    key(window, "Return")
    menu = pump_until(root, lambda: root.focus_get() if root.focus_get() and root.focus_get().winfo_class() == "Menu"
                      else None, 10)
    for _ in range(int(menu.index("end")) + 1):
        key(window, "Down")
        active = menu.index("active")
        if active is not None and str(menu.entrycget(active, "label")).startswith("Loopback loop"):
            break
    key(window, "Right")  # into the provider's models
    key(window, "Return")
    pump_until(root, lambda: ed.p.thread.model is not None, 10)
    assert ed.p.thread.model.provider == "loop"
    assert root.focus_get() is ed.settings.model_btn  # back on the button the menu came from
    # run: Ctrl+Enter wherever the focus is (here: on the model button, which it must not press)
    srv.push(Turn(text="First answer."))
    srv.push(Turn(text="Second answer."))
    key(window, "Control-Return")
    pump_until(root, lambda: ed.run.status != "running" and ed.p.messages[-1].text() == "First answer.", 30)
    # run again from the user message: F6 to the messages, Shift+Tab up to it, Ctrl+Enter
    key(window, "F6")
    assert ed.list.order[0].text is not None
    tab_to(window, ed.list.order[0].text, back=True)
    key(window, "Control-Return")
    pump_until(root, lambda: ed.run.status != "running" and ed.p.messages[-1].text() == "Second answer.", 30)
    assert ed.run.error is None and len(srv.requests) == 2
    # open the history: Tab to its button, Space
    key(window, "Shift-F6")
    tab_to(window, ed.header.history_btn)
    key(window, "space")
    panel = pump_until(root, lambda: ed.history_panel, 10)
    pump_until(root, lambda: len(panel.list.get_children()) >= 2, 20)
    # compare two runs: F6 to the runs, select two, Tab to Compare two, Enter
    for _ in range(4):
        if root.focus_get() is panel.list:
            break
        key(window, "F6")
    assert root.focus_get() is panel.list
    key(window, "Home")  # the newest run
    assert panel.list.selection() == (panel.list.get_children()[0],)
    key(window, "t")  # its trace; Escape closes it and the keys are back in the list
    trace = pump_until(root, lambda: find(root, TraceWindow), 20)
    pump_until(root, trace.winfo_ismapped, 10)
    trace.focus_force()
    root.update()
    key(window, "Escape")
    assert not trace.winfo_exists()
    pump_until(root, lambda: root.focus_get() is panel.list, 10)
    key(window, "Shift-Down")
    assert len(panel.list.selection()) == 2
    compare_btn = next(b for b in panel.bar.winfo_children() if str(b.cget("text")) == "Compare two")
    tab_to(window, compare_btn)
    key(window, "Return")
    dialog = pump_until(root, lambda: find(root, CompareDialog), 20)
    pump_until(root, dialog.winfo_ismapped, 10)
    pump_until(root, lambda: str(root.focus_get() or "").startswith(str(dialog)), 10)  # the dialog has the keys
    key(window, "Escape")
    assert not dialog.winfo_exists()
