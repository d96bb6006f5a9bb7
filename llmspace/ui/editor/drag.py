"""Drag a message card by its header (the ⠿ handle or the header's free space) onto another
place in the list: a line shows where it will land; dropping moves it there in one undo step.
A press without a move is no drag. Only the cards shown can be drop targets (the ↑/↓
buttons still move a message one place at a time). Logic in `presenters/messages.py`
(`drop_slot`, `drop_line`, `MessageIntents.drop_message`).

`MessageDrag(message_list, presenter, errors)` is a component of `ui/editor/messages.MessageList`
(`list.drag`; it uses the list's `body` and shown cards, `order`); `ui/editor/cards.MessageCard` calls `bind(widget, card)` for its handle and header.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ...errors import UserFacingError
from ...presenters.messages import drop_line, drop_slot

if TYPE_CHECKING:
    from ...presenters.editor import EditorPresenter
    from ..services import ErrorReporter

THRESHOLD = 4  # px the pointer moves before a press becomes a drag


class MessageDrag:
    """State of the drag in progress: the message index, the gap it would drop into."""

    def __init__(self, message_list: Any, presenter: EditorPresenter, errors: ErrorReporter) -> None:
        self.list = message_list
        self.p, self.errors = presenter, errors
        self.index: int | None = None
        self.slot: int | None = None
        self._start_y = 0
        self.dragging = False
        self.line: Any = None

    def bind(self, widget: Any, card: Any) -> None:
        widget.bind("<ButtonPress-1>", lambda e: self.press(card, e), add=True)
        widget.bind("<B1-Motion>", self.motion, add=True)
        widget.bind("<ButtonRelease-1>", self.release, add=True)

    def _y(self, e: Any) -> int:
        """The pointer's y in the list body (from the widget the event came to)."""
        return int(e.widget.winfo_rooty() + e.y - self.list.body.winfo_rooty())

    def press(self, card: Any, e: Any) -> None:
        if self.p.read_only:
            return
        self.index, self.slot, self.dragging = card.index, None, False
        self._start_y = self._y(e)

    def _cards(self) -> list[tuple[int, int, int]]:
        return [(c.index, c.winfo_y(), c.winfo_height()) for c in self.list.order if c.winfo_exists() and c.winfo_ismapped()]

    def motion(self, e: Any) -> str | None:
        if self.index is None:
            return None
        y = self._y(e)
        if not self.dragging and abs(y - self._start_y) < THRESHOLD:
            return None
        self.dragging = True
        cards = self._cards()
        self.slot = drop_slot(y, cards)
        if self.slot is None:
            self._hide_line()
            return "break"
        if self.line is None or not self.line.winfo_exists():
            self.line = tb.Frame(self.list.body, height=3, bootstyle="primary")
        self.line.place(x=0, y=max(0, drop_line(self.slot, cards) - 2), relwidth=1.0, height=3)
        self.line.lift()
        return "break"

    def release(self, _e: Any = None) -> str | None:
        index, slot, dragging = self.index, self.slot, self.dragging
        self.index = self.slot = None
        self.dragging = False
        self._hide_line()
        if index is None or not dragging or slot is None:
            return None
        try:
            self.p.message_intents.drop_message(index, slot)
        except UserFacingError as exc:  # a refused edit (read-only while running): say why
            self.errors.show(str(exc))
        except IndexError:
            pass  # the message went away meanwhile
        return "break"

    def _hide_line(self) -> None:
        if self.line is not None and self.line.winfo_exists():
            self.line.place_forget()
