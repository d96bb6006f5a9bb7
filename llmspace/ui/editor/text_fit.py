"""The height of a message's text box: the lines its content needs, measured in pixels.

A message takes the height its text needs (the message list scrolls, not each message). Tk
sizes a Text in lines of its own font, so a box is sized from the pixel height of its wrapped
content (`count -update -ypixels`) over one line: a heading drawn in a larger font is never
clipped through its glyphs. `MAX_TEXT_PX` bounds a box (an X11 window stops at 32,767 px);
only a longer text scrolls inside its box. A box is guessed before it is shown, fitted once
shown at its real width, and grown while a reply streams into it — then only up to the
list's visible height (`grow`): it gets its full height once, when the reply has ended.
"""

from __future__ import annotations

import tkinter.font as tkfont
from typing import Any

MAX_TEXT_PX = 16000  # about 800 lines of body text
GUESS_CHARS = 90  # characters a wrapped line holds, before the box is shown at its real width


def linespace(t: Any) -> int:
    """The height of one line of the box's font, in pixels."""
    font = t.cget("font")
    try:
        return max(1, int(tkfont.nametofont(str(font), root=t).metrics("linespace")))
    except Exception:
        return max(1, int(tkfont.Font(root=t, font=font).metrics("linespace")))


def max_lines(t: Any) -> int:
    """The most lines a box grows to (`MAX_TEXT_PX`)."""
    return max(1, MAX_TEXT_PX // linespace(t))


def guess_lines(text: str, width_chars: int = GUESS_CHARS, limit: int | None = None) -> int:
    """The lines a text needs at `width_chars` characters a line (before it is shown)."""
    cap = limit or MAX_TEXT_PX // 16
    lines = 0
    for line in text.split("\n"):
        lines += 1 + len(line) // max(20, width_chars)
        if lines >= cap:
            return cap
    return max(1, lines)


def content_lines(t: Any) -> int:
    """The lines (of the box's font) the box's wrapped content needs: its pixel height, so a
    taller heading line counts for more than one. Before the box has its real width, a guess."""
    if t.winfo_width() <= 50:
        return guess_lines(str(t.get("1.0", "end-1c")))
    try:
        px = t.count("1.0", "end", "update", "ypixels")
        pixels = int(px[0] if isinstance(px, tuple) else px or 0)
        return max(1, -(-pixels // linespace(t)))
    except Exception:
        try:
            shown = t.count("1.0", "end", "displaylines")
            return max(1, int(shown[0] if isinstance(shown, tuple) else shown or 1))
        except Exception:
            return max(1, int(str(t.index("end-1c")).split(".")[0]))


def fit(t: Any, limit: int | None = None) -> bool:
    """Set a shown box's height to the lines its content needs (1..limit, by default
    `max_lines`); True when it changed. A box that holds it all shows it from its top."""
    cap = limit or max_lines(t)
    lines = content_lines(t)
    want = max(1, min(cap, lines))
    changed = want != int(t.cget("height"))
    if changed:
        t.configure(height=want)
    if lines <= cap:
        t.yview_moveto(0.0)  # all of it fits: no line scrolled away above the top
    return changed


def grow(t: Any, limit: int | None = None, follow: bool = True) -> tuple[bool, int]:
    """While text streams in: let the box grow to its content, never shrink, up to `limit`
    lines (the list passes its visible height: a Tk Text lays out all its lines again when its
    height changes, so a box as tall as a long reply stalls the stream). It grows by half again
    at a time, so it may hold blank lines below the text: returns (whether the height changed,
    the blank lines at its bottom), which the list keeps below the bottom edge while it follows
    the tail. A box at its limit is not measured again; it scrolls inside, keeping its newest
    line in view when `follow` (the reader is at the end). `fit` sets the full height once the
    reply has ended."""
    cap = limit or max_lines(t)
    height = int(t.cget("height"))
    if height >= cap and t.yview()[1] < 1.0:  # fuller than its box: no blank lines, no change
        if follow:
            t.see("end")
        return False, 0
    lines = content_lines(t)
    if lines > height and height < cap:
        t.configure(height=min(cap, lines + max(4, lines // 2)))
    new = int(t.cget("height"))
    if lines > new:
        if follow:
            t.see("end")
    elif t.yview()[0] > 0.0:
        t.yview_moveto(0.0)
    return new != height, max(0, new - lines)


def inset(t: Any) -> int:
    """The pixels between a box's edge and its text (border, focus ring, padding)."""
    return sum(int(float(str(t.cget(k)))) for k in ("borderwidth", "highlightthickness", "pady"))


def top_line(t: Any) -> tuple[str, int]:
    """The index at the top of a box scrolled inside, and how many pixels of its line lie
    above the top."""
    top = str(t.index("@0,0"))
    info = t.dlineinfo(top)
    return top, max(0, inset(t) - int(info[1])) if info else 0


def show_top(t: Any, index: str, above: int = 0) -> None:
    """Scroll a box inside so the line holding `index` is at its top, `above` pixels of it
    above the top (`top_line`)."""
    t.yview(index)
    if above > 0:
        t.yview_scroll(above, "pixels")
