"""Credentials never follow a redirect to another origin: a provider (any of the three APIs,
also a plugin's, which runs through the same adapters) or a local server's model list that
answers with a redirect to another host or port is not followed, and the error says where it
pointed. A redirect within the origin still works."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace

import pytest

from llmspace.cancel import CancelToken
from llmspace.providers.anthropic_messages import AnthropicMessagesAdapter
from llmspace.providers.discovery import probe
from llmspace.providers.events import ErrorEvent
from llmspace.providers.openai_completions import OpenAICompletionsAdapter
from llmspace.providers.openai_responses import OpenAIResponsesAdapter
from llmspace.settings.provider_entries import custom_view
from tests.providers.helpers import make_request, text_of
from tests.support.llm_server import LoopbackLLM
from tests.support.redirect_front import RedirectFront

ADAPTERS = {
    "openai-completions": OpenAICompletionsAdapter,
    "openai-responses": OpenAIResponsesAdapter,
    "anthropic-messages": AnthropicMessagesAdapter,
}
PATHS = {"openai-completions": "/v1/chat/completions", "openai-responses": "/v1/responses",
         "anthropic-messages": "/v1/messages"}


@pytest.fixture
def other() -> Iterator[LoopbackLLM]:
    """The server on another port a redirect points to; it records every request it gets."""
    with LoopbackLLM() as server:
        yield server


@pytest.fixture
def front() -> Iterator[RedirectFront]:
    with RedirectFront() as server:
        yield server


def _headers() -> dict[str, str]:
    u = uuid.uuid4().hex
    return {"X-Api-Secret": f"xs-{u[:16]}", "api-key": f"ak-{u[4:20]}", "X-Auth-Token": f"at-{u[8:24]}"}


@pytest.mark.parametrize("status", [307, 308, 302])
@pytest.mark.parametrize("api", list(ADAPTERS))
def test_a_redirect_to_another_port_is_not_followed_and_no_credential_reaches_it(front, other, api, status):
    front.redirect("/v1/", other.base_url + "/", status=status)
    request = make_request(other, api, headers=_headers())
    request = replace(request, endpoint=replace(request.endpoint, base_url=front.url + "/v1"))

    events = list(ADAPTERS[api]().stream(request, CancelToken()))

    assert other.requests == [], f"the redirect target received {other.requests[0].headers}"
    assert len(front.redirected) == 1  # asked once: not retried, as another attempt cannot help
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1 and not errors[0].retryable, events
    assert f"redirected to another origin http://127.0.0.1:{other.port}" in errors[0].message


@pytest.mark.parametrize("api", list(ADAPTERS))
def test_a_redirect_within_the_origin_is_followed_with_the_credentials(srv, api):
    srv.push_raw(status=307, headers={"Location": PATHS[api].replace("/v1/", "/v1/moved/../")})
    headers = _headers()
    request = make_request(srv, api, headers=headers)

    events = list(ADAPTERS[api]().stream(request, CancelToken()))

    assert text_of(events) == "ok", events
    assert len(srv.requests) == 2
    final = {k.lower(): v for k, v in srv.requests[-1].headers.items()}
    assert final["x-api-secret"] == headers["X-Api-Secret"] and final["x-auth-token"] == headers["X-Auth-Token"]
    assert ("x-api-key" in final) if api == "anthropic-messages" else ("authorization" in final)


def test_discovery_does_not_follow_a_redirect_to_another_origin(front, other):
    front.redirect("/v1/", other.base_url + "/")
    view = custom_view({"id": "local", "baseUrl": front.url + "/v1", "headers": _headers()})

    assert probe(view, timeout=5) is None
    assert other.requests == [], f"the redirect target received {other.requests[0].headers}"


def test_discovery_follows_a_redirect_within_the_origin(front):
    front.redirect("/old/", "/v1/")
    headers = _headers()
    view = custom_view({"id": "local", "baseUrl": front.url + "/old", "headers": headers})

    assert probe(view, timeout=5) == []
    assert front.requests[-1].headers.get("X-Api-Secret") == headers["X-Api-Secret"]


def test_a_plugin_model_provider_does_not_follow_a_redirect_to_another_origin(home, front, other, monkeypatch):
    from llmspace.app import App
    from llmspace.paths import DataRoot
    from llmspace.providers.base import ModelRequest, NeutralMessage
    from tests.plugins.builders import make_plugin

    key = f"kit-{uuid.uuid4().hex[:20]}"
    monkeypatch.setenv("KIT_MODEL_KEY", key)
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
    front.redirect("/v1/", other.base_url + "/")
    provider = {"id": "cloud", "name": "Kit Cloud", "api": "anthropic-messages", "baseUrl": front.url + "/v1",
                "apiKey": "$KIT_MODEL_KEY", "headers": {"X-Workspace": "ws-secret-0123456789"},
                "models": [{"id": "kit-1", "name": "Kit One"}]}
    make_plugin(home, "kit", files={"models.json": {"providers": [provider]}})
    app = App(DataRoot(home))
    try:
        endpoint, info = app.providers.resolve(None, provider="plugin:kit:model-provider:cloud", model_id="kit-1")
        request = ModelRequest(endpoint=endpoint, model=info, system_prompt="", messages=(NeutralMessage(role="user", text="Hi"),))
        events = list(app.providers.adapter(endpoint.api).stream(request, CancelToken()))
    finally:
        app.close()

    assert other.requests == [], f"the redirect target received {other.requests[0].headers}"
    assert front.redirected[0].headers.get("x-api-key") == key  # it was this provider's call
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert f"redirected to another origin http://127.0.0.1:{other.port}" in error.message
