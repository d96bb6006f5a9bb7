"""The reply a run streams into, in the message list: its box is at most the list's visible
height while it streams (a Tk Text lays out all its lines again whenever its height changes,
so a box as tall as a long reply stalls the stream); it scrolls inside itself, and keeps its
place inside across a rebuild of the list. When the reply ends (the run ends, or another
message follows it), the next render gives it its full height, and the line the reader had
at the top of the box is put back where it was on screen. Lines are named by content
(`line_key`): a reply drawn again from its file may lay out its Markdown in other lines.
"""

from __future__ import annotations

import tkinter as tk
from typing import Any

from .text_fit import inset, linespace, show_top, top_line

LineKey = tuple[str, int, int]  # a line's text, how many lines before it read the same, a column


def line_key(t: Any, index: str) -> LineKey:
    """Where `index` is in a box, by content."""
    line, col = (int(n) for n in str(t.index(index)).split("."))
    lines = str(t.get("1.0", "end-1c")).split("\n")
    text = lines[line - 1] if line <= len(lines) else ""
    return text, lines[:line - 1].count(text), col


def line_index(t: Any, key: LineKey) -> str:
    """The index `key` (`line_key`) names in a box (its first line when the text is gone)."""
    text, nth, col = key
    seen = 0
    for n, line in enumerate(str(t.get("1.0", "end-1c")).split("\n"), start=1):
        if line == text:
            if seen == nth:
                return f"{n}.{min(col, len(line))}"
            seen += 1
    return "1.0"


def inner_view(card: Any) -> tuple[LineKey, int] | None:
    """Where a built card's box is scrolled inside (its top line, the pixels of it above the
    top); None when not built or not scrolled."""
    if card is None or card.text is None or not card.winfo_exists():
        return None
    t = card.text
    if float(t.yview()[0]) <= 0.0:
        return None
    top, above = top_line(t)
    return line_key(t, top), above


class StreamedReply:
    """The streaming reply of one `messages.MessageList` (`lst`)."""

    def __init__(self, lst: Any) -> None:
        self.lst = lst
        self.id: str | None = None  # the reply text streams into (its box is capped)
        self.view: tuple[LineKey, int] | None = None  # its box's top line, across a render
        self.pending = False  # a rebuilt box waits for the list's `_fit` to scroll it back
        self.keep: tuple[int, LineKey, int] | None = None  # a line to keep in place when it ended

    def append(self, card: Any, text: str) -> None:
        """Streamed text for `card`: its box grows up to `cap`, then scrolls inside, following
        the tail only while the reader is at the end; the list follows or stays put."""
        lst = self.lst
        at_end = self.reader_at_end()  # before the text grows: was the reader at the bottom?
        blank = card.slack_px
        self.id = card.msg.id
        if card.append_text(text, self.limit(card), follow=at_end):
            card.update_idletasks()
        if card.winfo_reqheight() != lst._placed.get(card) or card.slack_px != blank:
            if at_end:
                lst.follow = True  # the tail stays in view; else the reader stays put
            lst.layout()

    def reader_at_end(self, added: int = 0) -> bool:
        """The reader sees the end of the last message (following, or it is in view, its box
        not scrolled up inside); `added`: messages just appended to the thread and not drawn
        yet, which do not count."""
        lst = self.lst
        if lst.follow:
            return True
        if not lst.order or lst.order[-1].index != len(lst.p.messages) - 1 - added:
            return False
        t = lst.order[-1].text
        if not added and t is not None and float(t.yview()[1]) < 0.999:
            return False  # its box scrolls inside and its end is out of view
        bottom = -lst.offset + sum(lst._placed.get(c, c.winfo_reqheight()) + 4 for c in lst.order)
        return bool(bottom - lst.order[-1].slack_px <= lst._avail() + 8)

    def cap(self, t: Any) -> int:
        """The most lines a streaming reply's box grows to: the list's visible height."""
        return max(1, (self.lst._avail() - 2 * inset(t)) // linespace(t))

    def limit(self, card: Any) -> int | None:
        """The lines `card`'s text box may take: capped while it streams, else None."""
        return self.cap(card.text) if card.msg.id == self.id and card.text is not None else None

    def before_render(self) -> None:
        """A render is about to rebuild the cards: end the stream when its run ended or
        another message follows it; note where the streaming box is scrolled inside."""
        msgs = self.lst.p.messages
        if self.id is not None and (not self.lst.p.read_only or not msgs or msgs[-1].id != self.id):
            self._end()
        if not self.pending:  # (a box rebuilt and not fitted yet is not where the reader had it)
            self.view = inner_view(self.lst.cards.get(self.id or ""))

    def _end(self) -> None:
        """The reply ended: the render that follows builds its box at full height. The line at
        the top of its box is noted (`keep`: message index, the line, y in the list)."""
        lst = self.lst
        card = lst.cards.get(self.id or "")
        self.id = None
        if lst.follow or card is None or card.text is None or card not in lst.order or not card.winfo_exists():
            return  # (following, the tail stays at the bottom anyway)
        t = card.text
        top = str(t.index("@0,0"))
        info = t.dlineinfo(top)
        y = t.winfo_rooty() - lst.body.winfo_rooty() + (int(info[1]) if info else 0)
        self.keep = (card.index, line_key(t, top), y)

    def built(self, card: Any) -> None:
        """`card` was just built: a streaming reply's box is capped from the start, showing
        its tail (following) or where the reader had it."""
        t = card.text
        if card.msg.id != self.id or t is None:
            return
        t.configure(height=min(int(t.cget("height")), self.cap(t)))
        if self.lst.follow:
            t.see("end")
        elif self.view is not None:
            show_top(t, line_index(t, self.view[0]), self.view[1])
            self.pending = True

    def fitted(self, card: Any) -> None:
        """`card`'s box was fitted at its real width: scroll a streaming one back again."""
        t = card.text
        if card.msg.id != self.id or t is None:
            return
        if self.lst.follow:
            t.see("end")
        elif self.view is not None:
            show_top(t, line_index(t, self.view[0]), self.view[1])
        self.pending = False

    def settled(self, unsized: bool) -> None:
        """The list fitted its boxes (`unsized`: some not shown at their real width yet): the
        line noted when the stream ended is put back a last time, then forgotten."""
        if self.keep is not None and not unsized and not self.lst._rendering:
            self.put_back()
            self.keep = None

    def put_back(self, rendering: bool | None = None) -> None:
        """After the render that ended the stream, and again while its cards settle (the box
        fitted, the header re-arranged): scroll the list so the noted line is where it was.
        The note goes when the reader scrolls or once the boxes are fitted (`settled`).
        Not from inside a render (`rendering`: whether one is under way, else the list's)."""
        lst = self.lst
        if lst._rendering if rendering is None else rendering:
            return
        keep = self.keep
        if keep is None or lst.follow:
            self.keep = None
            return
        index, key, y = keep
        card = next((c for c in lst.order if c.index == index), None)
        if card is None or card.text is None:
            return
        lst.update_idletasks()
        t = card.text
        top = line_index(t, key)
        try:
            px = t.count("1.0", top, "update", "ypixels")
        except tk.TclError:
            return
        now = card.winfo_y() + t.winfo_y() + inset(t) + int(px[0] if isinstance(px, tuple) else px or 0)
        if now != y:
            lst.offset += now - y
            if not lst._moved_within_built():
                lst._render()
            else:
                lst.layout()
