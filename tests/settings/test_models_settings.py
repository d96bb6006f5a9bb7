"""settings/models.json: built-ins, keys, discovery, resolution, and a corrupt file kept as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from llmspace.core.model import ModelConfig
from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.providers.discovery import refresh_local
from llmspace.settings.models import ModelSettings
from tests.support.llm_server import LoopbackLLM, configure_provider


@pytest.fixture(autouse=True)
def no_env_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")


def write(home: Path, data: dict) -> Path:
    path = home / "settings" / "models.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), "utf-8")
    return path


def test_built_in_providers_are_listed_without_a_file(home: Path):
    s = ModelSettings(DataRoot(home))
    ids = [p.id for p in s.providers()]
    assert ids[:2] == ["openai", "anthropic"]
    assert {"ollama", "llama-cpp", "lm-studio", "vllm"} <= set(ids)
    ollama = s.provider("ollama")
    assert ollama.base_url == "http://127.0.0.1:11434/v1" and not ollama.needs_key
    claude = s.model_info("anthropic", "claude-sonnet-4-5")
    assert claude.cost_input == 3.0 and claude.api == "anthropic-messages"
    assert not (home / "settings" / "models.json").exists()  # nothing written just by reading


def test_a_corrupt_file_is_reported_kept_untouched_and_built_ins_still_work(home: Path):
    path = home / "settings" / "models.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"providers": [\n  {"id": "x",,}\n')
    before = path.read_bytes()
    s = ModelSettings(DataRoot(home))
    assert s.load_error is not None and "line 2" in str(s.load_error)
    assert s.provider("openai") is not None
    with pytest.raises(UserFacingError):
        s.set_default_model("openai", "gpt-5")
    assert path.read_bytes() == before


def test_edits_are_saved_with_a_trailing_newline_and_keep_unknown_keys(home: Path):
    write(home, {"providers": [{"id": "openai", "builtin": True, "futureKey": 1}], "other": True})
    s = ModelSettings(DataRoot(home))
    s.set_model_enabled("openai", "gpt-4o", False)
    s.set_default_model("openai", "gpt-5")
    raw = (home / "settings" / "models.json").read_bytes()
    assert raw.endswith(b"}\n")
    data = json.loads(raw)
    assert data["other"] is True and data["providers"][0]["futureKey"] == 1
    assert data["providers"][0]["disabledModels"] == ["gpt-4o"]
    assert data["defaultModel"] == {"provider": "openai", "id": "gpt-5"}


def test_api_key_from_env_reference_literal_provider_env_and_keyring(home: Path, monkeypatch: pytest.MonkeyPatch):
    write(home, {"providers": [{"id": "openai", "apiKey": "$MY_OPENAI"}, {"id": "anthropic", "apiKey": "sk-ant-literal-123"}]})
    s = ModelSettings(DataRoot(home))
    assert s.api_key("openai") is None and s.key_hint("openai") == "MY_OPENAI"
    monkeypatch.setenv("MY_OPENAI", "sk-from-env-456")
    assert s.api_key("openai") == "sk-from-env-456"
    assert s.api_key("anthropic") == "sk-ant-literal-123"
    write(home, {"providers": []})
    s.reload()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    assert s.api_key("anthropic") == "sk-ant-env"
    assert s.api_key("openai") is None


def test_the_os_keyring_is_the_third_source(home: Path, monkeypatch: pytest.MonkeyPatch):
    keyring = pytest.importorskip("keyring")
    from keyring.backend import KeyringBackend

    class Memory(KeyringBackend):
        priority = 1  # type: ignore[assignment]
        store: ClassVar[dict[tuple[str, str], str]] = {}

        def get_password(self, service, username):
            return self.store.get((service, username))

        def set_password(self, service, username, password):
            self.store[(service, username)] = password

        def delete_password(self, service, username):
            self.store.pop((service, username), None)

    old = keyring.get_keyring()
    keyring.set_keyring(Memory())
    try:
        monkeypatch.delenv("LLM_SPACE_NO_KEYRING")
        s = ModelSettings(DataRoot(home))
        assert s.store_key_in_keyring("openai", "sk-from-keyring-789")
        assert s.api_key("openai") == "sk-from-keyring-789"
        assert s.is_configured("openai")
        assert not (home / "settings" / "models.json").exists()  # the key is not in the file
        assert s.store_key_in_keyring("openai", None) and s.api_key("openai") is None
    finally:
        keyring.set_keyring(old)


def test_local_models_are_discovered_cached_on_disk_and_unreachable_servers_are_quiet(home: Path):
    with LoopbackLLM(models=["qwen3:8b", "llama3.2"]) as srv:
        write(home, {"providers": [{"id": "ollama", "baseUrl": srv.base_url}]})
        s = ModelSettings(DataRoot(home))
        assert s.provider("ollama").models == []
        result = refresh_local(s)  # the HTTP probing lives in providers/discovery.py
        assert result["ollama"] is True and result["vllm"] in (True, False)
        assert [m.id for m in s.provider("ollama").models] == ["qwen3:8b", "llama3.2"]
        assert s.is_available("ollama", "qwen3:8b")
    cache = json.loads((home / "data" / "local-models.json").read_text())
    assert cache["ollama"] == ["qwen3:8b", "llama3.2"]
    again = ModelSettings(DataRoot(home))  # a new process sees the cached list
    assert [m.id for m in again.provider("ollama").models] == ["qwen3:8b", "llama3.2"]
    assert refresh_local(again, ["ollama"], timeout=0.5) == {"ollama": False}  # server gone: quietly unavailable
    assert again.provider("ollama").reachable is False


def test_model_resolution_saved_then_default_then_first_enabled(home: Path, monkeypatch: pytest.MonkeyPatch):
    with LoopbackLLM() as srv:
        configure_provider(home, srv, provider_id="zeta", model_id="m1", extra_models=["m2"], make_default=False)
        s = ModelSettings(DataRoot(home))
        assert s.resolve_model(ModelConfig(provider="zeta", id="m2")).id == "m2"
        # nothing saved, no default: the first enabled model of providers sorted by name
        assert s.resolve_model(None) == ModelConfig(provider="zeta", id="m1")
        s.set_default_model("zeta", "m2")
        assert s.resolve_model(ModelConfig(provider="openai", id="gpt-5")).id == "m2"  # no key → default
        s.set_model_enabled("zeta", "m2", False)
        assert s.resolve_model(None) == ModelConfig(provider="zeta", id="m1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
        assert s.resolve_model(ModelConfig(provider="openai", id="gpt-5")).provider == "openai"


def test_custom_providers_are_validated_and_saved(home: Path):
    s = ModelSettings(DataRoot(home))
    with pytest.raises(UserFacingError):
        s.set_provider({"id": "mine"})  # no base URL
    with pytest.raises(UserFacingError):
        s.set_provider({"id": "openai", "baseUrl": "http://x"})  # built-in id
    s.set_provider({"id": "mine", "name": "Mine", "baseUrl": "http://127.0.0.1:9/v1",
                    "models": [{"id": "q", "reasoning": True, "cost": {"input": 1, "output": 2}}]})
    view = s.provider("mine")
    assert view.api == "openai-completions" and view.models[0].reasoning and view.models[0].cost_output == 2.0
    assert json.loads((home / "settings" / "models.json").read_text())["providers"][0]["customModels"] == ["q"]
    s.remove_provider("mine")
    assert s.provider("mine") is None
