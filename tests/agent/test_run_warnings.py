"""Render warnings of a run reach `RunResult.warnings` (each once, over every turn) without
changing what the run does; clean threads report none."""

from __future__ import annotations

from llmspace.agent.run_types import RunOptions
from tests.support.llm_server import configure_provider

from .conftest import make_thread, user


def test_a_run_reports_its_render_warnings_once_and_still_completes(app, home, srv):
    configure_provider(home, srv)
    thread = make_thread([user("Hi {% if %}x")], context={"systemPrompt": "Help {{ nope }}."})

    result = app.runner.run(thread, RunOptions())

    assert result.status == "completed", result.error
    assert len(result.warnings) == 2
    assert any("Unknown variable {{ nope }}" in w for w in result.warnings)
    assert any(w.startswith("Template error in message 1") for w in result.warnings)
    assert thread.messages[0].text() == "Hi {% if %}x"


def test_a_clean_run_has_no_warnings(app, home, srv):
    configure_provider(home, srv)
    result = app.runner.run(make_thread([user("Hello")]), RunOptions())
    assert result.status == "completed" and result.warnings == []
