"""Replies with nothing in them are failures, not silent successes: an error frame in the
stream fails the run with the server's message (recorded as an error), an empty reply fails
it without saving an empty message (recorded as empty), a reply cut at maxTokens with nothing
in it is an empty reply, and one with text is kept with a warning."""

from __future__ import annotations

import json

import pytest

from llmspace.agent.run_types import RunOptions
from llmspace.core.history import run_status
from llmspace.core.model import AssistantMessage
from llmspace.core.threadio import parse_thread, serialize_thread
from tests.agent.conftest import make_thread, user
from tests.support.llm_server import Turn, configure_provider

ROLE_ONLY = b'data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n'


def finish(reason: str) -> bytes:
    return b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"%s"}]}\n\ndata: [DONE]\n\n' % reason.encode()


def thread_with_max_tokens(n: int = 50):
    return make_thread([user("hi")], model={"provider": "loop", "id": "loopback-model", "params": {"maxTokens": n}})


def saved_history(thread) -> list[dict]:
    """The run-history entries as written to the file (and read back)."""
    data = json.loads(serialize_thread(parse_thread(serialize_thread(thread))))
    return data.get("runHistory") or []


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses", "anthropic-messages"])
def test_an_error_frame_fails_the_run_with_the_servers_message_adds_no_reply_and_is_recorded_as_an_error(app, home, srv, api):
    configure_provider(home, srv, api=api)
    srv.push_raw(body=[b'event: error\ndata: {"message": "overloaded"}\n\n'], content_type="text/event-stream")
    thread = make_thread([user("hi")])

    result = app.runner.run(thread, RunOptions())

    assert result.status == "failed"
    assert "overloaded" in (result.error or "")
    assert [m.role for m in thread.messages] == ["user"] and not result.new_message_ids
    assert result.run_id is not None and run_status(thread.runHistory[-1]) == "error"
    assert saved_history(thread)[-1]["status"] == "error"


@pytest.mark.parametrize("body", [
    pytest.param([ROLE_ONLY, finish("stop")], id="a role delta then stop"),
    pytest.param(b'{"choices": []}', id="200 with no choices"),
])
def test_an_empty_reply_fails_the_run_saves_no_message_and_is_recorded_as_empty(app, home, srv, body):
    configure_provider(home, srv)
    srv.push_raw(body=body, content_type="text/event-stream" if isinstance(body, list) else "application/json")
    thread = make_thread([user("hi")])

    result = app.runner.run(thread, RunOptions())

    assert result.status == "failed"
    assert (result.error or "").startswith("loop returned an empty reply")
    assert [m.role for m in thread.messages] == ["user"]
    assert result.run_id is not None and run_status(thread.runHistory[-1]) == "empty"
    assert saved_history(thread)[-1]["status"] == "empty"


def test_a_reply_cut_at_max_tokens_with_nothing_in_it_is_an_empty_reply_naming_the_limit(app, home, srv):
    configure_provider(home, srv)
    srv.push_raw(body=[ROLE_ONLY, finish("length")], content_type="text/event-stream")
    thread = thread_with_max_tokens(50)

    result = app.runner.run(thread, RunOptions())

    assert result.status == "failed"
    assert (result.error or "").startswith("loop returned an empty reply: it was cut at maxTokens 50.")
    assert [m.role for m in thread.messages] == ["user"]
    assert run_status(thread.runHistory[-1]) == "empty"


def test_a_reply_cut_at_max_tokens_with_text_is_kept_with_a_warning(app, home, srv):
    configure_provider(home, srv)
    srv.push(Turn(text="The first half", finish_reason="length"))
    thread = thread_with_max_tokens(50)

    result = app.runner.run(thread, RunOptions())

    assert result.status == "completed" and result.error is None
    reply = thread.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.text() == "The first half"
    assert result.reply_warnings == [("loop: the reply was cut at maxTokens 50 (finish reason length); "
                                      "raise maxTokens in the thread's model settings for the rest.")]
    assert run_status(thread.runHistory[-1]) is None
    assert "status" not in saved_history(thread)[-1]  # a run that did not fail is written as the original app writes it


def test_without_max_tokens_the_limit_named_is_the_one_the_request_sent(app, home, srv):
    configure_provider(home, srv, api="anthropic-messages")
    srv.push(Turn(text="", finish_reason="max_tokens", usage=(5, 0)))
    thread = make_thread([user("hi")])

    result = app.runner.run(thread, RunOptions())

    assert result.status == "failed"
    assert srv.requests[-1].body_json["max_tokens"] == 8192
    assert (result.error or "").startswith("loop returned an empty reply: it was cut at maxTokens 8192.")
