"""Markdown replies as runs of text with tags, for a view to show (the Tk half is
`ui/editor/markdown_text.py`). No Tk.

    render_blocks(text) -> [Block]      # a Block is a list of Run(text, tags, href); each ends with "\\n"
    plain_lines(text)                   # the shown lines without Markdown syntax (one-line summaries)
    MarkdownStream().feed(chunk)        # streaming: the blocks that closed, and the one still open
    font_key(tags)                      # "font:<body|mono>:<body|h1..h6>:<bold|normal>:<italic|roman>"
    token_colours(dark, tags)           # the code background and a colour per "tok:…" tag
    link_target(url)                    # the URL a click may open (http, https, mailto), else None
    prepare()                           # import the parser and the highlighter ahead of use (any thread)
    self_check()                        # `llmspace --self-test`: parse, highlight, both styles (a frozen build too)

Parsing is `markdown-it-py` (CommonMark, plus GFM tables and strikethrough; raw HTML is
shown as text), code fences are highlighted by Pygments by their language name; both are
imported on first use, so start-up does not pay for them. Tags: `h1`…`h6`, `em`, `strong`,
`strike`, `code_inline`, `link`, `image`, `bullet`, `li1`…`li6` (list depth), `quote`,
`code` with `tok:<Pygments token type>`, `table` with `th`, `hr`. An image is never
loaded: it shows as `[image: alt]`, a link to its address.

Streaming re-parses only the last top-level block, which is the only one new text can
change (a fence until its closing line, a list until a line that is not part of it, a
paragraph until a blank line). One CommonMark rule crosses blocks: a link reference
definition (`[x]: url`) arriving after the block that uses it is not applied while
streaming; the message is parsed whole when it is shown again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

BULLETS = ("•", "◦", "▪")
LINK_SCHEMES = ("http://", "https://", "mailto:")
HR_TEXT = "─" * 24
LIGHT_CODE_STYLE, DARK_CODE_STYLE = "default", "github-dark"
MONO_TAGS = frozenset({"code", "code_inline", "table"})


@dataclass(frozen=True)
class Run:
    """Text shown with `tags`; `href` is the address a click opens (links and images)."""

    text: str
    tags: tuple[str, ...] = ()
    href: str | None = None


Block = list[Run]


@dataclass
class StreamUpdate:
    """What one `MarkdownStream.feed` produced: blocks now final, the open (last) block
    rendered as it stands, and the source text parsed for it (the open block's text)."""

    closed: list[Block]
    open: list[Block]
    parsed: str


def link_target(url: str) -> str | None:
    """The address a click may open: web and mail links only (never file:, javascript:, …)."""
    url = url.strip()
    return url if url.lower().startswith(LINK_SCHEMES) else None


def plain_lines(text: str) -> list[str]:
    """The text as Markdown shows it, without its syntax: one string per shown line
    ("**Lisbon** sits" → "Lisbon sits", "# Title" → "Title", "- item" → "• item")."""
    shown = "".join(run.text for block in render_blocks(text) for run in block)
    return shown.splitlines()


def render_blocks(text: str) -> list[Block]:
    """The whole text as blocks of runs."""
    return [_block(group) for _start, group in _groups(_parser().parse(text))]


class MarkdownStream:
    """Text arriving in pieces: `feed` parses again only from the start of the last open block."""

    def __init__(self) -> None:
        self.source = ""
        self.closed: list[Block] = []
        self._open: list[Block] = []
        self._open_at = 0  # where the open block starts in `source`
        self._lexed = LexCache()  # an open code fence: what is highlighted already

    def open_size(self) -> int:
        """Characters of source from the open block's start: what the next `feed` parses."""
        return len(self.source) - self._open_at

    def hold(self, chunk: str) -> None:
        """Take text without parsing it (the next `feed` parses it with its own)."""
        self.source += chunk

    def feed(self, chunk: str) -> StreamUpdate:
        self.source += chunk
        tail = self.source[self._open_at:]
        groups = _groups(_parser().parse(tail))
        closed = [_block(g) for _s, g in groups[:-1]]
        if len(groups) > 1:
            self._open_at += _line_offset(tail, groups[-1][0])
            self._lexed = LexCache()
        self._open = [_block(groups[-1][1], self._lexed)] if groups else []
        self.closed.extend(closed)
        return StreamUpdate(closed, self._open, tail)

    def blocks(self) -> list[Block]:
        return self.closed + self._open


def font_key(tags: tuple[str, ...]) -> str:
    """The font a run needs, as one tag name (a view makes one font per key)."""
    family = "mono" if MONO_TAGS.intersection(tags) else "body"
    size = next((t for t in tags if len(t) == 2 and t[0] == "h" and t[1].isdigit()), "body")
    bold = "bold" if size != "body" or "strong" in tags or "th" in tags else "normal"
    italic = "italic" if "em" in tags or "image" in tags else "roman"
    return f"font:{family}:{size}:{bold}:{italic}"


def token_colours(dark: bool, tags: list[str] | tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """The code block background of the theme's Pygments style, and each `tok:` tag's colour."""
    from pygments.styles import get_style_by_name
    from pygments.token import Token, string_to_tokentype

    style = get_style_by_name(DARK_CODE_STYLE if dark else LIGHT_CODE_STYLE)
    default = style.style_for_token(Token)["color"] or ("e6edf3" if dark else "1f2328")
    out = {}
    for tag in tags:
        colour = style.style_for_token(string_to_tokentype(tag[4:]))["color"] if tag.startswith("tok:") else None
        out[tag] = "#" + (colour or default)
    return style.background_color, out


def prepare() -> None:
    """Import markdown-it-py and Pygments (the parser, both styles, a common lexer) now."""
    _parser().parse("# x\n\n| a |\n|---|\n| b |\n")
    token_colours(False, ("tok:Token.Keyword",))
    token_colours(True, ("tok:Token.Keyword",))
    for lang in ("python", "text"):
        list(_lexer(lang).get_tokens("def f(x):\n    return 'x'  # y\n"))  # compiles its patterns


def self_check() -> str:
    """Render a table and fences in three languages and load both code styles; what worked, or
    raises RuntimeError naming what did not (a frozen build without a lexer or a style)."""
    blocks = render_blocks("| a |\n|---|\n| 1 |\n\n```python\ndef f(): pass\n```\n\n```js\nlet x = 1;\n```\n\n"
                           "```rust\nfn main() {}\n```\n")
    if len(blocks) != 4 or not all("table" in r.tags for r in blocks[0]):
        raise RuntimeError("the Markdown parser did not read a table")
    plain = [n for n, b in zip(("python", "js", "rust"), blocks[1:], strict=True)
             if not any(t.startswith("tok:Token.Keyword") for r in b for t in r.tags)]
    if plain:
        raise RuntimeError("no highlighting for " + ", ".join(plain))
    token_colours(False, ("tok:Token.Keyword",))
    token_colours(True, ("tok:Token.Keyword",))
    return "tables, python/js/rust highlighted, light and dark code styles"


# -- parsing -------------------------------------------------------------------------------
_MD: Any = None


def _parser() -> Any:
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt

        _MD = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    return _MD


def _groups(tokens: list[Any]) -> list[tuple[int, list[Any]]]:
    """Top-level blocks: (first source line, their tokens)."""
    out: list[tuple[int, list[Any]]] = []
    depth = 0
    for tok in tokens:
        if depth == 0:
            out.append((tok.map[0] if tok.map else 0, []))
        out[-1][1].append(tok)
        depth += tok.nesting
    return out


def _line_offset(text: str, line: int) -> int:
    pos = 0
    for _ in range(line):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    return pos


@lru_cache(maxsize=64)
def _lexer(lang: str) -> Any:
    if not lang:
        return None
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(lang, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@dataclass
class _Out:
    runs: list[Run] = field(default_factory=list)

    def add(self, text: str, tags: tuple[str, ...], href: str | None = None) -> None:
        if not text:
            return
        last = self.runs[-1] if self.runs else None
        if last is not None and last.tags == tags and last.href == href:
            self.runs[-1] = Run(last.text + text, tags, href)
        else:
            self.runs.append(Run(text, tags, href))


@dataclass
class LexCache:
    """The start of an open code fence already highlighted: `code` up to a line where no
    token continues (so lexing may start again there), and its runs (drawn with `tags`)."""

    key: tuple[str, tuple[str, ...]] = ("", ())  # language, the fence's tags
    code: str = ""
    runs: list[Run] = field(default_factory=list)


def _block(tokens: list[Any], lexed: LexCache | None = None) -> Block:
    out = _Out()
    lists: list[int | None] = []  # None: bullets; an int: the ordered list's next number
    heading: str | None = None
    quote = 0
    prefix: Run | None = None
    table: list[list[tuple[str, bool, list[Run]]]] | None = None
    align = ""

    def base() -> tuple[str, ...]:
        tags: tuple[str, ...] = (heading,) if heading else ()
        if lists:
            tags += (f"li{min(len(lists), 6)}",)
        if quote:
            tags += ("quote",)
        return tags

    for tok in tokens:
        kind = tok.type
        if kind == "heading_open":
            heading = tok.tag
        elif kind in ("heading_close", "paragraph_close") and table is None:
            out.add("\n", base())
            heading = None if kind == "heading_close" else heading
        elif kind == "inline":
            if table is not None:
                cell = _Out()
                _inline(cell, tok.children or [], ("table", "th") if table[-1] and table[-1][-1][1] else ("table",))
                text, is_head, _ = table[-1][-1]
                table[-1][-1] = (text, is_head, cell.runs)
                continue
            if prefix is not None:
                out.add(prefix.text, prefix.tags)
                prefix = None
            _inline(out, tok.children or [], base())
        elif kind == "bullet_list_open":
            lists.append(None)
        elif kind == "ordered_list_open":
            lists.append(int(tok.attrGet("start") or 1))
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            if prefix is not None:  # an item whose first line is a nested list
                out.add(prefix.text + "\n", prefix.tags)
            mark = f"{tok.info}. " if tok.info else f"{BULLETS[(len(lists) - 1) % len(BULLETS)]} "
            prefix = Run(mark, (*base(), "bullet"))
        elif kind == "list_item_close" and prefix is not None:
            out.add(prefix.text + "\n", prefix.tags)
            prefix = None
        elif kind == "blockquote_open":
            quote += 1
        elif kind == "blockquote_close":
            quote -= 1
        elif kind in ("fence", "code_block"):
            _code(out, tok.content, tok.info.split()[0] if tok.info.strip() else "", base(), lexed)
        elif kind == "hr":
            out.add(HR_TEXT + "\n", (*base(), "hr"))
        elif kind == "html_block":
            out.add(tok.content if tok.content.endswith("\n") else tok.content + "\n", base())
        elif kind == "table_open":
            table = []
        elif kind == "tr_open" and table is not None:
            table.append([])
        elif kind in ("th_open", "td_open") and table is not None:
            style = tok.attrGet("style") or ""
            align = "right" if "right" in str(style) else ("center" if "center" in str(style) else "left")
            table[-1].append((align, kind == "th_open", []))
        elif kind == "table_close" and table is not None:
            _table(out, table, base())
            table = None
    runs = out.runs
    if runs and not runs[-1].text.endswith("\n"):
        out.add("\n", runs[-1].tags)
    return out.runs


def _inline(out: _Out, children: list[Any], base: tuple[str, ...]) -> None:
    marks: list[str] = []
    href: str | None = None
    linked = False
    for tok in children:
        kind = tok.type
        tags = base + tuple(marks) + (("link",) if linked else ())
        if kind in ("text", "html_inline"):
            out.add(tok.content, tags, href)
        elif kind == "code_inline":
            out.add(tok.content, (*tags, "code_inline"), href)
        elif kind in ("softbreak", "hardbreak"):  # a reply's line breaks stay (as chat apps show them)
            out.add("\n", tags, href)
        elif kind in ("em_open", "strong_open", "s_open"):
            marks.append({"em_open": "em", "strong_open": "strong", "s_open": "strike"}[kind])
        elif kind in ("em_close", "strong_close", "s_close") and marks:
            marks.pop()
        elif kind == "link_open":
            href = link_target(str(tok.attrGet("href") or ""))
            linked = href is not None
        elif kind == "link_close":
            href, linked = None, False
        elif kind == "image":
            alt = "".join(c.content for c in tok.children or []) or tok.content
            out.add(f"[image: {alt}]" if alt else "[image]", (*base, *marks, "image"),
                    link_target(str(tok.attrGet("src") or "")))


_TOKEN_TAGS: dict[Any, str] = {}


def _token_tag(ttype: Any) -> str:
    tag = _TOKEN_TAGS.get(ttype)
    if tag is None:
        tag = _TOKEN_TAGS[ttype] = f"tok:{ttype}"
    return tag


def _code(out: _Out, code: str, lang: str, base: tuple[str, ...], lexed: LexCache | None = None) -> None:
    tags = (*base, "code")
    lang = lang.lower()
    lexer = _lexer(lang)
    if lexer is None:
        out.add(code, tags)
    elif lexed is None:
        for ttype, value in lexer.get_tokens(code):
            out.add(value, (*tags, _token_tag(ttype)))
    else:  # the same Run objects every tick for what was lexed before: few allocations
        runs = _streamed_code(lexer, code, (lang, tags), lexed)
        if runs:
            out.add(runs[0].text, runs[0].tags)
            out.runs.extend(runs[1:])
    if not code.endswith("\n"):
        out.add("\n", tags)


def _streamed_code(lexer: Any, code: str, key: tuple[str, tuple[str, ...]], lexed: LexCache) -> list[Run]:
    """The runs of a fence still streaming: only the code after the cached start is lexed,
    and the cache moves to the start of the last line but one that no string or comment runs
    across (a fresh lexer can start there). Once the fence closes it is lexed whole."""
    from pygments.token import Comment, String

    if lexed.key != key or not code.startswith(lexed.code):
        lexed.key, lexed.code, lexed.runs = key, "", []
    tags = key[1]
    out = _Out(list(lexed.runs))
    last_line = code.rfind("\n", 0, len(code) - 1) + 1
    offset = cut = len(lexed.code)
    before: Any = None  # the type of the token that ended the previous line
    for ttype, value in lexer.get_tokens(code[cut:]):
        if (cut < offset < last_line and code[offset - 1] == "\n" and before is not None
                and not (before in String or before in Comment or ttype in String or ttype in Comment)):
            cut, lexed.runs = offset, list(out.runs)
        out.add(value, (*tags, _token_tag(ttype)))
        offset += len(value)
        before = ttype
    lexed.code = code[:cut]
    return out.runs


def _table(out: _Out, rows: list[list[tuple[str, bool, list[Run]]]], base: tuple[str, ...]) -> None:
    columns = max((len(r) for r in rows), default=0)
    widths = [0] * columns
    for row in rows:
        for i, (_a, _h, runs) in enumerate(row):
            widths[i] = max(widths[i], sum(len(r.text) for r in runs))
    sep = (*base, "table")
    for n, row in enumerate(rows):
        for i in range(columns):
            align, head, runs = row[i] if i < len(row) else ("left", False, [])
            gap = widths[i] - sum(len(r.text) for r in runs)
            before = gap if align == "right" else (gap // 2 if align == "center" else 0)
            cell = (*base, "table", "th") if head else sep
            if i:
                out.add(" │ ", sep)
            out.add(" " * before, cell)
            for r in runs:
                out.add(r.text, (*base, *r.tags), r.href)
            out.add(" " * (gap - before), cell)
        out.add("\n", sep)
        if n == 0 and row and row[0][1]:
            out.add("─┼─".join("─" * w for w in widths) + "\n", sep)
