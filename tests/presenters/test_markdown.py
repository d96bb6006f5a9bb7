"""Markdown replies as runs of (text, tags): the pure half of rendering (no Tk), and the
streaming rule: only the last, still open block is parsed again."""

from __future__ import annotations

import subprocess
import sys

from llmspace.presenters.markdown import MarkdownStream, font_key, link_target, render_blocks, token_colours


def plain(blocks):
    return "".join(r.text for b in blocks for r in b)


def runs_with(blocks, tag):
    return [r for b in blocks for r in b if tag in r.tags]


def test_headings_emphasis_and_inline_code_become_tagged_runs():
    blocks = render_blocks("# Title\n\nSome *soft* and **bold** with `x = 1`.")
    assert [r.text for r in runs_with(blocks, "h1")] == ["Title\n"]
    assert [r.text for r in runs_with(blocks, "em")] == ["soft"]
    assert [r.text for r in runs_with(blocks, "strong")] == ["bold"]
    assert [r.text for r in runs_with(blocks, "code_inline")] == ["x = 1"]
    assert plain(blocks) == "Title\nSome soft and bold with x = 1.\n"


def test_lists_get_bullets_numbers_and_a_deeper_indent_when_nested():
    blocks = render_blocks("- one\n  - inner\n- two\n\n3. c\n4. d\n")
    text = plain(blocks)
    assert "• one\n" in text and "◦ inner\n" in text and "• two\n" in text
    assert "3. c\n" in text and "4. d\n" in text
    assert all("li2" in r.tags for r in blocks[0] if "inner" in r.text)


def test_a_table_is_padded_into_aligned_columns_with_a_header_rule():
    blocks = render_blocks("| name | n |\n|---|--:|\n| alpha | 1 |\n| b | **22** |\n")
    lines = plain(blocks).splitlines()
    assert len({len(line) for line in lines}) == 1, lines  # every row as wide
    assert lines[0].startswith("name ") and "─" in lines[1]
    assert lines[3].endswith("22")  # right-aligned column
    assert all("table" in r.tags for r in blocks[0])
    assert any("th" in r.tags for r in blocks[0])
    assert [r.text for r in runs_with(blocks, "strong")] == ["22"]


def test_a_fenced_code_block_is_highlighted_by_its_language():
    blocks = render_blocks("```python\ndef f():\n    return 1\n```\n")
    assert plain(blocks) == "def f():\n    return 1\n"
    assert all("code" in r.tags for r in blocks[0])
    keyword = next(r for r in blocks[0] if r.text == "def")
    assert any(t.startswith("tok:Token.Keyword") for t in keyword.tags)


def test_an_unknown_language_shows_the_code_plain():
    blocks = render_blocks("```nosuchlang\nx y\n```")
    assert plain(blocks) == "x y\n" and all(r.tags == ("code",) for r in blocks[0])


def test_links_keep_their_target_and_only_web_and_mail_links_are_followed():
    blocks = render_blocks("[docs](https://example.org/a) and [bad](javascript:alert(1))")
    links = [r for b in blocks for r in b if r.href]
    assert [(r.text, r.href) for r in links] == [("docs", "https://example.org/a")]
    assert link_target("mailto:a@b.c") == "mailto:a@b.c"
    assert link_target("file:///etc/passwd") is None


def test_an_image_shows_its_alt_text_and_is_never_loaded():
    blocks = render_blocks("![a chart](http://127.0.0.1:9/x.png)")
    img = runs_with(blocks, "image")
    assert [r.text for r in img] == ["[image: a chart]"]
    assert img[0].href == "http://127.0.0.1:9/x.png"  # a link the user may open, not a fetch


def test_raw_html_is_shown_as_text():
    assert plain(render_blocks("<b>x</b>")) == "<b>x</b>\n"


def test_fonts_follow_the_tags():
    assert font_key(("h1", "em")) == "font:body:h1:bold:italic"
    assert font_key(("code", "tok:Token.Keyword")) == "font:mono:body:normal:roman"
    assert font_key(("table", "th")) == "font:mono:body:bold:roman"


def test_token_colours_differ_between_the_light_and_the_dark_theme():
    light_bg, light = token_colours(False, ["tok:Token.Keyword"])
    dark_bg, dark = token_colours(True, ["tok:Token.Keyword"])
    assert light_bg != dark_bg and light["tok:Token.Keyword"] != dark["tok:Token.Keyword"]


def feed_all(text, step):
    stream = MarkdownStream()
    closed = []
    calls = []
    for i in range(0, len(text), step):
        upd = stream.feed(text[i:i + step])
        closed.extend(upd.closed)
        calls.append(upd)
    return stream, closed, calls


SAMPLE = ("# Report\n\nIntro with **bold** text.\n\n```python\nfor i in range(3):\n    print(i)\n```\n\n"
          "| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n  - three\n\nThe end.\n")


def test_streamed_text_renders_as_the_whole_text_does_in_any_chunking():
    whole = render_blocks(SAMPLE)
    for step in (1, 3, 7, 50):
        stream, closed, calls = feed_all(SAMPLE, step)
        assert closed + calls[-1].open == whole, step
        assert stream.blocks() == whole


def test_streaming_parses_again_only_the_last_open_block():
    _stream, _closed, calls = feed_all(SAMPLE, 2)
    # once a block closed, later ticks parse text after it only
    assert max(len(c.parsed) for c in calls) < len("| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n  - three\n\n") + 4
    assert calls[-1].parsed.startswith("The end")


def test_an_open_code_fence_is_highlighted_while_it_streams():
    stream = MarkdownStream()
    upd = stream.feed("```python\nimport os\nx = ")
    assert upd.closed == [] and "import" in "".join(r.text for r in upd.open[0])
    assert any(t.startswith("tok:Token.Keyword") for r in upd.open[0] for t in r.tags)


def test_the_module_does_not_import_tk_or_the_parsers_until_used():
    code = ("import sys, llmspace.presenters.markdown\n"
            "print(any(m in sys.modules for m in ('tkinter', 'markdown_it', 'pygments')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_line_breaks_in_a_paragraph_stay_line_breaks():
    assert plain(render_blocks("first line\nsecond line")) == "first line\nsecond line\n"


def test_the_self_check_highlights_three_languages():
    from llmspace.presenters.markdown import self_check

    assert "python/js/rust highlighted" in self_check()


def test_a_long_open_code_fence_is_lexed_again_only_from_its_last_statement():
    code = "".join(f"def f{i}(x):\n    '''doc\n{i}'''\n    return x + {i}\n" for i in range(60))
    source = "```python\n" + code
    stream = MarkdownStream()
    for i in range(0, len(source), 9):
        stream.feed(source[i:i + 9])
    assert len(stream._lexed.code) > len(code) - 80  # what is lexed again: the last function at most
    assert stream.blocks() == render_blocks(source)  # and it highlights as lexing it whole does
    closed = source + "```\n\nDone.\n"
    stream.feed("```\n\nDone.\n")
    assert stream.blocks() == render_blocks(closed)


def test_an_open_fence_is_never_lexed_again_from_inside_a_string_or_a_comment():
    source = '```python\nclass A:\n    x = """\n    text\n    more\n'
    stream = MarkdownStream()
    for i in range(0, len(source), 3):
        stream.feed(source[i:i + 3])
    assert "text" not in stream._lexed.code  # the cache stops before the open string
    assert stream.blocks() == render_blocks(source)
    c_source = "```c\nint x;\n/* a\nb\nc */\nint y;\nint z;\n"
    stream = MarkdownStream()
    for i in range(0, len(c_source), 2):
        stream.feed(c_source[i:i + 2])
    assert stream.blocks() == render_blocks(c_source)
