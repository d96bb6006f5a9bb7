"""Tool results shaped as the original app shows them: web search hits, todo checklists,
pretty-printed JSON folded when long, anything else as text. No Tk."""

from __future__ import annotations

import orjson

from llmspace.presenters.tool_results import FOLD_LINES, shape_result, todo_items


def test_web_search_results_become_titles_links_and_snippets():
    out = orjson.dumps([{"title": "Tk docs", "url": "https://tkdocs.com", "snippet": "Modern Tk"},
                        {"title": "", "url": "https://x.org", "content": "long body"}]).decode()
    view = shape_result("web_search", out)
    assert view.kind == "search"
    assert [(h.title, h.url, h.snippet) for h in view.hits] == [
        ("Tk docs", "https://tkdocs.com", "Modern Tk"), ("Untitled", "https://x.org", "long body")]


def test_a_web_search_result_that_is_not_a_hit_list_is_shown_as_json_or_text():
    assert shape_result("web_search", '{"error": "quota"}').kind == "json"
    assert shape_result("web_search", "Brave Search API key is not configured.").kind == "text"
    assert shape_result("web_search", '[{"title": "no url"}]').kind == "json"


def test_json_results_are_pretty_printed():
    view = shape_result("bash", '{"stdout":"hi","stderr":"","exitCode":0}')
    assert view.kind == "json"
    assert view.text == '{\n  "stdout": "hi",\n  "stderr": "",\n  "exitCode": 0\n}'
    assert view.folded is None


def test_long_json_is_folded_to_its_first_lines_with_the_rest_counted():
    data = {"items": list(range(40))}
    view = shape_result("read", orjson.dumps(data).decode())
    assert view.folded is not None
    assert view.folded.splitlines() == view.text.splitlines()[:FOLD_LINES]
    assert view.hidden_lines == len(view.text.splitlines()) - FOLD_LINES


def test_plain_text_and_empty_results_stay_text():
    assert shape_result("read", "hello").kind == "text"
    assert shape_result("read", "").kind == "text"
    assert shape_result("read", "42").kind == "text"  # a bare number is not worth folding


def test_todo_lists_become_checklists_with_unknown_statuses_as_pending():
    items = todo_items({"todos": [{"content": "plan", "status": "completed"},
                                  {"content": "build", "status": "in_progress"},
                                  {"content": "ship", "status": "weird"},
                                  {"content": "drop", "status": "cancelled"}, "junk"]})
    assert [(i.mark, i.content, i.status) for i in items] == [
        ("☑", "plan", "completed"), ("◐", "build", "in_progress"), ("☐", "ship", "pending"),
        ("☒", "drop", "cancelled")]
    assert todo_items({"todos": "nope"}) is None
    assert todo_items({}) is None
