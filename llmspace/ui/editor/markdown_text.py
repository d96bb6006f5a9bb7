"""A reply shown as Markdown in a read-only Tk Text: the runs of `presenters/markdown.py`
inserted with Text tags (fonts per `font_key`, code colours from the theme's Pygments style,
links that open through `ui/reveal.confirm_open`).

    md = MarkdownText(text_widget, open_link)   # open_link(url): ask, then open the browser
    md.show(source)                             # the whole reply
    md.append(chunk)                            # streaming: redraws only the open (last) block

Blocks are separated by a short blank line (tag `gap`). The Text stays disabled (select and
copy work); its `edit_modified` flag is cleared after each draw, so nothing takes the
rendered text for an edit.
"""

from __future__ import annotations

import tkinter as tk
import tkinter.font as tkfont
from collections.abc import Callable
from typing import Any

from ...presenters.markdown import Block, MarkdownStream, Run, font_key, token_colours
from .. import theme as themes

HEADING_SCALE = {"h1": 1.6, "h2": 1.35, "h3": 1.15, "h4": 1.05, "h5": 1.0, "h6": 1.0}
OPEN_MARK = "md_open"
_FONTS: dict[tuple[str, str, int, int], tkfont.Font] = {}  # kept alive: Tk fonts die with their object


def _font(widget: Any, key: str) -> tkfont.Font:
    _, family, size, weight, slant = key.split(":")
    style: dict[str, Any] = {"weight": weight, "slant": slant}
    base = tkfont.nametofont("TkFixedFont" if family == "mono" else "TkTextFont", root=widget)
    actual = base.actual()
    points = int(actual["size"]) or 10
    scaled = round(abs(points) * HEADING_SCALE.get(size, 1.0)) * (1 if points > 0 else -1)
    cache_key = (str(widget.winfo_toplevel()), key, points, hash(actual["family"]))
    font = _FONTS.get(cache_key)
    if font is None:
        font = _FONTS[cache_key] = tkfont.Font(root=widget, family=actual["family"], size=scaled, **style)
    return font


class MarkdownText:
    """Markdown drawn into one Text widget, whole or as it streams."""

    def __init__(self, text: tk.Text, open_link: Callable[[str], Any]) -> None:
        self.text = text
        self.open_link = open_link
        self.stream = MarkdownStream()
        self.hrefs: list[str] = []  # the addresses of `href:<n>` tags
        self._closed_hrefs = 0  # of them, in closed blocks
        self._tags: set[str] = set()
        self._blocks = 0  # closed blocks drawn
        self._style()
        text.tag_bind("link", "<Enter>", lambda e: text.configure(cursor="hand2"))
        text.tag_bind("link", "<Leave>", lambda e: text.configure(cursor=""))
        text.tag_bind("link", "<Button-1>", self._click)
        text.tag_bind("image", "<Button-1>", self._click)

    # -- look ----------------------------------------------------------------------------
    def _style(self) -> None:
        t = self.text
        import ttkbootstrap as tb

        colors = tb.Style().colors
        bg = colors.inputbg
        self.dark = themes.luminance(t, bg) < 0.2
        muted = themes.palette(t)["muted"]
        link = themes.readable(t, colors.primary if not self.dark else colors.info, bg)
        code_bg, _ = token_colours(self.dark, ())
        self.code_bg = code_bg
        self.code_fg = themes.best_on(t, code_bg)
        inline_bg = "#2b3035" if self.dark else "#eef0f2"
        t.tag_configure("gap", font=(tkfont.nametofont("TkTextFont", root=t).actual()["family"], 4))
        t.tag_configure("link", foreground=link, underline=True)
        t.tag_configure("image", foreground=muted)
        t.tag_configure("bullet", foreground=muted)
        t.tag_configure("quote", foreground=muted, lmargin1=14, lmargin2=14)
        t.tag_configure("hr", foreground=muted)
        t.tag_configure("strike", overstrike=True)
        t.tag_configure("code_inline", background=inline_bg, foreground=themes.best_on(t, inline_bg))
        t.tag_configure("code", background=code_bg, foreground=self.code_fg, lmargin1=8, lmargin2=8)
        for depth in range(1, 7):
            t.tag_configure(f"li{depth}", lmargin1=4 + 18 * (depth - 1), lmargin2=18 * depth)
        for name in ("h1", "h2", "h3"):
            t.tag_configure(name, spacing1=4)

    def _ensure(self, tags: tuple[str, ...]) -> None:
        """Configure the font and token-colour tags a run needs, once each."""
        new = [tag for tag in tags if tag not in self._tags]
        if not new:
            return
        tokens = [tag for tag in new if tag.startswith("tok:")]
        if tokens:
            _, colours = token_colours(self.dark, tokens)
            for tag, colour in colours.items():
                self.text.tag_configure(tag, foreground=themes.readable(self.text, colour, self.code_bg))
        for tag in new:
            if tag.startswith("font:"):
                self.text.tag_configure(tag, font=_font(self.text, tag))
        self._tags.update(new)

    # -- drawing -------------------------------------------------------------------------
    def show(self, source: str) -> None:
        """Draw `source` whole (it may go on with `append`)."""
        t = self.text
        t.configure(state="normal")
        t.delete("1.0", "end")
        t.mark_set(OPEN_MARK, "1.0")
        t.mark_gravity(OPEN_MARK, "left")
        self.stream = MarkdownStream()
        self.hrefs.clear()
        self._closed_hrefs = 0
        self._blocks = 0
        self._draw(self.stream.feed(source) if source else None)

    def append(self, chunk: str) -> None:
        """Streamed text: the blocks that closed are drawn once, the open one again."""
        self.text.configure(state="normal")
        self._draw(self.stream.feed(chunk))

    def _draw(self, update: Any) -> None:
        t = self.text
        if update is not None:
            t.delete(OPEN_MARK, "end-1c")
            del self.hrefs[self._closed_hrefs:]
            self._insert(update.closed)
            self._blocks += len(update.closed)
            self._closed_hrefs = len(self.hrefs)
            t.mark_set(OPEN_MARK, "end-1c")
            self._insert(update.open, closed=False)
        t.edit_modified(False)
        t.configure(state="disabled")

    def _insert(self, blocks: list[Block], closed: bool = True) -> None:
        args: list[Any] = []
        drawn = self._blocks
        for block in blocks:
            if drawn:
                args += ["\n", ("gap",)]
            drawn += 1
            if not closed and block is blocks[-1] and block and block[-1].text.endswith("\n"):
                # the Text's own last newline ends the reply: no blank line under it
                block = [*block[:-1], Run(block[-1].text[:-1], block[-1].tags, block[-1].href)]
            for run in block:
                if not run.text:
                    continue
                tags = (*run.tags, font_key(run.tags))
                if run.href is not None:
                    tags += (f"href:{len(self.hrefs)}",)
                    self.hrefs.append(run.href)
                self._ensure(tags)
                args += [run.text, tags]
        if args:
            self.text.insert("end-1c", *args)

    def _click(self, event: Any) -> str:
        index = self.text.index(f"@{event.x},{event.y}")
        for tag in self.text.tag_names(index):
            if tag.startswith("href:"):
                self.open_link(self.hrefs[int(tag[5:])])
                return "break"
        return ""
