"""Provider timeouts: connect/read timeouts and the retry deadline come from models.json per
provider; a silent or stalled server is reported as "no data for N s"; retries stop at the
deadline. Servers stall deliberately; the timeouts are small so each test takes about a second."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pytest

from llmspace.cancel import CancelToken
from llmspace.core.model import ModelConfig
from llmspace.paths import DataRoot
from llmspace.providers.anthropic_messages import AnthropicMessagesAdapter
from llmspace.providers.base import Endpoint, ModelRequest, NeutralMessage
from llmspace.providers.events import ErrorEvent, TextDelta
from llmspace.providers.openai_completions import OpenAICompletionsAdapter
from llmspace.providers.openai_responses import OpenAIResponsesAdapter
from llmspace.providers.registry import ProviderRegistry
from llmspace.providers.retry import stream_with_retries
from llmspace.settings.model_info import ModelInfo
from llmspace.settings.models import ModelSettings
from tests.providers.helpers import collect, make_request, text_of
from tests.support.llm_server import LoopbackLLM, configure_provider

ADAPTERS = {"openai-completions": OpenAICompletionsAdapter(), "openai-responses": OpenAIResponsesAdapter(),
            "anthropic-messages": AnthropicMessagesAdapter()}


def quick(request: ModelRequest, **timeouts: float) -> ModelRequest:
    return dataclasses.replace(request, endpoint=dataclasses.replace(request.endpoint, **timeouts))


# -- settings -------------------------------------------------------------------------------
pytestmark = pytest.mark.usefixtures("no_keys")


def test_timeouts_are_read_per_provider_from_models_json_and_reach_the_endpoint(home: Path, srv: LoopbackLLM):
    path = configure_provider(home, srv)
    configure_provider(home, srv, provider_id="plain", make_default=False)
    data = json.loads(path.read_text("utf-8"))
    data["providers"][0].update({"connectTimeout": 2.5, "readTimeout": 7, "retryDeadline": 30, "progressTimeout": 90})
    data["providers"].append({"id": "openai", "builtin": True, "readTimeout": 300})
    path.write_text(json.dumps(data), "utf-8")
    root = DataRoot(home)
    reg = ProviderRegistry(ModelSettings(root), root)

    ep, _ = reg.resolve(ModelConfig(provider="loop", id="loopback-model"))
    assert (ep.connect_timeout, ep.read_timeout, ep.retry_deadline, ep.progress_timeout) == (2.5, 7.0, 30.0, 90.0)
    ep, _ = reg.resolve(None, provider="plain", model_id="loopback-model")
    assert (ep.connect_timeout, ep.read_timeout, ep.retry_deadline, ep.progress_timeout) == (10.0, 60.0, 120.0, 300.0)  # the defaults
    assert ModelSettings(root).provider("openai").timeouts["read_timeout"] == 300.0  # built-ins too


def test_a_timeout_that_is_not_a_positive_number_takes_the_default(home: Path):
    path = home / "settings" / "models.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"providers": [{"id": "x", "baseUrl": "http://127.0.0.1:1/v1", "connectTimeout": "fast",
                                               "readTimeout": -1, "retryDeadline": True}]}), "utf-8")
    view = ModelSettings(DataRoot(home)).provider("x")
    assert view is not None and view.timeouts == {"connect_timeout": 10.0, "read_timeout": 60.0, "retry_deadline": 120.0,
                                                  "progress_timeout": 300.0}


def test_the_endpoint_defaults_are_10_s_to_connect_and_60_s_without_data():
    ep = Endpoint(provider_id="p", api="openai-completions", base_url="http://x")
    assert (ep.connect_timeout, ep.read_timeout, ep.retry_deadline) == (10.0, 60.0, 120.0)


# -- silent and stalled servers ---------------------------------------------------------------
@pytest.mark.parametrize("api", list(ADAPTERS))
def test_a_server_that_never_answers_is_reported_as_sending_no_data_for_the_read_timeout(srv: LoopbackLLM, api: str):
    srv.push_hang(silent=True)
    started = time.monotonic()
    events = collect(ADAPTERS[api], quick(make_request(srv, api), read_timeout=0.3))
    assert time.monotonic() - started < 5
    [err] = events
    assert isinstance(err, ErrorEvent) and err.retryable
    assert err.message.startswith("loop: the server sent no data for 0.3 s.")
    assert "readTimeout" in err.message and "settings/models.json" in err.message


@pytest.mark.parametrize("api", list(ADAPTERS))
def test_a_stream_that_stalls_midway_is_reported_as_sending_no_data(srv: LoopbackLLM, api: str):
    srv.push_hang()  # one or two events, then silence with the connection open
    events = collect(ADAPTERS[api], quick(make_request(srv, api), read_timeout=0.3))
    err = events[-1]
    assert isinstance(err, ErrorEvent), events
    assert err.message.startswith("loop: the server sent no data for 0.3 s."), err.message


def test_a_stall_in_an_unframed_http_1_0_style_stream_is_reported_not_raised(srv: LoopbackLLM):
    first = b'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n'
    srv.push_raw(body=[first], content_type="text/event-stream", chunked=False, hang=True)
    events = collect(ADAPTERS["openai-completions"], quick(make_request(srv, "openai-completions"), read_timeout=0.3))
    assert text_of(events) == "Hel"
    assert isinstance(events[-1], ErrorEvent) and "no data for 0.3 s" in events[-1].message


# -- the retry deadline ---------------------------------------------------------------------
def test_retries_of_a_silent_server_stop_at_the_retry_deadline(srv: LoopbackLLM):
    for _ in range(4):
        srv.push_hang(silent=True)
    request = quick(make_request(srv, "openai-completions"), read_timeout=0.3, retry_deadline=1.0)
    started = time.monotonic()
    events = list(stream_with_retries(ADAPTERS["openai-completions"], request, CancelToken(), max_attempts=4))
    elapsed = time.monotonic() - started
    assert elapsed < 3.4  # without the deadline: 4 attempts of 0.3 s and 3.5 s of backoff (>= 4.7 s); room for a loaded CI
    assert len(srv.requests) <= 2
    [err] = events
    assert isinstance(err, ErrorEvent)
    assert "no data for" in err.message and "Gave up after" in err.message and "(retryDeadline 1 s)." in err.message


class Scripted:
    api = "scripted"

    def __init__(self, *attempts: list) -> None:
        self.attempts = list(attempts)
        self.requests: list[ModelRequest] = []

    def stream(self, request, cancel):
        self.requests.append(request)
        yield from self.attempts.pop(0)


def bare_request(**timeouts: float) -> ModelRequest:
    ep = Endpoint(provider_id="p", api="openai-completions", base_url="http://127.0.0.1:9/v1", **timeouts)  # type: ignore[arg-type]
    return ModelRequest(endpoint=ep, model=ModelInfo(id="m", name="m", api="openai-completions"), system_prompt="",
                        messages=(NeutralMessage(role="user", text="hi"),))


def test_a_retry_gets_at_most_the_time_left_before_the_deadline():
    busy = ErrorEvent("busy", 503, True)
    a = Scripted([busy], [busy], [TextDelta("ok")])
    events = list(stream_with_retries(a, bare_request(read_timeout=5.0, retry_deadline=3.0), CancelToken(),
                                      max_attempts=3, base_delay=0.001))
    assert events == [TextDelta("ok")]
    reads = [r.endpoint.read_timeout for r in a.requests]
    assert reads[0] == 5.0  # the first attempt keeps the configured timeout
    assert all(2.5 < r < 3.0 for r in reads[1:]), reads


def test_a_retry_after_beyond_the_deadline_reports_the_error_at_once():
    a = Scripted([ErrorEvent("busy", 429, True, 10.0)], [TextDelta("never")])
    started = time.monotonic()
    events = list(stream_with_retries(a, bare_request(retry_deadline=5.0), CancelToken(), max_delay=30.0))
    assert time.monotonic() - started < 5.0 and len(a.requests) == 1  # honouring Retry-After would wait 10 s
    [err] = events
    assert err.status == 429 and err.message.startswith("busy. Gave up after 1 attempt in ")


def test_editing_a_custom_provider_keeps_its_timeouts(home: Path):
    settings = ModelSettings(DataRoot(home))
    settings.set_provider({"id": "mine", "baseUrl": "http://127.0.0.1:1/v1", "readTimeout": 240})
    settings.set_provider({"id": "mine", "name": "Renamed", "baseUrl": "http://127.0.0.1:2/v1"})
    view = ModelSettings(DataRoot(home)).provider("mine")
    assert view is not None and view.name == "Renamed" and view.timeouts["read_timeout"] == 240.0


# -- the progress deadline ------------------------------------------------------------------
class _At:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url


@pytest.mark.parametrize("mode", ["keepalive", "slow-headers"])
def test_the_retry_layer_ends_every_attempt_that_makes_no_progress(mode: str):
    # every caller of stream_with_retries (the run loop, evals) gets the progress deadline
    from tests.support.trickle import Trickle

    with Trickle(every=0.2) as trickle:
        request = quick(make_request(_At(trickle.base_url(mode)), "openai-completions"),  # type: ignore[arg-type]
                        read_timeout=1.0, progress_timeout=1.0, retry_deadline=3.0)
        started = time.monotonic()
        events = list(stream_with_retries(ADAPTERS["openai-completions"], request, CancelToken()))
        elapsed = time.monotonic() - started
        assert elapsed < 10, elapsed  # without the deadline: never ends
        assert trickle.requests[mode] >= 2  # no output yet: retried
    [err] = events
    assert isinstance(err, ErrorEvent) and err.message.startswith("loop: no output for "), err
    assert "(progressTimeout)" in err.message and not err.in_stream
