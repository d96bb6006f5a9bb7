"""ProviderRegistry: adapters by API and model resolution into an Endpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.core.model import ModelConfig
from llmspace.errors import UserFacingError
from llmspace.providers.events import Finish, TextDelta
from llmspace.providers.registry import ProviderEntry
from llmspace.registry import BUILTIN, USER, plugin_source
from tests.providers.helpers import registry
from tests.support.llm_server import LoopbackLLM, configure_provider

pytestmark = pytest.mark.usefixtures("no_keys")


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
        from llmspace.cancel import CancelToken
        from llmspace.providers.base import ModelRequest, NeutralMessage

        req = ModelRequest(endpoint=endpoint, model=info, system_prompt="", messages=(NeutralMessage(role="user", text="hi"),))
        events = list(reg.adapter(endpoint.api).stream(req, CancelToken()))
        assert events[0] == TextDelta("ok") and events[-1] == Finish("stop")


def test_an_offline_provider_resolves_any_model_id_to_its_api(home: Path):
    class Fake:
        api = "fake-offline"

        def stream(self, request, cancel):
            yield Finish("stop")

    reg = registry(home)
    fake = Fake()
    reg.register_adapter("fake-offline", fake, source=plugin_source("fake"))  # type: ignore[arg-type]
    reg.providers.register("fake", ProviderEntry(id="fake", api="fake-offline", offline=True), source=plugin_source("fake"))
    assert reg.adapter("fake-offline") is fake
    endpoint, info = reg.resolve(ModelConfig(provider="openai", id="gpt-5"), provider="fake", model_id="run-1")
    assert endpoint.api == "fake-offline" and endpoint.provider_id == "fake" and info.id == "run-1"
    endpoint, info = reg.resolve(ModelConfig(provider="fake", id="run-2"))
    assert endpoint.api == "fake-offline" and info.id == "run-2"


def test_built_ins_and_replay_are_registrations_with_source_built_in(home: Path):
    reg = registry(home)
    for api in ("openai-completions", "openai-responses", "anthropic-messages", "replay"):
        assert reg.apis.registration(api).source == BUILTIN
    for provider in ("openai", "anthropic", "ollama", "replay"):
        assert reg.providers.registration(provider).source == BUILTIN
    replay = reg.model_api("replay")
    assert (replay.retried, replay.traced, replay.sets_thread_model) == (False, False, False)
    assert reg.model_api("openai-completions").build_payload is not None
    endpoint, _ = reg.resolve(None, provider="replay")
    assert endpoint.api == "replay" and endpoint.base_url == ""


def test_a_built_in_and_a_plugin_provider_with_one_id_are_both_inactive_with_an_error_naming_both(
        home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc")
    reg = registry(home)
    assert reg.resolve(ModelConfig(provider="openai", id="gpt-4.1"))[0].provider_id == "openai"
    reg.providers.register("openai", ProviderEntry(id="openai", api="openai-completions"),
                           source=plugin_source("acme"), files=("models.json",))
    assert "openai" not in reg.providers
    [conflict] = reg.providers.conflicts()
    assert set(conflict.sources) == {BUILTIN, "plugin:acme"}
    with pytest.raises(UserFacingError) as err:
        reg.resolve(ModelConfig(provider="openai", id="gpt-4.1"))
    assert "built-in" in str(err.value) and "plugin:acme (models.json)" in str(err.value)
    reg.providers.unregister_source(plugin_source("acme"))  # the plugin disabled: the built-in is back
    assert reg.resolve(ModelConfig(provider="openai", id="gpt-4.1"))[0].provider_id == "openai"


def test_a_models_json_entry_for_openai_extends_the_built_in_without_a_collision(home: Path):
    settings = home / "settings" / "models.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"providers": [
        {"id": "openai", "builtin": True, "apiKey": "sk-from-file", "baseUrl": "http://127.0.0.1:9/v1",
         "models": [{"id": "my-finetune", "name": "Mine"}]},
        {"id": "mine", "name": "Mine", "baseUrl": "http://127.0.0.1:9/v1", "api": "some-plugin-api",
         "models": [{"id": "m"}]},
    ]}), encoding="utf-8")
    reg = registry(home)
    assert reg.providers.conflicts() == []
    assert reg.providers.registration("openai").source == BUILTIN
    assert reg.providers.registration("mine").source == USER
    assert reg.providers.get("mine").api == "some-plugin-api"  # any API name is kept for the registry to judge
    endpoint, info = reg.resolve(ModelConfig(provider="openai", id="my-finetune"))
    assert endpoint.base_url == "http://127.0.0.1:9/v1" and endpoint.api_key == "sk-from-file" and info.name == "Mine"
    settings.write_text(json.dumps({"providers": []}), encoding="utf-8")  # the user removes their provider
    reg.models.reload()
    with pytest.raises(UserFacingError, match="Unknown provider 'mine'"):
        reg.resolve(None, provider="mine", model_id="m")
    assert "mine" not in reg.providers


def test_a_user_provider_with_a_built_in_id_that_is_not_a_catalogue_entry_collides(home: Path):
    settings = home / "settings" / "models.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"providers": [{"id": "replay", "baseUrl": "http://127.0.0.1:9/v1"}]}), encoding="utf-8")
    reg = registry(home)
    [conflict] = reg.providers.conflicts()
    assert set(conflict.sources) == {BUILTIN, USER}
    with pytest.raises(UserFacingError, match="registered by"):
        reg.resolve(None, provider="replay")


def test_an_unknown_api_is_a_clear_error(home: Path):
    with pytest.raises(UserFacingError, match="No model API"):
        registry(home).adapter("google-gemini")


def test_a_custom_provider_whose_key_env_var_is_unset_names_it(home: Path, monkeypatch: pytest.MonkeyPatch):
    with LoopbackLLM() as srv:
        configure_provider(home, srv, api_key="$LOOP_TEST_KEY")
        with pytest.raises(UserFacingError, match="LOOP_TEST_KEY"):
            registry(home).resolve(None)
        monkeypatch.setenv("LOOP_TEST_KEY", "sk-loop-123")
        endpoint, _ = registry(home).resolve(None)
        assert endpoint.api_key == "sk-loop-123"
