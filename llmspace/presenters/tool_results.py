"""Tool calls shown as the original app shows them (the Tk half is `ui/editor/tool_views.py`).
No Tk.

    shape_result(tool_name, output_text) -> ResultView
        "search": a `web_search` result that is a list of {title, url, snippet?, content?}:
                  `hits` (title, link, snippet)
        "json":   any other JSON object or array, pretty-printed (`text`); when longer than
                  FOLD_LINES lines also `folded` (its first lines) and `hidden_lines`
        "text":   anything else, as it is
    todo_items(arguments) -> [TodoItem] | None    # `todo_write` arguments as a checklist
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

FOLD_LINES = 12
TODO_MARKS = {"completed": "☑", "in_progress": "◐", "cancelled": "☒", "pending": "☐"}


@dataclass(frozen=True)
class SearchHit:
    title: str
    url: str
    snippet: str


@dataclass(frozen=True)
class ResultView:
    kind: Literal["search", "json", "text"]
    text: str
    hits: list[SearchHit] = field(default_factory=list)
    folded: str | None = None  # the first FOLD_LINES lines of a longer JSON result
    hidden_lines: int = 0


@dataclass(frozen=True)
class TodoItem:
    mark: str
    content: str
    status: str  # pending, in_progress, completed or cancelled (unknown ones read as pending)


def shape_result(tool_name: str, output: str) -> ResultView:
    try:
        data = orjson.loads(output) if output.strip()[:1] in ("{", "[") else None
    except orjson.JSONDecodeError:
        data = None
    if not isinstance(data, (dict, list)):
        return ResultView("text", output)
    if tool_name == "web_search" and (hits := _hits(data)) is not None:
        return ResultView("search", output, hits)
    pretty = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
    lines = pretty.splitlines()
    if len(lines) <= FOLD_LINES:
        return ResultView("json", pretty)
    return ResultView("json", pretty, folded="\n".join(lines[:FOLD_LINES]), hidden_lines=len(lines) - FOLD_LINES)


def _hits(data: Any) -> list[SearchHit] | None:
    if not isinstance(data, list):
        return None
    hits = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            return None
        snippet = item.get("snippet") or item.get("content") or ""
        hits.append(SearchHit(str(item.get("title") or "Untitled"), item["url"], str(snippet)))
    return hits


def todo_items(arguments: Any) -> list[TodoItem] | None:
    todos = arguments.get("todos") if isinstance(arguments, dict) else None
    if not isinstance(todos, list):
        return None
    out = []
    for todo in todos:
        if not isinstance(todo, dict):
            continue
        status = str(todo.get("status"))
        status = status if status in TODO_MARKS else "pending"
        out.append(TodoItem(TODO_MARKS[status], str(todo.get("content", "")), status))
    return out
