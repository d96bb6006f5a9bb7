"""Every run event is handled by each consumer: the GUI's run presenter
(`presenters/run.RunPresenter.apply`), the live fold of the thread it shows
(`agent/fold.fold_run_event`) and the CLI printer (`commands/run.Printer`).

A new class in `agent/events.py` that is left out of the `RunEvent` union, or out of either
consumer's `match`, fails here (mypy's `assert_never` catches the second case too)."""

from __future__ import annotations

import io
import types
import typing
from typing import Any

import pytest

from llmspace.agent import events as rev
from llmspace.agent.fold import fold_run_event
from llmspace.agent.run_types import RunResult
from llmspace.commands.run import Printer
from llmspace.core.model import TextContent, ToolCallOutput
from llmspace.core.threadio import clone_thread
from llmspace.presenters.editor import EditorPresenter
from llmspace.presenters.run import RunPresenter
from tests.support.closed_unions import dataclasses_of, matched_names, sample

EVENT_CLASSES = typing.get_args(rev.RunEvent)


def _sample(cls: type, thread: Any) -> Any:
    """One instance of the event class `cls`, with plausible values."""
    by_name: dict[str, Any] = {
        "message_id": "m-events", "call_id": "c-events", "name": "bash", "text": "hi",
        "arguments_text": '{"command": "echo hi"}', "reason": "a custom function tool: supply its result",
        "calls": (("m-events", "c-events"),),
        "output": ToolCallOutput(content=[TextContent(type="text", text="result")]),
        "result": RunResult(status="completed", error=None, thread=thread),
    }
    return sample(cls, by_name, {"str": "x", "int": 1, "float": 0.5, "bool": True})


def test_run_event_is_a_union_of_every_event_class_in_the_module():
    assert isinstance(rev.RunEvent, types.UnionType)
    assert set(EVENT_CLASSES) == dataclasses_of(rev)


@pytest.mark.parametrize("consumer", [RunPresenter.apply, fold_run_event, Printer.__call__],
                         ids=["presenter", "live-fold", "cli-printer"])
def test_each_consumer_names_every_event_class_in_its_match(consumer):
    named = matched_names(consumer)
    missing = sorted(c.__name__ for c in EVENT_CLASSES if c.__name__ not in named)
    assert not missing, f"{consumer.__qualname__} does not handle {missing}"


def test_the_cli_printer_takes_one_of_every_event_without_falling_through(app):
    out = io.StringIO()
    printer = Printer(out)
    thread = app.workspace.open(app.workspace.create_thread("", "events"))
    for cls in EVENT_CLASSES:
        printer(_sample(cls, thread))  # assert_never raises for an unhandled class
    assert "hi" in out.getvalue() and "[tool result] id=c-events: result" in out.getvalue()


def test_the_run_presenter_folds_one_of_every_event_without_falling_through(app):
    rel = app.workspace.create_thread("", "events")
    editor = EditorPresenter(app.workspace, rel)
    run = RunPresenter(editor, app)
    seen: list[str] = []
    run.listeners.append(lambda update: seen.append(type(update).__name__))
    for cls in EVENT_CLASSES:
        if cls is not rev.RunFinished:
            run.apply(_sample(cls, clone_thread(editor.thread)))
    assert run.tool_status["c-events"] == "done" and run.pause_reason and run.pause_risky
    assert editor.thread.messages[-1].text().startswith("hi")
    run.apply(_sample(rev.RunFinished, clone_thread(editor.thread)))
    assert {"ToolCallChanged", "RunPaused", "RetryNote"} <= set(seen)
