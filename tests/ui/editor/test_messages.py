"""The reply view in a real window against the loopback model server: a message takes the
height its text needs and the message list scrolls (every line of a 200-line Markdown reply
can be brought into view with the wheel), a reader who scrolled up while a reply streams
stays where they were, a reply that is only a heading is not clipped, and opening History
after a long reply keeps the messages in order."""

from __future__ import annotations

import itertools

import pytest

from tests.support.llm_server import LoopbackLLM, Turn, configure_provider

from ..conftest import pump_until

LINES = 200


def long_reply() -> str:
    out = ["# The long reply", ""]
    for n in range(1, LINES + 1):
        if n % 50 == 1:
            out += [f"## Part {n // 50 + 1}", ""]
        out.append(f"- item {n:03d} of the list")
    return "\n".join(out)


@pytest.fixture
def srv(home):
    with LoopbackLLM() as s:
        configure_provider(home, s)
        yield s


def open_editor(window, app, stem, messages=None):
    rel = app.workspace.create_thread("", stem)
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    window.root.update()
    if messages is None:
        ed.list.order[0].text.insert("1.0", "Write a long list.")
    window.root.update()
    return ed


def reply_box(ed):
    card = ed.list.cards.get(ed.p.messages[-1].id)
    return card.text if card is not None and ed.p.messages[-1].role == "assistant" else None


def visible_items(ed) -> dict[int, int]:
    """The items of the reply wholly inside the list's visible area: number -> root y."""
    t = reply_box(ed)
    if t is None or not t.winfo_ismapped():
        return {}
    top = ed.list.body.winfo_rooty()
    bottom = top + ed.list.body.winfo_height()
    t_y = t.winfo_rooty()
    found = {}
    start = "1.0"
    while True:
        at = t.search("item ", start, stopindex="end")
        if not at:
            break
        number = int(t.get(f"{at}+5c", f"{at}+8c"))
        info = t.dlineinfo(at)
        if info is not None:
            y, h = t_y + info[1], info[3]
            if top <= y and y + h <= bottom:
                found[number] = y
        start = f"{at}+8c"
    return found


def wheel(window, ed, up: bool, notches: int = 1) -> None:
    for _ in range(notches):
        ed.list.body.event_generate("<Button-4>" if up else "<Button-5>")
    window.root.update()


def test_a_200_line_reply_streams_while_a_reader_who_scrolled_up_stays_put_and_every_line_can_be_scrolled_to(
        window, app, srv):
    srv.push(Turn(text=long_reply(), chunk_size=6, delay_per_chunk=0.004))
    ed = open_editor(window, app, "long")
    assert ed.run_controls.start_run()
    pump_until(window.root, lambda: reply_box(ed) is not None and "item 070" in reply_box(ed).get("1.0", "end"),
               timeout=60)
    wheel(window, ed, up=True, notches=4)
    assert not ed.list.follow
    seen = pump_until(window.root, lambda: visible_items(ed))
    anchor = min(seen)
    y = seen[anchor]
    pump_until(window.root, lambda: "item 150" in reply_box(ed).get("1.0", "end"), timeout=60)
    window.root.update()
    assert visible_items(ed).get(anchor) == y, "the reader was moved while the reply streamed"
    pump_until(window.root, lambda: not ed.run.running, timeout=60)
    assert ed.p.messages[-1].text() == long_reply()
    # the reply is not a fixed-height box: once it ended, it is taller than the list's visible area
    pump_until(window.root, lambda: reply_box(ed).winfo_height() > ed.list.body.winfo_height(), timeout=10)
    # scroll to the top with the wheel, then down notch by notch: every line comes into view
    for _ in range(400):
        if ed.list.first == 0 and ed.list.offset == 0:
            break
        wheel(window, ed, up=True)
    assert ed.list.first == 0 and ed.list.offset == 0
    shown: set[int] = set()
    for _ in range(600):
        shown |= set(visible_items(ed))
        if ed.list.at_end() and len(shown) == LINES:
            break
        wheel(window, ed, up=False)
    assert sorted(set(range(1, LINES + 1)) - shown) == []
    # once fitted to its real width, the box holds its whole text (it does not scroll inside)
    pump_until(window.root, lambda: reply_box(ed) is not None and reply_box(ed).yview() == (0.0, 1.0), timeout=5)


def test_a_streaming_reply_box_is_at_most_the_visible_height_and_gets_its_full_height_in_place_when_it_ends(
        window, app, srv):
    """A Tk Text lays out all its lines again whenever its height changes: a reply box that
    grew with its text stalled streaming (python -m bench ui). While it streams, the box is at
    most the list's visible height and scrolls inside itself; when the run ends it takes its
    full height once, and the lines the reader sees do not move."""
    srv.push(Turn(text=long_reply(), chunk_size=6, delay_per_chunk=0.004))
    ed = open_editor(window, app, "capped")
    assert ed.run_controls.start_run()
    heights: list[int] = []

    def streamed(item: str) -> bool:
        t = reply_box(ed)
        if t is None:
            return False
        heights.append(t.winfo_height())
        return item in t.get("1.0", "end")

    pump_until(window.root, lambda: streamed("item 090"), timeout=60)
    visible = ed.list.body.winfo_height()
    assert max(heights) <= visible, f"the streaming reply's box grew to {max(heights)} px; the list shows {visible}"
    # following: the newest line is in view, at the bottom of the list
    assert ed.list.at_end()
    pump_until(window.root, lambda: 90 in visible_items(ed) or max(visible_items(ed) or [0]) > 90, timeout=10)
    wheel(window, ed, up=True, notches=3)
    assert not ed.list.follow
    seen = pump_until(window.root, lambda: visible_items(ed))
    anchor = max(seen)
    y = seen[anchor]
    pump_until(window.root, lambda: "item 150" in reply_box(ed).get("1.0", "end"), timeout=60)
    window.root.update()
    assert visible_items(ed).get(anchor) == y, "the reader was moved inside the box while the reply streamed"
    pump_until(window.root, lambda: not ed.run.running, timeout=60)
    t = pump_until(window.root, lambda: reply_box(ed) is not None and reply_box(ed).winfo_height() > visible
                   and reply_box(ed).yview() == (0.0, 1.0) and reply_box(ed), timeout=10)
    assert t.winfo_height() > visible
    for _ in range(5):
        window.root.update()
    assert visible_items(ed).get(anchor) == y, "the lines the reader saw moved when the reply ended"


def test_a_reply_that_is_only_a_heading_is_not_clipped(window, app, srv):
    rel = app.workspace.create_thread("", "heading")
    from llmspace.presenters.editor import EditorPresenter

    p = EditorPresenter(app.workspace, rel)
    p.message_intents.set_message_text(0, "Title please")
    p.message_intents.add_message("assistant")
    p.message_intents.set_message_text(1, "# A heading, and nothing else")
    p.save()
    window.tree_view.refresh()
    ed = window.open_thread(rel)  # as after a restart: the thread is read from its file
    t = pump_until(window.root, lambda: reply_box(ed))
    pump_until(window.root, lambda: t.winfo_ismapped() and t.winfo_width() > 50)
    # the box is fitted once shown at its real width (an idle moment later)
    pump_until(window.root, lambda: t.yview() == (0.0, 1.0), timeout=10)
    _x, y, _w, h, _base = t.dlineinfo("1.0")
    assert y + h <= t.winfo_height(), f"the heading's line ({y}+{h} px) is clipped by its box ({t.winfo_height()} px)"


def test_opening_history_after_a_long_reply_keeps_the_messages_in_order_without_overlap(window, app, srv):
    srv.push(Turn(text=long_reply()[:3000]))
    ed = open_editor(window, app, "history-order")
    assert ed.run_controls.start_run()
    pump_until(window.root, lambda: not ed.run.running, timeout=60)
    wheel(window, ed, up=True, notches=200)
    ed.toggle_history()
    for _ in range(10):
        window.root.update()
    cards = [c for c in ed.list.order if c.winfo_ismapped()]
    assert [c.index for c in cards] == sorted(c.index for c in cards)
    for above, below in itertools.pairwise(cards):
        assert above.winfo_y() + above.winfo_height() <= below.winfo_y() + 1, "cards overlap"
    user = ed.list.cards[ed.p.messages[0].id]
    assert user.winfo_ismapped() and user.winfo_y() <= 4, "blank space above the first message"
