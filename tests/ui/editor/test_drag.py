"""Drag to reorder messages, in a real window: pressing a card's ⠿ handle (or its header)
and moving the pointer shows a drop line between the cards; releasing moves the message
there in one undo step; a press without a move changes nothing; the ↑/↓ buttons stay."""

from __future__ import annotations

import orjson
import pytest

from llmspace.jsonio import write_bytes_atomic

from ..conftest import pump_until

IDS = ["m0", "m1", "m2", "m3"]


@pytest.fixture
def ed(window, app):
    msgs = [{"id": mid, "role": "user" if i % 2 == 0 else "assistant", "content": [{"type": "text", "text": f"message {i}"}]}
            for i, mid in enumerate(IDS)]
    write_bytes_atomic(app.workspace.root / "drag.json", orjson.dumps({"title": "drag", "context": {"messages": msgs}}))
    window.tree_view.refresh()
    view = window.open_thread("drag.json")
    view.list.follow = False
    view.list.first = 0
    view.list.render()
    pump_until(window.root, lambda: len(view.list.order) == 4 and all(c.winfo_ismapped() for c in view.list.order), 10)
    return view


def ids(ed) -> list[str]:
    return [m.id for m in ed.p.messages]


def drag(window, widget, to_y_in_body: int, steps: int = 4) -> None:
    """Press on `widget`, move the pointer in `steps` motion events to `to_y_in_body` (the
    list body's coordinates), as a real drag does (events keep coming to the pressed widget)."""
    start = widget.winfo_height() // 2
    widget.event_generate("<ButtonPress-1>", x=5, y=start)
    window.root.update()
    body_y = widget.winfo_rooty() - ed_body(widget).winfo_rooty()
    for k in range(1, steps + 1):
        y = start + (to_y_in_body - body_y - start) * k // steps
        widget.event_generate("<B1-Motion>", x=5, y=y, state=0x100)
        window.root.update()


def ed_body(widget):
    w = widget
    while w is not None and not hasattr(w, "drag"):
        w = w.master
    return w.body


def test_dragging_the_first_message_below_the_third_moves_it_in_one_undo_step(ed, window):
    first, third = ed.list.cards["m0"], ed.list.cards["m2"]
    steps = len(ed.p.undo_history.undo)
    target = third.winfo_y() + third.winfo_height() - 2  # the lower half of the third card
    drag(window, first.handle, target)
    line = ed.list.drag.line
    assert line is not None and line.winfo_ismapped()
    fourth = ed.list.cards["m3"]
    assert abs(line.winfo_y() + 2 - fourth.winfo_y()) <= 3  # the line marks the gap above the fourth card
    first.handle.event_generate("<ButtonRelease-1>", x=5, y=5)
    window.root.update()
    assert ids(ed) == ["m1", "m2", "m0", "m3"]
    assert len(ed.p.undo_history.undo) == steps + 1
    assert not line.winfo_ismapped()
    assert [c.msg.id for c in ed.list.order] == ["m1", "m2", "m0", "m3"]  # the cards follow
    ed.undo()
    window.root.update()
    assert ids(ed) == IDS


def test_dragging_by_the_header_moves_a_message_up_and_a_mere_click_moves_nothing(ed, window):
    last = ed.list.cards["m3"]
    second = ed.list.cards["m1"]
    drag(window, last.header, second.winfo_y() + 3)  # the upper half of the second card
    last.header.event_generate("<ButtonRelease-1>", x=5, y=5)
    window.root.update()
    assert ids(ed) == ["m0", "m3", "m1", "m2"]
    card = ed.list.cards["m0"]
    steps = len(ed.p.undo_history.undo)
    card.handle.event_generate("<ButtonPress-1>", x=5, y=5)
    card.handle.event_generate("<B1-Motion>", x=6, y=6, state=0x100)
    card.handle.event_generate("<ButtonRelease-1>", x=6, y=6)
    window.root.update()
    assert ids(ed) == ["m0", "m3", "m1", "m2"] and len(ed.p.undo_history.undo) == steps


def test_the_arrow_buttons_still_move_a_message(ed, window):
    card = ed.list.cards["m1"]
    down = next(b for b in card.header.actions if str(b.cget("text")) == "↓")
    down.invoke()
    assert ids(ed) == ["m0", "m2", "m1", "m3"]
