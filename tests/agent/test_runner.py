"""The run loop against a real loopback LLM server: the three API modes, tools, pauses,
Stop, failures, the worker pool, eligibility and "run from this message"."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from llmspace.agent import events as ev
from llmspace.agent.loop import NOT_ELIGIBLE
from llmspace.agent.run_types import RunOptions
from llmspace.cancel import CancelToken
from llmspace.core.model import AssistantMessage
from llmspace.core.threadio import serialize_thread
from llmspace.tools.builtins import builtin_tool
from tests.support.llm_server import ToolCallSpec, Turn, configure_provider

from .conftest import assistant, make_thread, save_thread, user

WAIT = 20.0  # bounded wait for runs on this shared machine (not a timing assertion)

# A reply that streams for minutes unless the client goes away (the server notices at once).
SLOW = Turn(text="word " * 2000, chunk_size=5, delay_per_chunk=0.05)

FUNCTION_TOOL = {"type": "function", "name": "lookup", "description": "Look a word up.",
                 "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}}


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses", "anthropic-messages"])
def test_a_run_in_each_api_mode_saves_the_reply_with_usage_timing_and_a_history_entry(app, home, srv, api):
    configure_provider(home, srv, api=api)
    srv.push(Turn(text="Hello there, friend.", thinking="Let me think.", usage=(12, 7)))
    thread = make_thread([user("Say hello")])
    save_thread(app, "hello.json", thread)

    result = app.runner.run(thread, RunOptions())
    app.workspace.save("hello.json", thread)

    assert result.status == "completed", result.error
    saved = app.workspace.open("hello.json")
    reply = saved.messages[-1]
    assert isinstance(reply, AssistantMessage)
    assert reply.id == result.new_message_ids[0]
    assert reply.text() == "Hello there, friend."
    assert reply.thinking == "Let me think."
    assert reply.usage is not None and reply.usage.input == 12 and reply.usage.output == 7
    assert reply.usage.totalTokens == 19
    assert reply.usage.cost.input == pytest.approx(12 * 1.0 / 1e6)
    assert reply.usage.cost.output == pytest.approx(7 * 2.0 / 1e6)
    assert reply.timing is not None and reply.timing.firstTokenMs is not None
    assert reply.timing.durationMs >= reply.timing.firstTokenMs
    assert saved.runHistory is not None and len(saved.runHistory) == 1
    run = saved.runHistory[0]
    assert run.id == result.run_id
    assert run.usage is not None and run.usage.output == 7
    assert [m.id for m in run.thread.context.messages] == ["u1", reply.id]


def test_events_arrive_in_order_with_text_fragments_that_add_up_to_the_reply(app, home, srv):
    configure_provider(home, srv)
    srv.push(Turn(text="abcdefghij", chunk_size=3))
    seen: list[Any] = []
    result = app.runner.run(make_thread([user("go")]), RunOptions(), on_event=seen.append)
    kinds = [type(e).__name__ for e in seen]
    assert kinds[0] == "RunStarted" and kinds[1] == "MessageStarted" and kinds[-1] == "RunFinished"
    assert "".join(e.text for e in seen if isinstance(e, ev.TextDelta)) == "abcdefghij"
    assert seen[-1].result is result


def test_react_runs_a_builtin_tool_and_sends_its_result_to_the_model(app, home, srv, tmp_path):
    configure_provider(home, srv)
    target = tmp_path / "notes.txt"
    target.write_text("first line\nsecond line\n", encoding="utf-8")
    read = builtin_tool("read")
    assert read is not None
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_r", name="read", arguments={"description": "read notes", "path": str(target)})]),
             Turn(text="The file has two lines."))
    thread = make_thread([user("What is in notes.txt?")],
                         context={"tools": [read.model_dump(exclude_unset=True)]})

    result = app.runner.run(thread, RunOptions(react=True))

    assert result.status == "completed", result.error
    assert len(result.new_message_ids) == 2
    first, second = thread.messages[1], thread.messages[2]
    assert isinstance(first, AssistantMessage) and first.toolCalls
    call = first.toolCalls[0]
    assert call.input.arguments["path"] == str(target)
    assert call.output is not None and call.output.isError is False
    assert "1\tfirst line" in call.output.text()
    assert isinstance(second, AssistantMessage) and second.text() == "The file has two lines."
    assert "1\tfirst line" in json.dumps(srv.requests[-1].body_json, ensure_ascii=False).replace("\\t", "\t")
    assert len(thread.runHistory or []) == 1


def test_auto_run_executes_tools_once_and_stops(app, home, srv, tmp_path):
    configure_provider(home, srv)
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    read = builtin_tool("read")
    assert read is not None
    srv.push(Turn(tool_calls=[ToolCallSpec(id="c1", name="read", arguments={"description": "d", "path": str(tmp_path / "a.txt")})]))
    thread = make_thread([user("read it")], context={"tools": [read.model_dump(exclude_unset=True)]})

    result = app.runner.run(thread, RunOptions(auto_tools=True))

    assert result.status == "completed"
    assert len(srv.requests) == 1
    call = thread.messages[-1].toolCalls[0]
    assert call.output.text() == "1\tx"


def test_a_function_tool_pauses_the_run_and_a_supplied_result_continues_it(app, home, srv):
    configure_provider(home, srv)
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_fn", name="lookup", arguments={"word": "llama"})]),
             Turn(text="A llama is a camelid."))
    thread = make_thread([user("What is a llama?")], context={"tools": [FUNCTION_TOOL]})

    paused = app.runner.run(thread, RunOptions(react=True))

    assert paused.status == "paused"
    message_id = paused.new_message_ids[0]
    assert paused.paused_calls == [(message_id, "call_fn")]
    assert "lookup" in (paused.paused_reason or "")
    assert len(srv.requests) == 1
    assert len(thread.runHistory or []) == 1

    done = app.runner.run(thread, RunOptions(react=True, tool_results={"call_fn": ("South American camelid", False)}))

    assert done.status == "completed", done.error
    call = thread.messages[1].toolCalls[0]
    assert call.output.text() == "South American camelid" and call.output.isError is False
    assert thread.messages[-1].text() == "A llama is a camelid."
    assert "South American camelid" in json.dumps(srv.requests[-1].body_json)
    assert len(thread.runHistory or []) == 2


def test_a_risky_bash_command_pauses_auto_run(app, home, srv):
    configure_provider(home, srv)
    bash = builtin_tool("bash")
    assert bash is not None
    srv.push(Turn(tool_calls=[ToolCallSpec(id="c_rm", name="bash", arguments={"description": "clean", "command": "rm -rf /tmp/nothing-here"})]))
    thread = make_thread([user("clean up")], context={"tools": [bash.model_dump(exclude_unset=True)]})

    result = app.runner.run(thread, RunOptions(react=True))

    assert result.status == "paused"
    assert result.paused_reason and "risky" in result.paused_reason


def test_stop_ends_the_run_keeps_the_partial_text_and_records_the_run(app, home, srv):
    configure_provider(home, srv)
    srv.push(SLOW)
    thread = make_thread([user("talk forever")])
    first_text = threading.Event()
    cancel = CancelToken()

    def on_event(event: Any) -> None:
        if isinstance(event, ev.TextDelta):
            first_text.set()

    future = app.runner.submit(thread, RunOptions(), on_event=on_event, cancel=cancel)
    assert first_text.wait(WAIT)
    cancel.cancel()
    result = future.result(timeout=WAIT)

    assert result.status == "stopped"
    reply = thread.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.text()
    assert result.run_id is not None and thread.runHistory[-1].id == result.run_id


def test_a_failed_run_keeps_the_generated_text_and_records_no_history(app, home, srv):
    configure_provider(home, srv)
    srv.push_drop(Turn(text="partial answer that never ends", chunk_size=4), after_chunks=3)
    thread = make_thread([user("hi")])

    result = app.runner.run(thread, RunOptions())

    assert result.status == "failed"
    assert result.error
    assert "sk-loopback" not in result.error
    reply = thread.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.text().startswith("part")
    assert not thread.runHistory


def test_an_http_error_fails_the_run_with_the_providers_message_and_adds_nothing(app, home, srv):
    configure_provider(home, srv)
    srv.push_raw(status=400, body=b'{"error": {"message": "model is sleeping"}}')
    thread = make_thread([user("hi")])
    before = serialize_thread(thread)

    result = app.runner.run(thread, RunOptions())

    assert result.status == "failed"
    assert "model is sleeping" in (result.error or "")
    assert serialize_thread(thread) == before


def test_several_runs_of_different_threads_run_at_once_on_the_pool(app, home, srv):
    configure_provider(home, srv)
    srv.push(SLOW, SLOW, SLOW)
    threads = [make_thread([user(f"run {i}")]) for i in range(3)]
    started = [threading.Event() for _ in threads]
    tokens = [CancelToken() for _ in threads]

    def listener(i: int) -> Any:
        def on_event(event: Any) -> None:
            if isinstance(event, ev.TextDelta):
                started[i].set()
        return on_event

    futures = [app.runner.submit(t, RunOptions(), on_event=listener(i), cancel=tokens[i]) for i, t in enumerate(threads)]
    # All three streams are open at the same time: each has produced text and none has ended.
    for flag in started:
        assert flag.wait(WAIT)
    assert not any(f.done() for f in futures)
    for token in tokens:
        token.cancel()
    results = [f.result(timeout=WAIT) for f in futures]
    assert [r.status for r in results] == ["stopped"] * 3
    assert all(r.thread is t for r, t in zip(results, threads, strict=True))


def test_a_run_is_refused_when_the_last_message_is_a_plain_assistant_reply(app, home, srv):
    configure_provider(home, srv)
    thread = make_thread([user("hi"), assistant("hello", "a1")])
    before = serialize_thread(thread)

    result = app.runner.run(thread, RunOptions(provider="loop", model="loopback-model"))

    assert result.status == "failed"
    assert result.error == NOT_ELIGIBLE
    assert serialize_thread(thread) == before
    assert srv.requests == []


def test_run_from_a_message_cuts_the_later_messages(app, home, srv):
    configure_provider(home, srv)
    srv.push(Turn(text="second answer"))
    thread = make_thread([user("q1", "u1"), assistant("first answer", "a1"), user("q2", "u2"), assistant("old", "a2")])

    result = app.runner.run(thread, RunOptions(from_message_id="u2", provider="loop", model="loopback-model"))

    assert result.status == "completed"
    assert thread.model is not None and (thread.model.provider, thread.model.id) == ("loop", "loopback-model")
    assert [m.id for m in thread.messages[:3]] == ["u1", "a1", "u2"]
    assert len(thread.messages) == 4 and thread.messages[3].text() == "second answer"


def test_run_from_an_ineligible_message_changes_nothing(app, home, srv):
    configure_provider(home, srv)
    thread = make_thread([user("q1", "u1"), assistant("first answer", "a1"), user("q2", "u2")])
    before = serialize_thread(thread)

    result = app.runner.run(thread, RunOptions(from_message_id="a1"))

    assert result.status == "failed" and result.error == NOT_ELIGIBLE
    assert serialize_thread(thread) == before


def test_a_run_without_any_model_says_to_select_one(app, home):
    thread = make_thread([user("hi")])
    result = app.runner.run(thread, RunOptions(provider="nobody", model="nothing"))
    assert result.status == "failed" and result.error


def test_anthropic_thinking_signatures_are_kept_and_sent_back_after_a_pause(app, home, srv):
    configure_provider(home, srv, api="anthropic-messages")
    srv.push(Turn(thinking="I need the tool.", signature="sig-abc",
                  tool_calls=[ToolCallSpec(id="toolu_1", name="lookup", arguments={"word": "ox"})]),
             Turn(text="An ox is a bovine."))
    thread = make_thread([user("ox?")], context={"tools": [FUNCTION_TOOL]})

    paused = app.runner.run(thread, RunOptions(react=True))
    assert paused.status == "paused"
    stored = thread.messages[1].extras().get("providerData")
    assert stored is not None and stored["provider"] == "loop" and stored["thinkingSignature"] == "sig-abc"

    done = app.runner.run(thread, RunOptions(react=True, tool_results={"toolu_1": ("a bovine", False)}))
    assert done.status == "completed", done.error
    sent = srv.requests[-1].body_json["messages"][1]["content"]
    assert sent[0] == {"type": "thinking", "thinking": "I need the tool.", "signature": "sig-abc"}


def test_a_stored_thinking_signature_is_not_sent_to_another_provider(app, home, srv):
    configure_provider(home, srv, api="anthropic-messages")
    configure_provider(home, srv, api="anthropic-messages", provider_id="other", make_default=False)
    srv.push(Turn(thinking="hmm", signature="sig-xyz", tool_calls=[ToolCallSpec(id="toolu_2", name="lookup", arguments={})]),
             Turn(text="done"))
    thread = make_thread([user("q")], context={"tools": [FUNCTION_TOOL]})
    assert app.runner.run(thread, RunOptions(react=True)).status == "paused"

    done = app.runner.run(thread, RunOptions(provider="other", model="loopback-model", react=True,
                                             tool_results={"toolu_2": ("r", False)}))
    assert done.status == "completed", done.error
    assert "sig-xyz" not in json.dumps(srv.requests[-1].body_json)


def test_each_model_call_writes_a_trace_without_the_api_key(app, home, srv):
    configure_provider(home, srv)
    srv.push(Turn(text="traced"))
    assert app.runner.run(make_thread([user("hi")]), RunOptions()).status == "completed"
    traces = list((home / "traces" / "calls").glob("*.json"))
    assert len(traces) == 1
    text = traces[0].read_text("utf-8")
    assert "traced" in text and "sk-loopback-test-key-0001" not in text


def test_a_retryable_error_before_the_first_token_is_retried(app, home, srv):
    configure_provider(home, srv)
    srv.push_raw(status=429, headers={"Retry-After": "0"}, body=b'{"error": {"message": "slow down"}}')
    srv.push(Turn(text="second try"))
    thread = make_thread([user("hi")])
    result = app.runner.run(thread, RunOptions())
    assert result.status == "completed", result.error
    assert thread.messages[-1].text() == "second try"
    assert len(srv.requests) == 2


def test_variables_are_rendered_into_the_request_and_frozen_values_saved_with_the_run(app, home, srv):
    configure_provider(home, srv)
    thread = make_thread([user("Hi {{customer}}")], context={
        "systemPrompt": "Help {{customer}} today.",
        "variableVariants": {"active": "default", "variants": {"default": {"customer": "Acme"}}}})

    result = app.runner.run(thread, RunOptions(variables={"customer": "Globex"}))

    assert result.status == "completed", result.error
    sent = json.dumps(srv.requests[-1].body_json)
    assert "Help Globex today." in sent and "Hi Globex" in sent
    assert thread.messages[0].text() == "Hi {{customer}}"
    assert thread.context.snapshot is not None and thread.context.snapshot.variables
    assert thread.runHistory[-1].thread.context.snapshot.variables == thread.context.snapshot.variables


def test_an_empty_variable_refuses_the_run_and_changes_nothing(app, home, srv):
    configure_provider(home, srv)
    thread = make_thread([user("q1", "u1"), assistant("a", "a1"), user("Hi {{nobody}}", "u2"), assistant("b", "a2")],
                         context={"variableVariants": {"active": "default", "variants": {"default": {"nobody": ""}}}})
    before = serialize_thread(thread)

    result = app.runner.run(thread, RunOptions(from_message_id="u2"))

    assert result.status == "failed"
    assert (result.error or "").startswith("Unable to render prompt variables")
    assert serialize_thread(thread) == before
    assert srv.requests == []


def test_stop_before_any_token_ends_the_run_and_adds_no_message(app, home, srv):
    configure_provider(home, srv)
    srv.push_hang()
    thread = make_thread([user("wait")])
    cancel = CancelToken()
    future = app.runner.submit(thread, RunOptions(), cancel=cancel)
    assert srv.request_seen.wait(WAIT)
    cancel.cancel()
    result = future.result(timeout=WAIT)
    assert result.status == "stopped"
    assert result.new_message_ids == [] and len(thread.messages) == 1
    assert srv.disconnected.wait(WAIT)


def test_continuing_a_mixed_batch_runs_the_builtin_calls_left_unanswered(app, home, srv, tmp_path):
    configure_provider(home, srv)
    (tmp_path / "f.txt").write_text("data", encoding="utf-8")
    read = builtin_tool("read")
    assert read is not None
    srv.push(Turn(tool_calls=[ToolCallSpec(id="c_fn", name="lookup", arguments={"word": "w"}),
                              ToolCallSpec(id="c_rd", name="read", arguments={"description": "d", "path": str(tmp_path / "f.txt")})]),
             Turn(text="both done"))
    thread = make_thread([user("go")], context={"tools": [FUNCTION_TOOL, read.model_dump(exclude_unset=True)]})

    paused = app.runner.run(thread, RunOptions(react=True))
    assert paused.status == "paused"
    assert [c for _m, c in paused.paused_calls] == ["c_fn", "c_rd"]

    done = app.runner.run(thread, RunOptions(react=True, tool_results={"c_fn": ("word", False)}))
    assert done.status == "completed", done.error
    calls = {c.id: c for c in thread.messages[1].toolCalls}
    assert calls["c_fn"].output.text() == "word"
    assert calls["c_rd"].output.text() == "1\tdata"
    assert thread.messages[-1].text() == "both done"


def test_react_stops_after_max_turns(app, home, srv):
    configure_provider(home, srv)
    read = builtin_tool("read")
    assert read is not None
    srv.push(*[Turn(tool_calls=[ToolCallSpec(id=f"c{i}", name="read", arguments={"description": "d", "path": "/nonexistent/x"})])
               for i in range(5)])
    thread = make_thread([user("loop")], context={"tools": [read.model_dump(exclude_unset=True)]})

    result = app.runner.run(thread, RunOptions(react=True, max_turns=2))

    assert result.status == "completed" and result.turns == 2
    assert len(srv.requests) == 2 and len(result.new_message_ids) == 2
    assert thread.messages[-1].toolCalls[0].output.isError is True


def test_unparseable_tool_arguments_keep_the_raw_text(app, home, srv):
    configure_provider(home, srv)
    srv.push(Turn(tool_calls=[ToolCallSpec(id="c_bad", name="lookup", arguments='{"word": "unfinished')]))
    thread = make_thread([user("go")], context={"tools": [FUNCTION_TOOL]})

    result = app.runner.run(thread, RunOptions())

    assert result.status == "completed"
    call = thread.messages[-1].toolCalls[0]
    assert call.input.partialArguments == '{"word": "unfinished'
    assert call.input.arguments == {"word": "unfinished"}
    assert call.output is not None and call.output.text() == ""


def test_ask_user_question_pauses_react(app, home, srv):
    configure_provider(home, srv)
    ask = builtin_tool("ask_user_question")
    assert ask is not None
    srv.push(Turn(tool_calls=[ToolCallSpec(id="c_ask", name="ask_user_question",
                                           arguments={"questions": [{"question": "Which?", "options": [{"label": "A"}]}]})]))
    thread = make_thread([user("help me choose")], context={"tools": [ask.model_dump(exclude_unset=True)]})
    result = app.runner.run(thread, RunOptions(react=True))
    assert result.status == "paused" and result.paused_calls[0][1] == "c_ask"


def test_tools_run_in_the_threads_working_directory_variable(app, home, srv, tmp_path):
    configure_provider(home, srv)
    bash = builtin_tool("bash")
    assert bash is not None
    srv.push(Turn(tool_calls=[ToolCallSpec(id="c_pwd", name="bash", arguments={"description": "where", "command": "pwd"})]))
    thread = make_thread([user("where are we?")], context={
        "tools": [bash.model_dump(exclude_unset=True)],
        "variables": {"cwd": {"type": "workingDirectory", "value": str(tmp_path)}}})

    result = app.runner.run(thread, RunOptions(auto_tools=True))

    assert result.status == "completed", result.error
    out = json.loads(thread.messages[-1].toolCalls[0].output.text())
    assert out["stdout"].strip() == str(tmp_path)


def test_a_failing_event_listener_does_not_break_the_run(app, home, srv):
    configure_provider(home, srv)
    srv.push(Turn(text="fine"))

    def broken(event: Any) -> None:
        raise RuntimeError("listener bug")

    result = app.runner.run(make_thread([user("hi")]), RunOptions(), on_event=broken)
    assert result.status == "completed" and result.thread.messages[-1].text() == "fine"


def test_closing_the_runner_stops_active_runs(app, home, srv):
    configure_provider(home, srv)
    srv.push(SLOW)
    first_text = threading.Event()
    future = app.runner.submit(make_thread([user("go")]), RunOptions(),
                               on_event=lambda e: first_text.set() if isinstance(e, ev.TextDelta) else None)
    assert first_text.wait(WAIT)
    app.runner.close()
    assert future.result(timeout=WAIT).status == "stopped"


def test_a_run_on_the_default_model_records_that_model_in_its_history_entry_only(app, home, srv):
    configure_provider(home, srv)  # the loopback model is the default model
    srv.push(Turn(text="Hi."))
    thread = make_thread([user("Say hi")])
    assert thread.model is None

    result = app.runner.run(thread, RunOptions())

    assert result.status == "completed", result.error
    assert thread.model is None  # the working thread still follows the default model
    recorded = thread.runHistory[-1].thread.model
    assert recorded is not None and (recorded.provider, recorded.id) == ("loop", "loopback-model")


def test_each_retry_is_reported_as_a_run_event_before_the_reply(app, home, srv):
    configure_provider(home, srv)
    srv.push_raw(status=429, headers={"Retry-After": "0"}, body=b'{"error": {"message": "slow down"}}')
    srv.push(Turn(text="second try"))
    events: list[Any] = []
    result = app.runner.run(make_thread([user("hi")]), RunOptions(), on_event=events.append)
    assert result.status == "completed", result.error
    retries = [e for e in events if isinstance(e, ev.Retrying)]
    assert len(retries) == 1 and retries[0].attempt == 2 and "slow down" in retries[0].reason
    first_text = next(i for i, e in enumerate(events) if isinstance(e, ev.TextDelta))
    assert events.index(retries[0]) < first_text
