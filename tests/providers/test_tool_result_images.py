"""Tool results with images, as each API allows them: Anthropic `tool_result` content
blocks, Responses `function_call_output` item lists, and for Chat Completions text-only tool
messages followed by one user message with the images. Text-only results are unchanged."""

from __future__ import annotations

from llmspace.providers.anthropic_messages import AnthropicMessagesAdapter
from llmspace.providers.anthropic_messages import build_payload as anthropic_payload
from llmspace.providers.base import NeutralMessage, NeutralToolCall
from llmspace.providers.openai_completions import OpenAICompletionsAdapter
from llmspace.providers.openai_completions import build_payload as completions_payload
from llmspace.providers.openai_responses import OpenAIResponsesAdapter
from llmspace.providers.openai_responses import build_payload as responses_payload
from tests.providers.helpers import collect, conversation, make_request

PNG, GIF = "iVBORw0KGgo=", "R0lGODlhAQABAAAAACw="


def _turn() -> tuple[NeutralMessage, ...]:
    """An assistant turn with three calls: text + image, image only (an error), text only."""
    calls = (NeutralToolCall(id="call_1", name="diagram", arguments={}, result_text="Rendered.", result_images=(("image/png", PNG),)),
             NeutralToolCall(id="call_2", name="snap", arguments={"n": 2}, result_is_error=True,
                             result_images=(("image/gif", GIF), ("image/png", PNG))),
             NeutralToolCall(id="call_3", name="read", arguments={"path": "a"}, result_text="A"))
    return (NeutralMessage(role="user", text="Draw it"), NeutralMessage(role="assistant", tool_calls=calls),
            NeutralMessage(role="user", text="Thanks"))


def test_anthropic_sends_images_as_blocks_inside_the_tool_result(srv):
    collect(AnthropicMessagesAdapter(), make_request(srv, "anthropic-messages", messages=_turn()))
    results = srv.requests[-1].body_json["messages"][2]
    assert results == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_1", "content": [
            {"type": "text", "text": "Rendered."},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]},
        {"type": "tool_result", "tool_use_id": "call_2", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": GIF}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}], "is_error": True},
        {"type": "tool_result", "tool_use_id": "call_3", "content": "A"},
        {"type": "text", "text": "Thanks"}]}


def test_responses_sends_images_as_input_items_of_the_function_call_output(srv):
    collect(OpenAIResponsesAdapter(), make_request(srv, "openai-responses", messages=_turn()))
    outputs = [i for i in srv.requests[-1].body_json["input"] if i.get("type") == "function_call_output"]
    assert outputs == [
        {"type": "function_call_output", "call_id": "call_1", "output": [
            {"type": "input_text", "text": "Rendered."},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"}]},
        {"type": "function_call_output", "call_id": "call_2", "output": [
            {"type": "input_image", "image_url": f"data:image/gif;base64,{GIF}", "detail": "auto"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"}]},
        {"type": "function_call_output", "call_id": "call_3", "output": "A"},
    ]


def test_chat_completions_sends_the_images_in_one_user_message_after_the_tool_messages(srv):
    collect(OpenAICompletionsAdapter(), make_request(srv, "openai-completions", messages=_turn()))
    messages = srv.requests[-1].body_json["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "tool", "user", "user"]
    assert messages[3:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "Rendered."},
        {"role": "tool", "tool_call_id": "call_2", "content": "The tool returned 2 images; they follow in the next message."},
        {"role": "tool", "tool_call_id": "call_3", "content": "A"},
        {"role": "user", "content": [
            {"type": "text", "text": "Images returned by tool diagram (call call_1):"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            {"type": "text", "text": "Images returned by tool snap (call call_2):"},
            {"type": "image_url", "image_url": {"url": f"data:image/gif;base64,{GIF}"}},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}]},
        {"role": "user", "content": "Thanks"},
    ]


def test_text_only_results_produce_the_same_payload_as_before(srv):
    msgs = conversation()  # text results only (one of them an error)
    chat = completions_payload(make_request(srv, "openai-completions", messages=msgs))["messages"]
    assert chat[3:] == [{"role": "tool", "tool_call_id": "call_1", "content": "A"},
                        {"role": "tool", "tool_call_id": "call_2", "content": "no such file"},
                        {"role": "user", "content": "Thanks"}]
    anthropic = anthropic_payload(make_request(srv, "anthropic-messages", messages=msgs))["messages"]
    assert anthropic[2]["content"][:2] == [{"type": "tool_result", "tool_use_id": "call_1", "content": "A"},
                                           {"type": "tool_result", "tool_use_id": "call_2", "content": "no such file", "is_error": True}]
    responses = responses_payload(make_request(srv, "openai-responses", messages=msgs))["input"]
    assert [i for i in responses if i.get("type") == "function_call_output"] == [
        {"type": "function_call_output", "call_id": "call_1", "output": "A"},
        {"type": "function_call_output", "call_id": "call_2", "output": "no such file"}]
