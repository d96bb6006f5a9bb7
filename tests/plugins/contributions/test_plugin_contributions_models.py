"""Plugin model providers: models.json interpolated and registered as
`plugin:<name>:model-provider:<id>`, resolved with the provider's own settings, unavailable
with a clear reason when the plugin is off, and a collision with a user provider leaves
both inactive with the files named. Runs go to a loopback Chat Completions server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.core.model import ModelConfig
from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from tests.support.llm_server import LoopbackLLM, Turn

from ..builders import make_plugin

PID = "plugin:kit:model-provider:cloud"
KEY = "kit-model-key-0123456789"
SCHEMA = {"type": "object", "properties": {"endpoint": {"type": "string", "default": "http://127.0.0.1:9/v1"}}}


def plugin(home: Path) -> Path:
    provider = {"id": "cloud", "name": "Kit Cloud", "api": "openai-completions", "baseUrl": "${settings.endpoint}",
                "apiKey": "$KIT_MODEL_KEY", "headers": {"X-Workspace": "ws-${settings.endpoint}"},
                "models": [{"id": "kit-1", "name": "Kit One", "contextWindow": 8000}, {"id": "kit-2", "name": "Kit Two"}]}
    return make_plugin(home, "kit", files={"models.json": {"providers": [provider]}, "config.schema.json": SCHEMA})


@pytest.fixture
def app(home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KIT_MODEL_KEY", KEY)
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
    application = App(DataRoot(home))
    yield application
    application.close()


def test_a_plugin_provider_resolves_with_its_own_interpolated_settings(home: Path, app: App) -> None:
    folder = plugin(home)
    app.plugins.update_settings("kit", [("endpoint", "http://127.0.0.1:1234/v1")])
    endpoint, info = app.providers.resolve(None, provider=PID, model_id="kit-1")
    assert (endpoint.provider_id, endpoint.base_url, endpoint.api_key) == (PID, "http://127.0.0.1:1234/v1", KEY)
    assert endpoint.headers == {"X-Workspace": "ws-http://127.0.0.1:1234/v1"}
    assert (info.id, info.name, info.context_window) == ("kit-1", "Kit One", 8000)
    # --provider alone takes the provider's first model; --model alone finds the provider
    assert app.providers.resolve(None, provider=PID)[1].id == "kit-1"
    assert app.providers.resolve(None, model_id="kit-2")[0].provider_id == PID
    # a saved thread model that names the provider
    assert app.providers.resolve(ModelConfig(provider=PID, id="kit-2"))[1].name == "Kit Two"
    [reg] = app.registries.providers.by_source("plugin:kit")
    assert reg.files == (str(folder / "models.json"),)
    assert json.loads((folder / "models.json").read_text())["providers"][0]["baseUrl"] == "${settings.endpoint}"


def test_a_disabled_or_removed_plugin_provider_is_unavailable_with_the_reason(home: Path, app: App) -> None:
    plugin(home)
    app.plugins.disable("kit")
    saved = ModelConfig(provider=PID, id="kit-1")
    with pytest.raises(UserFacingError, match=r"Provider 'plugin:kit:model-provider:cloud' is unavailable \(plugin kit is disabled\)"):
        app.providers.resolve(saved)
    with pytest.raises(UserFacingError, match="plugin kit is disabled"):
        app.providers.resolve(None, provider=PID, model_id="kit-1")
    app.plugins.remove("kit")
    with pytest.raises(UserFacingError, match="plugin kit is not installed"):
        app.providers.resolve(saved)


def test_a_user_provider_with_the_same_id_leaves_both_inactive_and_names_the_files(home: Path, app: App) -> None:
    folder = plugin(home)
    settings = home / "settings" / "models.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"providers": [{"id": PID, "name": "Mine", "baseUrl": "http://127.0.0.1:2/v1",
                                                   "models": [{"id": "kit-1"}]}]}), encoding="utf-8")
    app.models.reload()
    with pytest.raises(UserFacingError, match="none of them is active") as caught:
        app.providers.resolve(None, provider=PID, model_id="kit-1")
    assert "plugin:kit" in caught.value.message and "user" in caught.value.message
    record = app.plugins.get("kit")
    [ext] = [e for e in record.extensions if e.kind == "model-provider"]
    assert ext.status == "failed" and record.status == "degraded"
    assert str(folder / "models.json") in ext.reason and str(settings) in ext.reason


def test_a_run_streams_from_the_plugin_provider(home: Path, app: App) -> None:
    plugin(home)
    with LoopbackLLM() as srv:
        app.plugins.update_settings("kit", [("endpoint", srv.base_url)])
        srv.push(Turn(text="plugin says hi"))
        endpoint, info = app.providers.resolve(None, provider=PID, model_id="kit-2")
        from llmspace.cancel import CancelToken
        from llmspace.providers.base import ModelRequest, NeutralMessage
        from llmspace.providers.events import TextDelta

        request = ModelRequest(endpoint=endpoint, model=info, system_prompt="",
                               messages=(NeutralMessage(role="user", text="hi"),))
        chunks = [e.text for e in app.providers.adapter(endpoint.api).stream(request, CancelToken()) if isinstance(e, TextDelta)]
        assert "".join(chunks) == "plugin says hi"
        assert srv.requests[-1].headers.get("Authorization") == f"Bearer {KEY}"
        assert srv.requests[-1].body_json["model"] == "kit-2"
