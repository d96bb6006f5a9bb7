"""Notification cards in a real window: at most three at once (older info cards go, errors
wait for room), info cards close themselves while errors stay until closed, and no card
covers a control of the window (buttons, entries, text boxes, the tree)."""

from __future__ import annotations

import pytest

from llmspace.ui import toasts as toasts_module

from .conftest import open_tabs, pump_until

CONTROL_CLASSES = {"TButton", "TEntry", "Text", "Treeview", "TCheckbutton", "TMenubutton", "TCombobox",
                   "TScale", "Scale", "TSpinbox", "Listbox", "TScrollbar"}


def rect(w) -> tuple[int, int, int, int]:
    """Where `w` shows on screen: clipped to the viewport of a scrolling column around it
    (`ui/scroll_column.ScrollColumn`), whose canvas hides what is scrolled out of it."""
    x, y = w.winfo_rootx(), w.winfo_rooty()
    box = (x, y, x + w.winfo_width(), y + w.winfo_height())
    parent = w.master
    while parent is not None:
        if getattr(parent, "scrolls_children", False):
            c = parent.canvas
            cx, cy = c.winfo_rootx(), c.winfo_rooty()
            box = (max(box[0], cx), max(box[1], cy), min(box[2], cx + c.winfo_width()), min(box[3], cy + c.winfo_height()))
        parent = parent.master
    return box


def overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def controls(widget, skip) -> list:
    found = []
    for child in widget.winfo_children():
        if child in skip or child.winfo_class() in ("Toplevel", "Menu") or not child.winfo_ismapped():
            continue
        if child.winfo_class() in CONTROL_CLASSES:
            found.append(child)
        found.extend(controls(child, skip))
    return found


def visible(window) -> list:
    return [c for c in window.ui.toasts.cards if c.winfo_ismapped()]


def test_at_most_three_cards_show_and_an_error_waits_for_room_instead_of_going(window):
    toasts = window.ui.toasts
    error = toasts.show("Sync failed", "error")
    for i in range(4):
        toasts.show(f"note {i}", "info")
    window.root.update()
    assert len(visible(window)) == 3
    assert error in toasts.cards  # an error is never dropped unread
    assert toasts.messages()[-2:] == ["note 2", "note 3"]
    for card in list(visible(window)):
        if card is not error:
            toasts.close(card)
    window.root.update()
    assert error.winfo_ismapped()


def test_info_cards_close_themselves_and_errors_stay_until_closed(window, monkeypatch):
    monkeypatch.setattr(toasts_module, "AUTO_CLOSE_MS", 300)
    toasts = window.ui.toasts
    info = toasts.show("Saved", "info")
    success = toasts.show("Installed", "success")
    error = toasts.show("Sync failed", "error")
    pump_until(window.root, lambda: info not in toasts.cards and success not in toasts.cards, 20)
    assert error in toasts.cards and error.winfo_ismapped()
    toasts.close(error)
    assert toasts.cards == []


@pytest.mark.parametrize("size", ["1280x800", "800x500"])
def test_no_card_covers_a_control_of_the_window(window, app, size):
    ed, = open_tabs(window, app, "covered")
    window.root.geometry(f"{size}+0+0")
    for i in range(3):
        window.ui.toasts.show(f"A notification long enough to wrap onto a second line, number {i}", "warning",
                              action=("View", lambda: None))
    window.root.update()
    cards = visible(window)
    assert len(cards) == 3
    others = controls(window.root, set(window.ui.toasts.cards))
    assert ed.add_btn in others or size == "800x500"  # (at 800x500 the editor's own layout decides)
    assert len(others) > 10
    covered = [(str(w), str(c)) for c in cards for w in others if overlap(rect(c), rect(w))]
    try:
        assert covered == []
    finally:
        window.root.geometry("1280x800+0+0")
        window.root.update()

