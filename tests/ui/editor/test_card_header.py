"""Message cards keep every button visible: the token/timing line of an assistant card wraps
instead of pushing the buttons off the card, and when a card is narrow (800 px window,
History open) the buttons move onto more rows."""

from __future__ import annotations

import pytest

from ..conftest import pump_until

USAGE = {"input": 123456, "output": 65432, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 188888,
         "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3123}}


def buttons_of(widget) -> list:
    out = []
    for child in widget.winfo_children():
        if child.winfo_class() in ("TButton", "TMenubutton"):
            out.append(child)
        out.extend(buttons_of(child))
    return out


def hidden_buttons(card) -> list[str]:
    """Buttons of `card` that are not shown whole inside the card's bounds."""
    card.update_idletasks()
    cx, cy, cw, ch = card.winfo_rootx(), card.winfo_rooty(), card.winfo_width(), card.winfo_height()
    bad = []
    for b in buttons_of(card):
        x, y, w, h = b.winfo_rootx(), b.winfo_rooty(), b.winfo_width(), b.winfo_height()
        whole = w >= b.winfo_reqwidth() - 1 and h >= b.winfo_reqheight() - 1
        if not (b.winfo_ismapped() and whole and cx <= x and x + w <= cx + cw and cy <= y and y + h <= cy + ch):
            bad.append(b.cget("text"))
    return bad


@pytest.fixture
def ed(window, app):
    from llmspace.core.threadio import thread_from_data

    thread = thread_from_data({"title": "support-reply", "context": {"messages": [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "Where is my parcel?"}]},
        {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "It ships tomorrow."}],
         "usage": USAGE, "timing": {"durationMs": 12345, "firstTokenMs": 800}},
    ]}})
    app.workspace.save("support-reply.json", thread)
    window.tree_view.refresh()
    return window.open_thread("support-reply.json")


@pytest.mark.parametrize("width", [1280, 800])
@pytest.mark.parametrize("history", [False, True], ids=["no-history", "history"])
def test_every_card_button_is_inside_its_card(ed, window, width, history):
    root = window.root
    root.geometry(f"{width}x800")
    root.update()
    if history:
        ed.toggle_history()
    pump_until(root, lambda: len(ed.list.order) == 2 and all(c.winfo_ismapped() for c in ed.list.order), timeout=10)
    try:
        pump_until(root, lambda: not any(hidden_buttons(c) for c in ed.list.order), timeout=5)
    except AssertionError:
        raise AssertionError({c.msg.role: hidden_buttons(c) for c in ed.list.order}) from None
    stats = ed.list.cards["a1"].stats
    assert "188,888 tokens" in stats.cget("text")
    assert stats.winfo_ismapped()
    if history:
        ed.toggle_history()
