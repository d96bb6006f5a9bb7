"""ProviderRegistry: adapters by API and model resolution into an Endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.core.model import ModelConfig
from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.providers.events import Finish, TextDelta
from llmspace.providers.registry import ProviderRegistry
from llmspace.settings.models import ModelSettings
from tests.support.llm_server import LoopbackLLM, configure_provider


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")


def registry(home: Path) -> ProviderRegistry:
    root = DataRoot(home)
    return ProviderRegistry(ModelSettings(root), root)


def test_no_model_anywhere_asks_the_user_to_select_one(home: Path):
    with pytest.raises(UserFacingError, match="Select a model to run"):
        registry(home).resolve(None)


def test_a_missing_key_names_the_env_var_to_set(home: Path):
    with pytest.raises(UserFacingError) as info:
        registry(home).resolve(ModelConfig(provider="anthropic", id="claude-sonnet-4-5"), provider="anthropic", model_id="claude-sonnet-4-5")
    assert "ANTHROPIC_API_KEY" in str(info.value)


def test_a_built_in_provider_with_a_key_resolves_to_its_endpoint_and_prices(home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc")
    endpoint, info = registry(home).resolve(ModelConfig(provider="openai", id="gpt-4.1"))
    assert endpoint.base_url == "https://api.openai.com/v1" and endpoint.api == "openai-responses" and endpoint.api_key == "sk-abc"
    assert info.cost_input == 2.0


def test_explicit_flags_win_over_the_saved_model_and_unknown_ids_are_allowed(home: Path):
    with LoopbackLLM() as srv:
        configure_provider(home, srv, api="anthropic-messages", provider_id="loop", model_id="m1")
        reg = registry(home)
        endpoint, info = reg.resolve(ModelConfig(provider="openai", id="gpt-5"), provider="loop", model_id="brand-new")
        assert endpoint.provider_id == "loop" and endpoint.api == "anthropic-messages" and info.id == "brand-new"
        endpoint, info = reg.resolve(None, model_id="m1")  # provider found from the model id
        assert endpoint.provider_id == "loop" and info.cost_output == 2.0
        endpoint, info = reg.resolve(None, provider="loop")  # first enabled model of that provider
        assert info.id == "m1"


def test_default_model_is_used_and_adapters_stream_through_the_registry(home: Path):
    with LoopbackLLM() as srv:
        configure_provider(home, srv, api="openai-completions")
        reg = registry(home)
        endpoint, info = reg.resolve(None)
        assert endpoint.base_url == srv.base_url
        from llmspace.providers.base import CancelToken, ModelRequest, NeutralMessage

        req = ModelRequest(endpoint=endpoint, model=info, system_prompt="", messages=(NeutralMessage(role="user", text="hi"),))
        events = list(reg.adapter(endpoint.api).stream(req, CancelToken()))
        assert events[0] == TextDelta("ok") and events[-1] == Finish("stop")


def test_registered_adapters_serve_their_own_provider_id(home: Path):
    class Fake:
        api = "replay"

        def stream(self, request, cancel):
            yield Finish("stop")

    reg = registry(home)
    fake = Fake()
    reg.register_adapter("replay", fake)  # type: ignore[arg-type]
    assert reg.adapter("replay") is fake
    endpoint, info = reg.resolve(ModelConfig(provider="openai", id="gpt-5"), provider="replay", model_id="run-1")
    assert endpoint.api == "replay" and endpoint.provider_id == "replay" and info.id == "run-1"
    endpoint, _ = reg.resolve(ModelConfig(provider="replay", id="run-2"))
    assert endpoint.api == "replay"


def test_an_unknown_api_is_a_clear_error(home: Path):
    with pytest.raises(UserFacingError, match="No adapter"):
        registry(home).adapter("google-gemini")


def test_a_custom_provider_whose_key_env_var_is_unset_names_it(home: Path, monkeypatch: pytest.MonkeyPatch):
    with LoopbackLLM() as srv:
        configure_provider(home, srv, api_key="$LOOP_TEST_KEY")
        with pytest.raises(UserFacingError, match="LOOP_TEST_KEY"):
            registry(home).resolve(None)
        monkeypatch.setenv("LOOP_TEST_KEY", "sk-loop-123")
        endpoint, _ = registry(home).resolve(None)
        assert endpoint.api_key == "sk-loop-123"
