"""The head row of a message card, laid out for the width the card gets so that no button
ever leaves the card: the collapse toggle and the role button on the left, the actions
(↑ ↓ + ▶ ✕, Image…, Paste image) on the right, and the token/timing line of an assistant
message between them, wrapped to the room that is left. When the actions do not fit beside
the role button they move onto rows of their own below it (right-aligned), and the stats
line gets a row of its own when it would be squeezed below a readable width. Actions too wide
for one row of the card take their `compact_text` where they have one (↻ Regenerate → ↻).

`CardHeader(master, on_height_change)` is a component of `ui/editor/cards.MessageCard`
(`card.header`): the card adds the widgets (children of the header) and calls `arrange`
with its expected width; afterwards the header follows its own `<Configure>` and calls
`on_height_change()` when its height changed (the message list then re-places its cards).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ttkbootstrap as tb

GAP = 4  # px between the left group, the stats line and the actions
MIN_STATS = 120  # px: narrower than this, the stats line gets a row of its own


class CardHeader(tb.Frame):
    """Places its children by hand (`place`) for its current width."""

    def __init__(self, master: Any, on_height_change: Callable[[], None]) -> None:
        super().__init__(master, height=1, width=1)
        self.left: list[Any] = []
        self.actions: list[Any] = []
        self.stats: Any = None
        self._on_height_change = on_height_change
        self._width = 0
        self.bind("<Configure>", self._on_configure, add=True)

    def _on_configure(self, e: Any) -> None:
        if e.width > 1 and e.width != self._width:
            before = self.winfo_reqheight()
            self.arrange(e.width)
            if self.winfo_reqheight() != before:
                self._on_height_change()

    def arrange(self, width: int) -> None:
        """Place every child for a header `width` pixels wide and request the height used."""
        if width <= 1:
            return
        self._width = width
        x = 0
        row_h = 0
        for w in self.left:
            w.place(x=x, y=0)
            x += w.winfo_reqwidth()
            row_h = max(row_h, w.winfo_reqheight())
        left_w = x
        sizes = self._action_sizes(width)
        actions_w = sum(s[0] for s in sizes)
        room = width - left_w - GAP
        stats_room = room - actions_w - GAP
        y = 0
        if actions_w <= room and (self.stats is None or stats_room >= MIN_STATS):
            ax = width - actions_w  # everything on one row, the actions right-aligned
            for w, (bw, bh) in zip(self.actions, sizes, strict=True):
                w.place(x=ax, y=0)
                ax += bw
                row_h = max(row_h, bh)
            if self.stats is not None:
                row_h = max(row_h, self._place_stats(left_w + GAP, 0, stats_room, row_h))
            y = row_h
        else:
            if self.stats is not None and room >= MIN_STATS:
                row_h = max(row_h, self._place_stats(left_w + GAP, 0, room, row_h))
                y = row_h
            elif self.stats is not None:
                y = row_h + self._place_stats(0, row_h, width, 0)
            else:
                y = row_h
            y = self._flow_actions(sizes, width, y)
        self.configure(height=max(1, y))

    def _action_sizes(self, width: int) -> list[tuple[int, int]]:
        """The actions' sizes; when they would not fit on one row of `width` px, the actions
        that have a `compact_text` (↻ Regenerate → ↻, its tooltip still says it) take it."""
        for w in self.actions:
            if getattr(w, "compact_text", None) is not None:
                full = w.__dict__.setdefault("full_text", str(w.cget("text")))
                if str(w.cget("text")) != full:
                    w.configure(text=full)
        sizes = [(int(w.winfo_reqwidth()), int(w.winfo_reqheight())) for w in self.actions]
        if sum(s[0] for s in sizes) > width:
            for w in self.actions:
                if getattr(w, "compact_text", None) is not None:
                    w.configure(text=w.compact_text)
            sizes = [(int(w.winfo_reqwidth()), int(w.winfo_reqheight())) for w in self.actions]
        return sizes

    def _place_stats(self, x: int, y: int, room: int, row_h: int) -> int:
        """Wrap the stats line to `room` pixels and place it, centred on a row `row_h` high;
        returns its height."""
        label = self.stats
        wrap = max(40, room)
        label.configure(wraplength=wrap)
        for _ in range(8):  # the label's padding comes on top of wraplength: the line's end was cut
            over = int(label.winfo_reqwidth()) - max(40, room)
            if over <= 0 or wrap <= 40:
                break
            wrap = max(40, wrap - over - 2)
            label.configure(wraplength=wrap)
        h = int(label.winfo_reqheight())
        label.place(x=x, y=y + max(0, (row_h - h) // 2), width=max(40, room))
        return h

    def _flow_actions(self, sizes: list[tuple[int, int]], width: int, y: int) -> int:
        """Put the actions on rows below `y`, as many to a row as fit, each row right-aligned."""
        row: list[tuple[Any, int, int]] = []
        used = 0

        def flush(y: int) -> int:
            h = max((bh for _w, _bw, bh in row), default=0)
            ax = max(0, width - sum(bw for _w, bw, _bh in row))
            for w, bw, _bh in row:
                w.place(x=ax, y=y)
                ax += bw
            return y + h

        for w, (bw, bh) in zip(self.actions, sizes, strict=True):
            if row and used + bw > width:
                y = flush(y)
                row, used = [], 0
            row.append((w, bw, bh))
            used += bw
        return flush(y) if row else y
