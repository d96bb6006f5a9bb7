"""The keyboard in a real window: "+ Message" puts the focus in the new message."""

from __future__ import annotations

from .conftest import open_tabs, pump_until


def type_into_focus(root, text: str) -> None:
    for ch in text:
        (root.focus_get() or root).event_generate("<KeyPress>", keysym=ch)
    root.update()


def test_plus_message_focuses_the_new_message_so_typed_text_lands_in_it(window, app):
    ed, = open_tabs(window, app, "adding")
    pump_until(window.root, lambda: ed.list.order and ed.list.order[0].winfo_ismapped(), 10)
    before = len(ed.p.messages)
    ed.add_btn.focus_force()
    window.root.update()
    ed.add_btn.event_generate("<Key-Return>")  # the button, pressed from the keyboard (ttkbootstrap: Enter)
    pump_until(window.root, lambda: len(ed.p.messages) == before + 1, 10)
    new_id = ed.p.messages[-1].id
    window.root.update()
    type_into_focus(window.root, "hello")
    assert ed.p.messages[-1].text() == "hello"
    assert window.root.focus_get() is ed.list.cards[new_id].text
