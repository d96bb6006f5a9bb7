"""A failed run shows and keeps no configured secret: the run's error text,
tool error outputs saved in the thread, the trace and the log file have the API key (any
shape) and every configured header value (any header name) removed, while text the user
wrote is saved exactly as written."""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path
from typing import Any

import pytest

from llmspace.agent.run_types import RunOptions
from llmspace.core.model import AssistantMessage
from llmspace.redact import MASK
from llmspace.tools.builtins import builtin_tool
from tests.providers.helpers import assert_clean, mid_stream_error
from tests.support.llm_server import ToolCallSpec, Turn, configure_provider

from .conftest import make_thread, save_thread, user


def _secrets() -> dict[str, str]:
    u = uuid.uuid4().hex
    return {"key": f"gw-{u[:20]}", "auth": f"tok{u[:16]}", "api_secret": f"xs-{u[4:20]}", "cookie": f"sess{u[8:28]}"}


def _configure(home: Path, srv: Any, api: str, s: dict[str, str]) -> None:
    """models.json with a key that is not `sk-…` and headers named Authorization, X-Api-Secret, Cookie."""
    path = configure_provider(home, srv, api=api, api_key=s["key"])
    data = json.loads(path.read_text("utf-8"))
    data["providers"][0]["headers"] = {"Authorization": f"Bearer {s['auth']}", "X-Api-Secret": s["api_secret"],
                                       "Cookie": f"session={s['cookie']}"}
    path.write_text(json.dumps(data), "utf-8")


def _echo(s: dict[str, str]) -> str:
    return (f"denied; you sent Authorization: Bearer {s['auth']}, key {s['key']}, "
            f"X-Api-Secret: {s['api_secret']}, Cookie: session={s['cookie']}")


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses", "anthropic-messages"])
def test_a_run_failing_mid_stream_reports_and_traces_no_secret_and_keeps_the_user_text(app, home, srv, api):
    s = _secrets()
    _configure(home, srv, api, s)
    srv.push_raw(body=mid_stream_error(api, _echo(s)), content_type="text/event-stream")
    mine = f"My cookie is session={s['cookie']} and my key {s['key']}; why is it refused?"
    thread = make_thread([user(mine)])
    path = save_thread(app, "t.json", thread)

    result = app.runner.run(thread, RunOptions())
    app.workspace.save("t.json", thread)

    assert result.status == "failed"
    assert result.error is not None and "denied" in result.error and MASK in result.error
    assert_clean(result.error, s)
    saved = app.workspace.open("t.json")
    assert saved.messages[0].text() == mine  # the user's own words are never changed
    assert mine in path.read_text("utf-8")
    traces = list((home / "traces" / "calls").glob("*.json"))
    assert len(traces) == 1
    trace = traces[0].read_text("utf-8")
    assert "denied" in trace
    assert_clean(trace, s)
    sent = srv.requests[-1].headers
    assert s["cookie"] in str(sent.get("Cookie")) and s["api_secret"] in str(sent.get("X-Api-Secret"))


def test_an_http_error_of_a_run_has_no_secret(app, home, srv):
    s = _secrets()
    _configure(home, srv, "openai-completions", s)
    srv.push_raw(status=401, body=json.dumps({"error": {"message": _echo(s)}}))
    result = app.runner.run(make_thread([user("hi")]), RunOptions())
    assert result.status == "failed" and "HTTP 401" in (result.error or "")
    assert_clean(result.error or "", s)


def test_a_tool_error_saved_in_the_thread_has_no_secret(app, home, srv, tmp_path):
    s = _secrets()
    _configure(home, srv, "openai-completions", s)
    missing = str(tmp_path / f"{s['cookie']}.txt")
    srv.push(Turn(tool_calls=[ToolCallSpec(id="c1", name="read", arguments={"description": "d", "path": missing})]))
    read = builtin_tool("read")
    assert read is not None
    thread = make_thread([user("read it")], context={"tools": [read.model_dump(exclude_unset=True)]})

    result = app.runner.run(thread, RunOptions(auto_tools=True))

    assert result.status == "completed", result.error
    reply = thread.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.toolCalls
    output = reply.toolCalls[0].output
    assert output is not None and output.isError is True
    assert "does not exist" in output.text() and MASK in output.text()
    assert_clean(output.text(), s)


def test_a_result_typed_in_by_the_user_is_kept_as_written(app, home, srv):
    s = _secrets()
    _configure(home, srv, "openai-completions", s)
    fn = {"type": "function", "name": "lookup", "description": "Look up.",
          "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}}
    srv.push(Turn(tool_calls=[ToolCallSpec(id="c1", name="lookup", arguments={"word": "x"})]), Turn(text="done"))
    thread = make_thread([user("go")], context={"tools": [fn]})
    paused = app.runner.run(thread, RunOptions(react=True))
    assert paused.status == "paused"
    typed = f"failed: cookie {s['cookie']} rejected"
    done = app.runner.run(thread, RunOptions(react=True, tool_results={"c1": (typed, True)}))
    assert done.status == "completed", done.error
    call = thread.messages[1].toolCalls[0]
    assert call.output.text() == typed


def test_the_log_file_has_no_configured_secret_even_in_a_traceback(app, home, srv):
    s = _secrets()
    _configure(home, srv, "openai-completions", s)
    log_path = app.log_file
    assert app.models.provider("loop") is not None  # settings loaded: their secrets are known
    try:
        raise RuntimeError(f"upstream said {_echo(s)}")
    except RuntimeError as exc:
        logging.getLogger("llmspace.agent").error("call failed with key %s", s["key"], exc_info=exc)
    for handler in logging.getLogger("llmspace").handlers:
        handler.flush()
    text = log_path.read_text("utf-8")
    assert "call failed with key" in text and "RuntimeError: upstream said denied" in text
    assert_clean(text, s)


def test_the_log_file_has_no_secret_of_a_request_made(app, home, srv):
    """A key the settings never held (e.g. from the OS keyring) is known once a request used it."""
    s = _secrets()
    _configure(home, srv, "openai-completions", s)
    log_path = app.log_file
    srv.push(Turn(text="ok"))
    thread = make_thread([user("hi")])
    from dataclasses import replace

    endpoint, info = app.providers.resolve(None)
    other = f"kr-{uuid.uuid4().hex}"
    from llmspace.cancel import CancelToken
    from llmspace.providers.base import ModelRequest, NeutralMessage

    request = ModelRequest(endpoint=replace(endpoint, api_key=other), model=info, system_prompt="",
                           messages=(NeutralMessage(role="user", text="hi"),))
    list(app.providers.adapter(endpoint.api).stream(request, CancelToken()))
    logging.getLogger("llmspace.providers").warning("echo: %s", other)
    for handler in logging.getLogger("llmspace").handlers:
        handler.flush()
    text = log_path.read_text("utf-8")
    assert "echo: ***" in text and other not in text
    assert thread.messages[0].text() == "hi"


def test_a_key_given_as_an_env_reference_is_kept_out_of_the_log(app, home, srv, monkeypatch):
    value = f"env-{uuid.uuid4().hex}"
    monkeypatch.setenv("LOOP_GATEWAY_KEY", value)
    configure_provider(home, srv, api_key="$LOOP_GATEWAY_KEY")
    log_path = app.log_file
    assert app.models.api_key("loop") == value
    logging.getLogger("llmspace.models").warning("gateway answered for %s", value)
    for handler in logging.getLogger("llmspace").handlers:
        handler.flush()
    text = log_path.read_text("utf-8")
    assert "gateway answered for ***" in text and value not in text
