"""A reply shown as Markdown in a read-only Tk Text: the runs of `presenters/markdown.py`
inserted with Text tags (fonts per `font_key`, code colours from the theme's Pygments style,
links that open through `ui/reveal.confirm_open`).

    md = MarkdownText(text_widget, open_link)   # open_link(url): ask, then open the browser
    md.show(source)                             # the whole reply
    md.append(chunk)                            # streaming: redraws only the open (last) block
    warm_up(pump)                               # a reply is about to stream: import the libraries now

Blocks are separated by a short blank line (tag `gap`). The Text stays disabled (select and
copy work); its `edit_modified` flag is cleared after each draw, so nothing takes the
rendered text for an edit.
"""

from __future__ import annotations

import tkinter as tk
import tkinter.font as tkfont
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ...presenters.markdown import Block, MarkdownStream, Run, font_key, prepare, token_colours
from .. import theme as themes

HEADING_SCALE = {"h1": 1.6, "h2": 1.35, "h3": 1.15, "h4": 1.05, "h5": 1.0, "h6": 1.0}
OPEN_MARK = "md_open"
GAP = Run("\n", ("gap",))
BIG_OPEN, BIG_OPEN_MS = 4000, 100  # an open block this long is redrawn at most every 100 ms
_warming: Future[None] | None = None


def _font(widget: Any, key: str) -> tkfont.Font:
    _, family, size, weight, slant = key.split(":")
    style: dict[str, Any] = {"weight": weight, "slant": slant}
    base = tkfont.nametofont("TkFixedFont" if family == "mono" else "TkTextFont", root=widget)
    actual = base.actual()
    points = int(actual["size"]) or 10
    scaled = round(abs(points) * HEADING_SCALE.get(size, 1.0)) * (1 if points > 0 else -1)
    # kept on the Tk root (a Tk font dies with its object, and with its interpreter)
    fonts: dict[tuple[str, int, str], tkfont.Font] = widget._root().__dict__.setdefault("_markdown_fonts", {})
    cache_key = (key, points, str(actual["family"]))
    font = fonts.get(cache_key)
    if font is None:
        font = fonts[cache_key] = tkfont.Font(root=widget, family=actual["family"], size=scaled, **style)
    return font


def warm_up(pump: Any) -> Future[None]:
    """Import the parser and the highlighter on a worker, once per process: called when a
    reply is about to stream, so its first tick does not pay for the imports (the model's
    first token takes longer than they do). The same future every time."""
    global _warming
    if _warming is None:
        _warming = pump.run_in_worker(prepare, name="markdown-warm-up")
    return _warming


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
        self._open_runs: list[Run] = []  # the open block as drawn
        self._held: str | None = None  # the after() job that draws text held back
        self._full: dict[tuple[str, ...], tuple[str, ...]] = {}  # a run's tags → its Text tags (with the font)
        self._wide: bool | None = None  # does this Tk count U+10000… as two index units?
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
        self.code_bg = ""  # the code box's colour, from the Pygments style once code shows
        inline_bg = "#2b3035" if self.dark else "#eef0f2"
        t.tag_configure("gap", font=(tkfont.nametofont("TkTextFont", root=t).actual()["family"], 4))
        t.tag_configure("link", foreground=link, underline=True)
        t.tag_configure("image", foreground=muted)
        t.tag_configure("bullet", foreground=muted)
        t.tag_configure("quote", foreground=muted, lmargin1=14, lmargin2=14)
        t.tag_configure("hr", foreground=muted)
        t.tag_configure("strike", overstrike=True)
        t.tag_configure("code_inline", background=inline_bg, foreground=themes.best_on(t, inline_bg))
        for depth in range(1, 7):
            t.tag_configure(f"li{depth}", lmargin1=4 + 18 * (depth - 1), lmargin2=18 * depth)
        for name in ("h1", "h2", "h3"):
            t.tag_configure(name, spacing1=4)

    def _ensure(self, tags: tuple[str, ...]) -> None:
        """Configure the font and token-colour tags a run needs, once each."""
        new = [tag for tag in tags if tag not in self._tags]
        if not new:
            return
        if "code" in new or (not self.code_bg and any(tag.startswith("tok:") for tag in new)):
            self.code_bg, _ = token_colours(self.dark, ())
            self.text.tag_configure("code", background=self.code_bg, foreground=themes.best_on(self.text, self.code_bg),
                                    lmargin1=8, lmargin2=8)
            self._tags.add("code")
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
        if self._held is not None:
            t.after_cancel(self._held)
            self._held = None
        t.configure(state="normal")
        t.delete("1.0", "end")
        t.mark_set(OPEN_MARK, "1.0")
        t.mark_gravity(OPEN_MARK, "left")
        self.stream = MarkdownStream()
        self.hrefs.clear()
        self._closed_hrefs = 0
        self._blocks = 0
        self._open_runs = []
        self._draw(self.stream.feed(source) if source else None)

    def append(self, chunk: str) -> None:
        """Streamed text: the blocks that closed are drawn once, the open one again. An open
        block past BIG_OPEN characters is parsed again at most every BIG_OPEN_MS (each parse
        of it allocates enough to set off garbage collections)."""
        if self.stream.open_size() + len(chunk) > BIG_OPEN:
            self.stream.hold(chunk)
            if self._held is None:
                self._held = self.text.after(BIG_OPEN_MS, self._flush)
            return
        self.text.configure(state="normal")
        self._draw(self.stream.feed(chunk))

    def _flush(self) -> None:
        self._held = None
        if self.text.winfo_exists():
            self.text.configure(state="normal")
            self._draw(self.stream.feed(""))
            self.text.see("end")

    def _draw(self, update: Any) -> None:
        t = self.text
        if update is not None:
            if update.closed:
                del self.hrefs[self._closed_hrefs:]
                t.delete(OPEN_MARK, "end-1c")
                self._put(self._runs(update.closed, closed=True))
                self._blocks += len(update.closed)
                self._closed_hrefs = len(self.hrefs)
                t.mark_set(OPEN_MARK, "end-1c")
                self._open_runs = []
            self._redraw_open(self._runs(update.open, closed=False))
        t.edit_modified(False)
        t.configure(state="disabled")

    def _redraw_open(self, runs: list[Run]) -> None:
        """Replace the open block's runs, touching only what changed since the last tick
        (while a block streams, its last run grows and new ones follow; a code fence keeps
        the same Run objects for what it lexed before)."""
        old = self._open_runs
        k = 0
        n = min(len(old), len(runs))
        while k < n and (old[k] is runs[k] or old[k] == runs[k]):
            k += 1
        keep = sum(self._units(r.text) for r in old[:k])
        del self.hrefs[self._closed_hrefs + sum(1 for r in old[:k] if r.href is not None):]
        rest = runs[k:]
        skip = 0
        if k < len(old) and rest and old[k].tags == rest[0].tags and old[k].href == rest[0].href \
                and rest[0].text.startswith(old[k].text):
            keep += self._units(old[k].text)  # the run grew: keep what is drawn, add its new end
            skip = len(old[k].text)
        self.text.delete(f"{OPEN_MARK} + {keep} chars" if keep else OPEN_MARK, "end-1c")
        self._put(rest, skip)
        self._open_runs = runs

    def _units(self, text: str) -> int:
        """`text`'s length in Text indices (Tk 8.6 counts a character beyond U+FFFF as two)."""
        if text.isascii():
            return len(text)
        if self._wide is None:
            probe = "\U0001F600"
            self._wide = int(self.text.tk.call("string", "length", probe)) == 2
        return len(text.encode("utf-16-le")) // 2 if self._wide else len(text)

    def _put(self, runs: list[Run], skip: int = 0) -> None:
        """Insert `runs` at the end (the first one without its first `skip` characters)."""
        args: list[Any] = []
        for n, run in enumerate(runs):
            text = run.text[skip:] if n == 0 and skip else run.text
            tags = self._full.get(run.tags)
            if tags is None:
                tags = self._full[run.tags] = (*run.tags, font_key(run.tags))
                self._ensure(tags)
            if run.href is not None:
                tags = (*tags, f"href:{len(self.hrefs)}")
                self.hrefs.append(run.href)
            if text:
                args += [text, tags]
        if args:
            self.text.insert("end-1c", *args)

    def _runs(self, blocks: list[Block], closed: bool) -> list[Run]:
        """The blocks' runs, a `gap` line before each block but the reply's first."""
        out: list[Run] = []
        drawn = self._blocks
        for block in blocks:
            if drawn:
                out.append(GAP)
            drawn += 1
            if not closed and block is blocks[-1] and block and block[-1].text.endswith("\n"):
                # the Text's own last newline ends the reply: no blank line under it
                out += block[:-1]
                out.append(Run(block[-1].text[:-1], block[-1].tags, block[-1].href))
            else:
                out += block
        return out

    def _click(self, event: Any) -> str:
        index = self.text.index(f"@{event.x},{event.y}")
        for tag in self.text.tag_names(index):
            if tag.startswith("href:"):
                self.open_link(self.hrefs[int(tag[5:])])
                return "break"
        return ""
