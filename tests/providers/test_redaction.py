"""Secrets are removed by value (`llmspace/redact.py`): every configured API key, whatever its
shape, and every configured header value of 8+ characters, whatever the header's name,
from provider error messages (HTTP error bodies and errors sent mid-stream) and traces."""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path

import pytest

from llmspace.cancel import CancelToken
from llmspace.paths import DataRoot
from llmspace.providers.anthropic_messages import AnthropicMessagesAdapter
from llmspace.providers.events import ErrorEvent
from llmspace.providers.openai_completions import OpenAICompletionsAdapter
from llmspace.providers.openai_responses import OpenAIResponsesAdapter
from llmspace.providers.traces import TraceWriter
from llmspace.redact import MASK, Redactor, secret_values
from tests.providers.helpers import assert_clean, make_request, mid_stream_error

ADAPTERS = {
    "openai-completions": OpenAICompletionsAdapter,
    "openai-responses": OpenAIResponsesAdapter,
    "anthropic-messages": AnthropicMessagesAdapter,
}


def _secrets() -> dict[str, str]:
    """Fresh values per test (the process also remembers secrets it has seen)."""
    u = uuid.uuid4().hex
    return {"key": f"gw-{u[:20]}",  # an API key that does not look like `sk-…`
            "auth": f"tok{u[:16]}", "api_secret": f"xs-{u[4:20]}", "cookie": f"sess{u[8:28]}"}


def _request(srv, api: str, s: dict[str, str]):
    headers = {"Authorization": f"Bearer {s['auth']}", "X-Api-Secret": s["api_secret"],
               "Cookie": f"session={s['cookie']}; theme=dark"}
    req = make_request(srv, api, headers=headers)
    from dataclasses import replace

    return replace(req, endpoint=replace(req.endpoint, api_key=s["key"]))


def _echo(s: dict[str, str]) -> str:
    """What a careless server echoes: every header it received."""
    return (f"bad request; headers were Authorization: Bearer {s['auth']}, x-api-key: {s['key']}, "
            f"X-Api-Secret: {s['api_secret']}, Cookie: session={s['cookie']}; theme=dark, key={s['key']}")


@pytest.mark.parametrize("api", list(ADAPTERS))
def test_an_error_sent_mid_stream_is_shown_without_any_configured_secret(srv, api):
    s = _secrets()
    srv.push_raw(body=mid_stream_error(api, _echo(s)), content_type="text/event-stream")
    events = list(ADAPTERS[api]().stream(_request(srv, api, s), CancelToken()))
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1, events
    assert_clean(errors[0].message, s)
    assert MASK in errors[0].message and "bad request" in errors[0].message
    sent = srv.requests[-1].headers
    assert s["api_secret"] in str(sent.get("X-Api-Secret")) and s["cookie"] in str(sent.get("Cookie"))


@pytest.mark.parametrize("status", [401, 500])
@pytest.mark.parametrize("api", list(ADAPTERS))
def test_an_http_error_body_echoing_a_cookie_or_a_non_sk_key_is_redacted(srv, api, status):
    s = _secrets()
    srv.push_raw(status=status, body=json.dumps({"error": {"message": _echo(s)}}))
    events = list(ADAPTERS[api]().stream(_request(srv, api, s), CancelToken()))
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert error.status == status
    assert_clean(error.message, s)
    assert f"HTTP {status}" in error.message


def test_a_plain_text_error_body_is_redacted_too(srv):
    s = _secrets()
    srv.push_raw(status=500, body=_echo(s), content_type="text/plain")
    events = list(OpenAICompletionsAdapter().stream(_request(srv, "openai-completions", s), CancelToken()))
    assert_clean(next(e for e in events if isinstance(e, ErrorEvent)).message, s)


def test_a_trace_holds_no_configured_header_value_whatever_its_name(srv, home: Path):
    s = _secrets()
    req = _request(srv, "openai-completions", s)
    srv.push_raw(body=mid_stream_error("openai-completions", _echo(s)), content_type="text/event-stream")
    writer = TraceWriter(DataRoot(home))
    with writer.call(req) as trace:
        for event in OpenAICompletionsAdapter().stream(req, CancelToken()):
            trace.add(event)
            if isinstance(event, ErrorEvent):
                trace.error = event.message
    raw = trace.path.read_text("utf-8")
    assert_clean(raw, s)
    doc = json.loads(raw)
    assert doc["headers"]["Cookie"] == MASK and doc["headers"]["X-Api-Secret"] == MASK
    assert doc["headers"]["Authorization"] == MASK
    assert MASK in doc["error"]


def test_a_trace_error_given_by_the_caller_is_redacted(srv, home: Path):
    s = _secrets()
    req = _request(srv, "anthropic-messages", s)
    path = TraceWriter(DataRoot(home)).record(req, [], {"durationMs": 1}, error=_echo(s))
    assert_clean(path.read_text("utf-8"), s)


def test_secret_values_take_the_key_and_long_header_values_but_not_plain_headers():
    values = secret_values("abcd", {"Cookie": "a=0123456789; b=short", "X-Short": "1234567",
                                    "Content-Type": "application/json", "User-Agent": "my-agent/1.0",
                                    "Authorization": "Basic dXNlcjpwYXNzd29yZA=="})
    assert "abcd" in values
    assert "a=0123456789; b=short" in values and "0123456789" in values
    assert "1234567" not in values and "application/json" not in values and "my-agent/1.0" not in values
    assert "Basic dXNlcjpwYXNzd29yZA==" in values and "dXNlcjpwYXNzd29yZA==" in values
    assert "Basic" not in values and "short" not in values


def test_a_redactor_masks_json_escaped_secrets_and_nested_values():
    secret = 'pa"ss\\word-123'
    r = Redactor([secret])
    assert r.text(json.dumps({"v": secret})) == json.dumps({"v": MASK})
    assert r.value({"a": [secret, 1], secret: "x"}) == {"a": [MASK, 1], MASK: "x"}


@pytest.mark.parametrize("api", list(ADAPTERS))
def test_an_upper_cased_echo_of_a_key_or_header_is_redacted(srv, api):
    s = _secrets()
    srv.push_raw(status=400, body=json.dumps({"error": {"message": _echo(s).upper()}}))
    events = list(ADAPTERS[api]().stream(_request(srv, api, s), CancelToken()))
    message = next(e for e in events if isinstance(e, ErrorEvent)).message
    assert "BAD REQUEST" in message
    assert_clean(message, {k: v.upper() for k, v in s.items()})


def test_the_decoded_credential_of_a_basic_header_is_redacted(srv):
    u = uuid.uuid4().hex
    pair = f"alice:pw-{u[:12]}"
    basic = base64.b64encode(pair.encode()).decode()
    srv.push_raw(status=401, body=json.dumps({"error": {"message": f"user {pair} is not allowed"}}))
    req = make_request(srv, "openai-completions", headers={"Authorization": f"Basic {basic}"})
    from dataclasses import replace

    req = replace(req, endpoint=replace(req.endpoint, api_key=None))
    events = list(OpenAICompletionsAdapter().stream(req, CancelToken()))
    message = next(e for e in events if isinstance(e, ErrorEvent)).message
    assert "is not allowed" in message
    assert_clean(message, {"pair": pair, "password": pair.split(":", 1)[1]})


def test_a_trace_masks_every_configured_header_value_whatever_its_length_but_the_plain_ones(srv, home: Path):
    headers = {"X-Tenant": "t1", "X-Trace-Id": "1234567", "Authorization": "Bearer x", "x-api-key": "k",
               "Content-Type": "application/json", "Accept": "text/event-stream", "User-Agent": "my-agent/1.0"}
    req = make_request(srv, "anthropic-messages", headers=headers)
    doc = json.loads(TraceWriter(DataRoot(home)).record(req, [], {"durationMs": 1}).read_text("utf-8"))
    assert doc["headers"] == {"X-Tenant": MASK, "X-Trace-Id": MASK, "Authorization": MASK, "x-api-key": MASK,
                              "Content-Type": "application/json", "Accept": "text/event-stream",
                              "User-Agent": "my-agent/1.0"}
