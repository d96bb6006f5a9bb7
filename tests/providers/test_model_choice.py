"""Which model a thread's run calls when its saved model cannot run (no key, disabled, not
offered): `ProviderRegistry.choose` says the model and why, and `resolve` calls that model."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.core.model import ModelConfig
from tests.providers.helpers import registry
from tests.support.llm_server import LoopbackLLM, configure_provider

SAVED = ModelConfig(provider="openai", id="gpt-4.1-mini")


pytestmark = pytest.mark.usefixtures("no_keys")


def test_a_saved_model_without_a_key_falls_back_to_the_default_and_says_why(home: Path):
    with LoopbackLLM() as srv:
        configure_provider(home, srv)
        reg = registry(home)
        choice = reg.choose(SAVED)
        assert choice.model is not None and (choice.model.provider, choice.model.id) == ("loop", "loopback-model")
        assert choice.fell_back and choice.reason == "has no API key"
        endpoint, info = reg.resolve(SAVED)  # the run calls the model the editor shows
        assert (endpoint.provider_id, info.id) == ("loop", "loopback-model")


def test_a_saved_model_that_can_run_is_the_one_chosen(home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc")
    choice = registry(home).choose(SAVED)
    assert choice.model == SAVED and not choice.fell_back and choice.reason is None


def test_a_disabled_or_unknown_model_says_so(home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc")
    reg = registry(home)
    reg.models.set_model_enabled("openai", "gpt-4.1-mini", False)
    assert reg.choose(SAVED).reason == "is disabled in Settings › Models"
    assert reg.choose(ModelConfig(provider="openai", id="no-such-model")).reason == "is not offered by OpenAI"
    assert reg.choose(ModelConfig(provider="nowhere", id="m")).reason == "names a provider that is not configured"


def test_with_nothing_to_run_there_is_no_model_and_the_reason_stays(home: Path):
    choice = registry(home).choose(SAVED)
    assert choice.model is None and choice.reason == "has no API key"
    assert registry(home).choose(None).model is None
