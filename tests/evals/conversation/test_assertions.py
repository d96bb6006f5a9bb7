"""The assertions over a conversation, each passing and failing on a transcript, their values
refused when malformed, and what comes next in a conversation (the stop marker, maxUserTurns,
maxTurns)."""

from __future__ import annotations

import pytest

from llmspace.errors import UserFacingError
from llmspace.evals.assertions import parse_assertion
from llmspace.evals.conversation import next_step, user_entry
from llmspace.evals.conversation_checks import check_conversation, judge_check, judge_request
from llmspace.evals.conversation_setup import Scenario
from llmspace.evals.plan import Cell

CONVERSATION = [
    {"role": "user", "text": "Refund order A17.", "by": "opening"},
    {"role": "assistant", "text": "", "toolCalls": [{"id": "c1", "name": "lookup_order", "arguments": {"order_id": "A17"}}]},
    {"role": "tool", "id": "c1", "name": "lookup_order", "arguments": {"order_id": "A17"}, "result": "shipped", "simulated": "model"},
    {"role": "assistant", "text": "It shipped. Why the refund?"},
    {"role": "user", "text": "It broke.", "by": "simulator"},
    {"role": "assistant", "text": "", "toolCalls": [{"id": "c2", "name": "refund", "arguments": {"order_id": "A17", "reason": "It broke."}}]},
    {"role": "tool", "id": "c2", "name": "refund", "arguments": {"order_id": "A17"}, "result": "ok", "simulated": "fixed"},
    {"role": "assistant", "text": "Refunded."},
    {"role": "user", "text": "", "by": "simulator", "stop": True},
]
CALLS = (("lookup_order", {"order_id": "A17"}), ("refund", {"order_id": "A17", "reason": "It broke."}))
CELL = Cell("c|m|default|#1", "c", "loop/agent", "default", 1, {"tools": []}, ())


def verdict(raw: dict) -> tuple[bool, str]:
    c = check_conversation(parse_assertion(raw, "test"), CELL, CONVERSATION, "Refunded.", CALLS)
    return c.passed, c.reason


@pytest.mark.parametrize("raw", [
    {"type": "tool-called", "value": "refund"},
    {"type": "tool-called", "value": {"name": "refund", "arguments": {"order_id": "A17"}, "times": 1}},
    {"type": "tool-called", "value": {"name": "lookup_order", "before": "refund"}},
    {"type": "no-tool-called", "value": "cancel_order"},
    {"type": "no-tool-called", "value": {"name": "refund", "arguments": {"order_id": "B2"}}},
    {"type": "turns", "value": 2},
    {"type": "template", "value": "toolCalls | length == 2 and conversation[0].by == 'opening' and finalReply == 'Refunded.'"},
    {"type": "contains", "value": "Refunded"},
])
def test_a_conversation_assertion_that_holds_passes(raw):
    assert verdict(raw) == (True, "")


@pytest.mark.parametrize(("raw", "reason"), [
    ({"type": "tool-called", "value": "cancel_order"}, "cancel_order was never called"),
    ({"type": "tool-called", "value": {"name": "refund", "times": 2}}, "refund was called 1 time(s), not 2"),
    ({"type": "tool-called", "value": {"name": "refund", "before": "lookup_order"}}, "lookup_order was called before refund"),
    ({"type": "no-tool-called", "value": "refund"}, "refund was called"),
    ({"type": "no-tool-called"}, "a tool was called"),
    ({"type": "turns", "value": 1}, "2 user turns (at most 1)"),
    ({"type": "template", "value": "toolCalls | length > 5"}, "toolCalls | length > 5 is false"),
])
def test_a_conversation_assertion_that_does_not_hold_fails_saying_why(raw, reason):
    assert verdict(raw) == (False, reason)


@pytest.mark.parametrize("raw", [
    {"type": "turns"}, {"type": "turns", "value": 0}, {"type": "goal-met", "value": 3}, {"type": "not-no-leak"},
    {"type": "tool-called", "value": {"name": "refund", "times": -1}}, {"type": "tool-called", "value": {"name": "x", "after": "y"}},
])
def test_a_malformed_conversation_assertion_is_refused_when_read(raw):
    with pytest.raises(UserFacingError):
        parse_assertion(raw, "test")


def test_the_judged_assertions_show_the_judge_the_goal_and_transcript_and_pass_at_the_threshold():
    scenario = Scenario(goal="Get A17 refunded.", unknown=("The delivery date.",))
    goal = parse_assertion({"type": "goal-met"}, "t")
    leak = parse_assertion({"type": "no-leak"}, "t")
    rubric = parse_assertion({"type": "llm-rubric", "value": "polite\nbrief"}, "t")
    prompt = judge_request(goal, scenario, CONVERSATION, None)["messages"][0]["text"]
    assert "Get A17 refunded." in prompt and "Assistant called refund" in prompt and "Tool lookup_order returned: shipped" in prompt
    assert "The delivery date." in judge_request(leak, scenario, CONVERSATION, None)["messages"][0]["text"]
    assert judge_check(goal, '{"score": 5, "reason": "done"}', None, scenario).passed
    assert not judge_check(leak, '{"scores": {"no leak": 1}, "reason": "said Friday"}', None, scenario).passed
    assert judge_check(rubric, '{"scores": {"polite": 4, "brief": 3}}', None, scenario).score == 3.5
    with pytest.raises(ValueError):
        judge_check(goal, "I think it went fine", None, scenario)


def test_the_stop_marker_ends_the_conversation_and_text_before_it_is_kept():
    assert user_entry("Thanks, bye! ###STOP###") == {"role": "user", "text": "Thanks, bye!", "by": "simulator", "stop": True}
    assert user_entry("###STOP###") == {"role": "user", "text": "", "by": "simulator", "stop": True}
    assert next_step([*CONVERSATION], 10, 50) == "end"
    assert next_step(CONVERSATION[:-1], 10, 50) == "user"
    assert next_step(CONVERSATION[:-1], 2, 50) == "end"  # maxUserTurns reached
    assert next_step(CONVERSATION[:5], 10, 50) == "agent"
    assert next_step(CONVERSATION[:6], 10, 50) == "tool"


def test_max_turns_caps_the_model_calls_that_answer_one_user_message():
    looping = [{"role": "user", "text": "go"}]
    for i in range(3):
        looping += [{"role": "assistant", "text": "", "toolCalls": [{"id": f"c{i}", "name": "t", "arguments": {}}]},
                    {"role": "tool", "id": f"c{i}", "name": "t", "result": "again"}]
    assert next_step(looping, 10, 4) == "agent"
    assert next_step(looping, 10, 3) == "user"  # the reply ended after 3 calls: the user speaks next
