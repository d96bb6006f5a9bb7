"""The compare dialog names runs by time and model, and its Differences tab is made of
styled lines — removed/added lines with their changed words marked, hanging indents — all
without a display."""

from __future__ import annotations

from llmspace.presenters.compare import ComparePresenter
from llmspace.presenters.compare_diff import diff_lines
from llmspace.presenters.editor import EditorPresenter

from .test_history_rows import local_ms, reply, run, usage, user

RUN_A = "3f2b8c1e-0000-4000-8000-00000000000a"
RUN_B = "3f2b8c1e-0000-4000-8000-00000000000b"
LONG = "The call stack unwinds once the base case is reached, which keeps the definition short and clear"


def editor(app):
    rel = app.workspace.create_thread("", "cmp")
    ed = EditorPresenter(app.workspace, rel)
    ed.thread = ed.thread.model_validate({"title": "cmp", "runHistory": [
        run(RUN_A, local_ms(2024, 3, 4, 10, 5), "gpt-4.1",
            [user("u", "q"), reply("msg-1111", "Same first line\n" + LONG, 400, 1800)], usage(300, 80, 0.0123)),
        run(RUN_B, local_ms(2024, 3, 4, 11, 5), "gpt-4.1-mini",
            [user("u", "q"), reply("msg-2222", "Same first line\n" + LONG.replace("short", "brief"), 200, 900)],
            usage(340, 110, 0.0031))]})
    return ed


def test_runs_are_named_by_time_and_model_never_by_id(app):
    p = ComparePresenter(editor(app), RUN_A, RUN_B)
    assert p.names() == ("2024-03-04 10:05 · gpt-4.1", "2024-03-04 11:05 · gpt-4.1-mini")
    assert p.title() == "Compare runs — A: 2024-03-04 10:05 · gpt-4.1  vs  B: 2024-03-04 11:05 · gpt-4.1-mini"
    side = p.side(RUN_A)
    assert side.name == "2024-03-04 10:05 · gpt-4.1" and side.figures == "380 tokens · $0.0123 · 1.80 s"
    text = p.diff_text()
    assert text.startswith("Run A: 2024-03-04 10:05:00  openai/gpt-4.1  2 messages\n")
    assert RUN_A not in text and RUN_B not in text and "msg-1111" not in text and "#2 assistant: differs" in text


def test_the_diff_is_styled_lines_with_the_changed_words_marked(app):
    lines = diff_lines(ComparePresenter(editor(app), RUN_A, RUN_B).diff_text())
    kinds = {ln.kind for ln in lines}
    assert {"title", "heading", "meta", "hunk", "removed", "added", "context", "plain"} <= kinds
    removed = next(ln for ln in lines if ln.kind == "removed")
    added = next(ln for ln in lines if ln.kind == "added")
    assert removed.text.strip() == "-" + LONG and added.text.strip().startswith("+The call stack")
    assert removed.indent == added.indent == removed.text.index("-") + 1  # wrapped lines hang under the text
    assert [removed.text[a:b] for a, b in removed.changed] == ["short"]
    assert [added.text[a:b] for a, b in added.changed] == ["brief"]
    context = next(ln for ln in lines if ln.kind == "context")
    assert context.text.strip() == "Same first line"
    assert next(ln for ln in lines if ln.text.startswith("Usage:")).kind == "heading"


def test_mostly_different_lines_get_no_word_marks_and_adjacent_changes_join():
    text = "\n".join(["Messages (1 positions, 1 differ):", "    --- A", "    +++ B", "    @@ -1 +1 @@",
                      "    -alpha beta gamma delta", "    +one two three four",
                      "    -keep this and change these words here", "    +keep this and alter those words here",
                      "Usage:"])
    lines = diff_lines(text)
    assert [ln.kind for ln in lines] == ["heading", "meta", "meta", "hunk", "removed", "added", "removed", "added",
                                         "heading"]
    assert lines[4].changed == [] and lines[5].changed == []
    # each run of removed lines is paired with the run of added lines that follows it
    assert [lines[6].text[a:b] for a, b in lines[6].changed] == ["change these"]
    assert [lines[7].text[a:b] for a, b in lines[7].changed] == ["alter those"]
