"""Assistant replies drawn as Markdown in a real window: headings, emphasis, lists, tables and
highlighted code as Text tags readable in both themes; drawn while streaming; per-message
Edit shows the raw text, Copy copies the raw Markdown; View › Render Markdown switches all
replies; links open only after the confirm dialog; a remote image is never fetched. Tool
results: web search hits, todo checklists, folded JSON."""

from __future__ import annotations

import http.server
import threading

import orjson
import pytest

from llmspace.jsonio import write_bytes_atomic
from llmspace.ui.theme import contrast_ratio
from tests.ui.conftest import pump_until

REPLY = ("# Plan\n\nSome *soft* and **bold** text, see [the docs](https://example.org/docs).\n\n"
         "```python\ndef f():\n    return 1\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n")


class CountingServer(http.server.ThreadingHTTPServer):
    hits = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.hits += 1  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *a) -> None:
        pass


@pytest.fixture
def image_server():
    srv = CountingServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def open_reply(window, app, text: str, tool_calls=None, stem: str = "md"):
    msg = {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": text}]}
    if tool_calls:
        msg["toolCalls"] = tool_calls
    write_bytes_atomic(app.workspace.root / f"{stem}.json", orjson.dumps({"title": stem, "context": {"messages": [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "question"}]}, msg]}}))
    window.tree_view.refresh()
    ed = window.open_thread(f"{stem}.json")
    ed.list.follow = False
    ed.list.first = 0
    ed.list.render()
    window.root.update()
    return ed


def shown(card) -> str:
    return card.text.get("1.0", "end-1c")


def tagged(text_widget, tag: str) -> str:
    ranges = text_widget.tag_ranges(tag)
    return "".join(text_widget.get(ranges[i], ranges[i + 1]) for i in range(0, len(ranges), 2))


def test_a_reply_is_drawn_as_markdown_with_tags_for_each_element(window, app):
    card = open_reply(window, app, REPLY).list.cards["a1"]
    t = card.text
    text = shown(card)
    assert text.startswith("Plan\n") and "**" not in text and "```" not in text and "# " not in text
    assert tagged(t, "h1") == "Plan\n"
    assert tagged(t, "em") == "soft" and tagged(t, "strong") == "bold"
    assert tagged(t, "link") == "the docs"
    assert "def f():" in tagged(t, "code")
    assert any(n.startswith("tok:Token.Keyword") for n in t.tag_names(t.search("def", "1.0")))
    assert "• one" in text and "• two" in text
    rows = [line for line in text.splitlines() if "│" in line]
    assert len(rows) == 2 and rows[0].startswith("a │ b")
    assert str(t.cget("state")) == "disabled"
    assert ed_text_unchanged(app, "md.json", REPLY)


def ed_text_unchanged(app, rel: str, text: str) -> bool:
    data = orjson.loads((app.workspace.root / rel).read_bytes())
    return data["context"]["messages"][1]["content"][0]["text"] == text


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_code_links_and_muted_text_are_readable_in_both_themes(window, app, theme):
    window.appearance.theme_var.set(theme)
    window.appearance.apply_theme()
    try:
        card = open_reply(window, app, REPLY, stem=f"md-{theme}").list.cards["a1"]
        t, root = card.text, window.root
        code_bg = t.tag_cget("code", "background")
        for name in t.tag_names():
            if name.startswith("tok:") and t.tag_cget(name, "foreground"):
                assert contrast_ratio(root, t.tag_cget(name, "foreground"), code_bg) >= 4.5, (theme, name)
        bg = t.cget("background")
        for name in ("link", "bullet"):
            assert contrast_ratio(root, t.tag_cget(name, "foreground"), bg) >= 4.5, (theme, name)
        assert (contrast_ratio(root, "#000000", code_bg) > 10) == (theme == "light")  # a dark code box in dark
    finally:
        window.appearance.theme_var.set("light")
        window.appearance.apply_theme()
        window.root.update()


def test_edit_shows_the_raw_text_to_change_and_copy_copies_the_raw_markdown(window, app):
    ed = open_reply(window, app, REPLY)
    card = ed.list.cards["a1"]
    card.copy_raw()
    assert window.root.clipboard_get() == REPLY
    card.edit_btn.invoke()
    window.root.update()
    card = ed.list.cards["a1"]
    assert shown(card) == REPLY and str(card.text.cget("state")) == "normal"
    card.text.insert("end", "\nMore.")
    window.root.update()
    assert ed.p.messages[1].text() == REPLY + "\nMore."
    card.edit_btn.invoke()  # Preview
    window.root.update()
    assert ed.list.cards["a1"].text.get("end-6c", "end-1c") == "More."
    assert "```" not in shown(ed.list.cards["a1"])


def test_the_view_menu_switches_every_reply_between_markdown_and_raw_text(window, app):
    ed = open_reply(window, app, REPLY)
    run = dict(window.menus.commands)["View: Render Markdown"]  # the palette lists the menus' commands
    run()  # off, as the palette runs it
    window.root.update()
    assert window.appearance.markdown_var.get() is False
    assert shown(ed.list.cards["a1"]) == REPLY
    run()
    window.root.update()
    assert shown(ed.list.cards["a1"]).startswith("Plan\n")


def test_a_link_opens_only_after_the_user_agrees(window, app, monkeypatch):
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: opened.append(url))
    card = open_reply(window, app, REPLY).list.cards["a1"]
    t = card.text
    start = t.tag_ranges("link")[0]
    t.see(start)
    window.root.update()
    x, y, _w, h = t.bbox(start)
    window.dialogs.answer = False
    t.event_generate("<Motion>", x=x + 2, y=y + h // 2)  # Tk finds the tag under the pointer
    window.root.update()
    t.event_generate("<Button-1>", x=x + 2, y=y + h // 2)
    window.root.update()
    assert window.dialogs.confirms and "https://example.org/docs" in window.dialogs.confirms[-1]
    assert opened == []
    window.dialogs.answer = True
    t.event_generate("<Button-1>", x=x + 2, y=y + h // 2)
    window.root.update()
    assert opened == ["https://example.org/docs"]


def test_a_remote_image_is_shown_as_its_alt_text_and_never_fetched(window, app, image_server):
    url = f"http://127.0.0.1:{image_server.server_address[1]}/chart.png"
    card = open_reply(window, app, f"Look: ![sales chart]({url})\n").list.cards["a1"]
    window.root.update()
    assert "[image: sales chart]" in shown(card)
    assert image_server.hits == 0


def test_a_streamed_reply_is_drawn_as_markdown_as_it_arrives(window, app):
    ed = open_reply(window, app, "")
    chunks = [REPLY[i:i + 5] for i in range(0, len(REPLY), 5)]
    for chunk in chunks:
        ed.run.append_text("a1", chunk)
        window.root.update()
    pump_until(window.root, lambda: ed.list.cards.get("a1") is not None)
    card = ed.list.cards["a1"]
    assert card.markdown is not None
    assert tagged(card.text, "h1") == "Plan\n" and "def f():" in tagged(card.text, "code")
    assert "```" not in shown(card)


def test_web_search_results_show_titles_links_and_snippets(window, app, monkeypatch):
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: opened.append(url))
    hits = [{"title": "Tk docs", "url": "https://tkdocs.com", "snippet": "Modern Tk"}]
    calls = [{"id": "s1", "input": {"name": "web_search", "arguments": {"query": "tk"}},
              "output": {"content": [{"type": "text", "text": orjson.dumps(hits).decode()}]}}]
    ed = open_reply(window, app, "Found it.", calls, stem="search")
    card = ed.list.cards["a1"]
    from .test_cards import labels

    results = card.shaped["s1"]
    assert {"1. Tk docs", "https://tkdocs.com", "Modern Tk"} <= set(labels(results))
    results.titles[0].event_generate("<Button-1>")
    window.root.update()
    assert opened == ["https://tkdocs.com"]


def test_long_json_results_are_pretty_and_folded_until_unfolded(window, app):
    out = orjson.dumps({"items": list(range(30))}).decode()
    calls = [{"id": "j1", "input": {"name": "read", "arguments": {"path": "x"}},
              "output": {"content": [{"type": "text", "text": out}]}}]
    ed = open_reply(window, app, "Read it.", calls, stem="json")
    box = ed.list.cards["a1"].shaped["j1"]
    folded = box.box.get("1.0", "end-1c")
    assert folded.startswith('{\n  "items": [\n    0,') and len(folded.splitlines()) == 12
    assert "more lines" in str(box.toggle.cget("text"))
    box.toggle.invoke()
    assert len(box.box.get("1.0", "end-1c").splitlines()) == 34
    ed.list.cards["a1"].winfo_children()  # the card stays; Edit shows the raw result
    ed.list.toggle_raw("result:j1")
    window.root.update()
    assert ed.list.cards["a1"].results["j1"].get("1.0", "end-1c") == out


def test_start_up_does_not_import_the_markdown_libraries():
    import subprocess
    import sys

    code = ("import sys\nimport llmspace.ui.main_window\n"
            "print(sorted(m for m in ('markdown_it', 'pygments') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_long_open_block_is_drawn_at_most_every_tenth_of_a_second_and_nothing_is_lost(window, app):
    from llmspace.ui.editor.markdown_text import BIG_OPEN

    ed = open_reply(window, app, "")
    card = ed.list.cards["a1"]
    line = "a line of a long paragraph\n"
    text = line * (BIG_OPEN // len(line) + 40)
    for i in range(0, len(text), 40):
        ed.run.append_text("a1", text[i:i + 40])
    assert card.markdown._held is not None  # past BIG_OPEN the text waits for the next draw
    pump_until(window.root, lambda: shown(card) == text.rstrip("\n"), 10)
