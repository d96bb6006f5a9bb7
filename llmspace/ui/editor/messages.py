"""The message list. Rich mode is virtualised: only the cards that fit in the visible area
(plus one) exist. A card takes the height its text needs (`text_fit.py`); the list scrolls by
pixels — its position is the first card shown (`first`) and how much of it lies above the top
(`offset`) — and the scrollbar maps to message positions. "Follow" mode pins the last message
to the bottom: a run streams with it while the reader was at the bottom; a reader who scrolled
up stays where they are. A streaming reply's box is capped (`streamed_reply.py`). Cards are
dragged by their header to reorder (`drag.MessageDrag`, `self.drag`). Fast mode shows the
whole conversation as plain text in one read-only `tb.Text` (Tk handles 10 MB there).
`markdown` (View › Render Markdown) draws assistant replies as Markdown; `raw` holds the
replies (message ids) and tool results (`result:<call id>`) switched to their raw text.
Built with the editor's `card_services.CardServices` (the presenter's messages, what cards use).
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import ttkbootstrap as tb

from .card_services import CardServices
from .cards import MessageCard
from .drag import MessageDrag
from .streamed_reply import StreamedReply


class MessageList(tb.Frame):
    """Virtualised list of message cards (rich) or one plain-text view (fast)."""

    def __init__(self, master: Any, services: CardServices, mode: str = "rich", markdown: bool = True) -> None:
        super().__init__(master)
        self.services = services
        self.p = services.presenter
        self._quiet = False  # a card is reporting its own edit: it shows it already
        self.mode = mode
        self.markdown = markdown
        self.raw: set[str] = set()
        self.first = 0
        self.offset = 0  # px of the first card shown that lie above the top
        self._offset_frac: float | None = None  # the scrollbar asked for this share of the first card
        self.follow = False
        self.stream = StreamedReply(self)  # the reply a run streams into (its box is capped)
        self.cards: dict[str, MessageCard] = {}
        self.order: list[MessageCard] = []
        self.sb = tb.Scrollbar(self, orient="vertical", command=self.on_scrollbar)
        self.sb.pack(side="right", fill="y")
        self.body = tb.Frame(self)
        self.body.pack(side="left", fill="both", expand=True)
        self.plain: tb.Text | None = None
        self._height = 0
        self._width = 0
        self._rendering = False
        self._again = False
        self._pending = False
        self._fit_job: str | None = None
        self._layout_job: str | None = None
        self._fit_retries = 0
        self._placed: dict[Any, int] = {}  # card -> the height it was placed with
        self.drag = MessageDrag(self, self.p, services.ui.errors)  # drag a card by its header to reorder
        for w in (self.body,):
            w.bind("<MouseWheel>", self.on_wheel)
            w.bind("<Button-4>", self.on_wheel)
            w.bind("<Button-5>", self.on_wheel)
        self.body.bind("<Configure>", self._on_resize)

    # -- geometry ------------------------------------------------------------------------
    def _on_resize(self, e: Any) -> None:
        if self.mode != "rich":
            return
        if abs(e.height - self._height) > 20:
            self._height, self._width = e.height, e.width
            self.render()
        elif e.width != self._width:  # narrower or wider: text boxes re-fit their wrapped lines
            self._width = e.width
            if self._fit_job is None and self.order:
                self._fit_job = self.after_idle(self._fit)

    def card_width(self) -> int:
        """The width a card's head row gets (the list's width less the card's padding)."""
        w = self.body.winfo_width()
        return w - 12 if w > 50 else 0

    def request_layout(self) -> None:
        """Re-place the cards at the next idle moment (a card changed its height)."""
        if self._layout_job is None:
            self._layout_job = self.after_idle(self._layout_now)

    def _layout_now(self) -> None:
        self._layout_job = None
        if self.order:
            self.layout()
            self.stream.put_back()

    def _avail(self) -> int:
        h = self.body.winfo_height()
        return h if h > 50 else 700

    # -- rendering -----------------------------------------------------------------------
    def set_mode(self, mode: str) -> None:
        self.mode = mode
        self.render()

    def set_markdown(self, on: bool) -> None:
        """View › Render Markdown: every reply drawn again, as Markdown or as raw text."""
        self.markdown = on
        self.raw.clear()
        self.render()

    def toggle_raw(self, key: str) -> None:
        """A card's Edit / Preview: the reply (or tool result) `key` as raw text or rendered."""
        self.raw.symmetric_difference_update({key})
        self.render()

    @contextmanager
    def quietly(self) -> Iterator[None]:
        """While a card reports an edit it already shows, `message_changed` draws nothing."""
        self._quiet = True
        try:
            yield
        finally:
            self._quiet = False

    def message_changed(self) -> None:
        """One message changed: draw the list again, unless a card is reporting its own edit."""
        if not self._quiet:
            self.render()

    def clear(self) -> None:
        for c in self.order:
            c.destroy()
        self.order.clear()
        self.cards.clear()
        if self.plain is not None:
            self.plain.destroy()
            self.plain = None

    def render(self) -> None:
        """Rebuild the visible part (re-entrant calls during layout are folded into one). The
        keyboard focus in a message's text stays there (at its cursor) across the rebuild."""
        if self._rendering:
            self._again = True
            return
        self._rendering = True
        focus = self._focused_text()
        try:
            self.stream.before_render()
            self._render()
            while self._again:
                self._again = False
                self._render()
            self.stream.put_back(rendering=False)
        finally:
            self._rendering = False
            self._again = False
        if focus is not None:
            self.focus_message(*focus)

    def _focused_text(self) -> tuple[str, str] | None:
        """(message id, cursor index) when the keyboard focus is in a card's message text."""
        try:
            focus = self.focus_get()
        except (KeyError, tk.TclError):  # the focus is in a popup being destroyed
            return None
        for mid, card in self.cards.items():
            if card.text is not None and focus is card.text and card.winfo_exists():
                return mid, str(card.text.index("insert"))
        return None

    def focus_message(self, message_id: str, index: str = "end-1c") -> bool:
        """Put the keyboard focus in the text of message `message_id` (shown by now), its
        cursor at `index`; False when that message has no text box on screen."""
        card = self.cards.get(message_id)
        if card is None or card.text is None or not card.winfo_exists():
            return False
        card.text.mark_set("insert", index)
        card.text.see("insert")
        card.text.focus_set()
        return True

    def render_when_sized(self) -> None:
        """Render now when the list has its real size; else its first <Configure> renders it
        (not twice)."""
        if self.body.winfo_height() > 50:
            self.render()

    def last_text(self) -> Any:
        """The text box of the last message shown (None when no card with text is shown)."""
        for card in reversed(self.order):
            if card.text is not None and card.winfo_ismapped():
                return card.text
        return None

    def show_typed(self, message_id: str) -> None:
        """A message added by hand: raw text (it is typed in, not Markdown), shown at the end
        with the keyboard focus in it."""
        self.raw.add(message_id)
        self.scroll_to_end()
        self.focus_message(message_id)

    def request_render(self) -> None:
        """Render once at the next idle moment (many run events in one frame → one render)."""
        if not self._pending:
            self._pending = True
            self.after_idle(self._deferred)

    def _deferred(self) -> None:
        self._pending = False
        self.render()

    def _render(self) -> None:
        self.clear()
        msgs = self.p.messages
        if self.mode == "lite":
            self._render_plain(msgs)
            return
        total = len(msgs)
        if total == 0:
            self.first, self.offset = 0, 0
            self.sb.set(0, 1)
            return
        self.first = max(0, min(self.first, total - 1))
        avail = self._avail()
        used = 0
        if self.follow:
            i = total - 1
            while i >= 0 and used < avail:
                card = self._card(i, msgs[i])
                self.order.insert(0, card)
                used += self._req(card)
                i -= 1
            self.first, self.offset = i + 1, max(0, used - avail)
        else:
            self._build_above(msgs)
            i = self.first
            while i < total and used - self.offset < avail:
                card = self._card(i, msgs[i])
                h = self._req(card)
                if not self.order and self._offset_frac is not None:  # the scrollbar's share of it
                    self.offset, self._offset_frac = int(self._offset_frac * h), None
                if not self.order and self.offset >= h and i < total - 1:  # scrolled past it
                    self.offset -= h
                    self.first = i + 1
                    del self.cards[msgs[i].id]
                    card.destroy()
                    i += 1
                    continue
                self.order.append(card)
                used += h
                i += 1
            if i >= total and used - self.offset <= avail:
                if self.first > 0 or self.offset > 0:
                    # reached the end with room to spare: show the tail anchored at the bottom
                    self.follow = True
                    self._again = True
                    return
                self.follow = False  # everything fits
        self.layout()
        self._fit_soon()

    def _build_above(self, msgs: list[Any]) -> None:
        """Scrolled up past the top of the first card (a negative offset): step back through
        the cards above it, building each to learn its height."""
        while self.offset < 0 and self.first > 0:
            self.first -= 1
            card = MessageCard(self.body, self.services, self, self.first, msgs[self.first])
            self.offset += self._req(card)
            card.destroy()
        self.offset = max(0, self.offset)

    def _card(self, i: int, msg: Any) -> MessageCard:
        card = MessageCard(self.body, self.services, self, i, msg)
        self.cards[msg.id] = card
        self.stream.built(card)
        card.bind("<Configure>", self._card_configured, add=True)
        for w in (card, *card.winfo_children()):
            w.bind("<MouseWheel>", self.on_wheel, add=True)
            w.bind("<Button-4>", self.on_wheel, add=True)
            w.bind("<Button-5>", self.on_wheel, add=True)
        return card

    @staticmethod
    def _req(card: MessageCard) -> int:
        card.update_idletasks()
        return card.winfo_reqheight() + 4

    def _fit(self) -> None:
        """Once cards are shown at their real width (and whenever that width changes), let
        text boxes fit their wrapped lines (the first estimate assumed 90 characters a line)."""
        self._fit_job = None
        from .text_fit import fit

        changed = False
        unsized = False  # a card not yet shown at its real width: try again shortly
        for card in self.order:
            if not card.winfo_exists():
                continue
            if not card.winfo_ismapped():
                unsized = True
                continue
            for t, limit in ((card.text, self.stream.limit(card)), (card.thinking, 6)):
                if t is None:
                    continue
                if t.winfo_width() <= 50:
                    unsized = True
                else:
                    changed = fit(t, limit) or changed  # grows or shrinks to the wrapped lines
                    if t is card.text:
                        self.stream.fitted(card)  # a streaming reply's box: scrolled back inside
        if unsized and self._fit_retries < 20:
            self._fit_retries += 1
            self._fit_job = self.after(25, self._fit)
        else:
            self._fit_retries = 0
        if changed:
            self.update_idletasks()
            self.layout()
        self.stream.settled(unsized)

    def _card_configured(self, e: Any) -> None:
        """A card's height changed after it was placed (its text was fitted, its header
        re-arranged, a picture arrived, …): place the cards again, so none overlaps another."""
        card = e.widget
        placed = self._placed.get(card)
        if placed is not None and e.height > 1 and e.height != placed:
            self.request_layout()

    def layout(self) -> None:
        """Place the built cards from the top, `offset` px of the first above it (browsing), or
        from the bottom (follow)."""
        total = len(self.p.messages)
        avail = self._avail()
        heights = [c.winfo_reqheight() + 4 for c in self.order]
        used = sum(heights)
        self._placed = {c: h - 4 for c, h in zip(self.order, heights, strict=True)}
        blank = self.order[-1].slack_px if self.order and self.order[-1].index == total - 1 else 0
        if self.follow and used - blank > avail:
            # the tail at the bottom (a streaming reply's blank lines below it): this much of
            # the built cards lies above the top
            y = used - blank - avail
            self.offset = y
            self.first = self.order[0].index if self.order else self.first
            y = -y
        else:
            if self.follow:
                self.offset = 0
            y = -self.offset
        tops = []
        for card, h in zip(self.order, heights, strict=True):
            card.place(x=0, y=y, relwidth=1.0)
            tops.append(y)
            y += h
        if total:
            self.sb.set(*self._shown_share(tops, heights, avail, total))

    @property
    def fitting(self) -> bool:
        """Text boxes are still to be fitted (`_fit` is scheduled)."""
        return self._fit_job is not None

    def _fit_soon(self) -> None:
        """Cards were built: fit their text boxes once they are shown (`_fit`)."""
        if self._fit_job is None and self.order:
            self._fit_job = self.after_idle(self._fit)

    def _shown_share(self, tops: list[int], heights: list[int], avail: int, total: int) -> tuple[float, float]:
        """The part of the thread in view, as (first, last) shares of its messages."""
        lo = hi = None
        for card, top, h in zip(self.order, tops, heights, strict=True):
            if top + h <= 0 or top >= avail or h <= 0:
                continue
            if lo is None:
                lo = (card.index + max(0, -top) / h) / total
            hi = (card.index + min(h, avail - top) / h) / total
        if lo is None or hi is None:
            return self.first / total, (self.first + len(self.order)) / total
        return max(0.0, lo), min(1.0, hi)

    def at_end(self, added: int = 0) -> bool:
        """The reader sees the end of the last message (`StreamedReply.reader_at_end`)."""
        return self.stream.reader_at_end(added)

    def _render_plain(self, msgs: list[Any]) -> None:
        t = tb.Text(self.body, wrap="word", font="TkTextFont")
        t.tag_configure("head", font="TkHeadingFont", spacing1=8)
        t.tag_configure("tool", font="TkFixedFont")
        for m in msgs:
            t.insert("end", f"{m.role.capitalize()}\n", "head")
            if getattr(m, "thinking", None):
                t.insert("end", "(thinking) " + m.thinking + "\n")
            t.insert("end", m.text() + "\n")
            for c in getattr(m, "toolCalls", None) or []:
                out = c.output.display_text() if c.output is not None else ""
                t.insert("end", f"→ {c.input.name}({c.input.arguments})\n← {out}\n", "tool")
        t.configure(state="disabled", yscrollcommand=self.sb.set)
        self.sb.configure(command=t.yview)
        t.place(x=0, y=0, relwidth=1.0, relheight=1.0)
        t.see("end")
        self.plain = t

    # -- scrolling -----------------------------------------------------------------------
    def on_wheel(self, e: Any) -> str:
        if self.mode == "lite" and self.plain is not None:
            return ""
        delta = -1 if (getattr(e, "num", 0) == 4 or getattr(e, "delta", 0) > 0) else 1
        widget = getattr(e, "widget", None)
        if widget is not None and widget.winfo_class() == "Text":
            top, bottom = widget.yview()
            if (delta < 0 and top > 0.0) or (delta > 0 and bottom < 1.0):
                widget.yview_scroll(delta * 3, "units")  # a long message scrolls itself first
                if delta < 0:
                    self.follow = False  # the reader scrolled up: a streaming reply leaves them there
                return "break"
        self.scroll(delta)
        return "break"

    STEP_PX = 60  # one wheel notch (about three lines)

    def scroll(self, delta: int) -> None:
        """Scroll by `delta` wheel notches (negative: up)."""
        self.scroll_px(delta * self.STEP_PX)

    def scroll_px(self, dy: int) -> None:
        """Scroll the list by `dy` pixels (negative: up). Cards already built are only moved;
        others are built as they come into view."""
        if not self.p.messages or dy == 0:
            return
        if dy > 0 and self.follow:
            return  # at the bottom already
        self.follow = False
        self.stream.keep = None
        self.offset += dy
        if self._moved_within_built():
            self.layout()
        else:
            self.render()

    def _moved_within_built(self) -> bool:
        """Normalise (first, offset) within the cards built; True when they still cover the
        view (so placing them again is enough)."""
        if not self.order or self.order[0].index != self.first or self.offset < 0:
            return False
        total = len(self.p.messages)
        heights = [c.winfo_reqheight() + 4 for c in self.order]
        k = 0
        while k < len(heights) - 1 and self.offset >= heights[k]:
            self.offset -= heights[k]
            k += 1
        if k:
            for card in self.order[:k]:
                self.cards.pop(card.msg.id, None)
                card.destroy()
            del self.order[:k]
            heights = heights[k:]
            self.first = self.order[0].index
        shown = sum(heights) - self.offset
        if self.order[-1].index == total - 1 and shown <= self._avail():
            return False  # the end is in view: render anchors it at the bottom
        return shown >= self._avail()

    def on_scrollbar(self, *args: Any) -> None:
        total = len(self.p.messages)
        if not total:
            return
        if args[0] == "moveto":
            frac = max(0.0, min(1.0, float(args[1])))
            self.follow = frac >= 0.999
            pos = frac * total
            self.first = max(0, min(total - 1, int(pos)))
            self.offset, self._offset_frac = 0, pos - self.first
            self.render()
        elif args[0] == "scroll":
            n = int(args[1])
            self.scroll_px(n * max(self.STEP_PX, self._avail() - 40) if args[2] == "pages" else n * self.STEP_PX)

    def scroll_to_end(self) -> None:
        self.follow = True
        self.render()

    # -- streaming -----------------------------------------------------------------------
    def stream_text(self, message_id: str, text: str) -> None:
        if self.mode == "lite":
            if self.plain is not None:
                self.plain.configure(state="normal")
                self.plain.insert("end-1c", text)
                self.plain.configure(state="disabled")
                self.plain.see("end")
            return
        card = self.cards.get(message_id)
        if card is not None:
            self.stream.append(card, text)

    def stream_thinking(self, message_id: str, text: str) -> None:
        card = self.cards.get(message_id)
        if card is not None and self.mode == "rich":
            if card.thinking is None:
                self.render()
            else:
                card.append_thinking(text)
