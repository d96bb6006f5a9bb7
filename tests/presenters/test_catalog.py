"""What the editor's pickers offer (llmspace/presenters/catalog.py): the thread's Model menu
lists the models of active plugin providers beside the user's, and drops them when the
plugin is disabled."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.paths import DataRoot
from llmspace.presenters.catalog import model_choices
from tests.plugins.builders import make_plugin

PID = "plugin:kit:model-provider:cloud"


@pytest.fixture
def app(home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
    provider = {"id": "cloud", "name": "Kit Cloud", "api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1",
                "apiKey": "kit-token-0123456789abcdef",
                "models": [{"id": "kit-1", "name": "Kit One"}, {"id": "kit-2", "name": "Kit Two"}]}
    make_plugin(home, "kit", files={"models.json": {"providers": [provider]}})
    application = App(DataRoot(home))
    application.plugins  # noqa: B018 -- attaches the plugin contributions
    yield application
    application.close()


def test_the_model_menu_offers_the_models_of_active_plugin_providers_until_the_plugin_is_disabled(app: App) -> None:
    choices, err = model_choices(app)
    assert err is None
    plugin = [(c.provider, c.provider_name, c.model_id, c.model_name, c.available) for c in choices
              if c.provider == PID]
    assert plugin == [(PID, "Kit Cloud (plugin kit)", "kit-1", "Kit One", True),
                      (PID, "Kit Cloud (plugin kit)", "kit-2", "Kit Two", True)]
    app.plugins.disable("kit")
    assert not [c for c in model_choices(app)[0] if c.provider == PID]
