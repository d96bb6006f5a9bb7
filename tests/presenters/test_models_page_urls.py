"""The Models page lists a plugin provider's base URL with its password and query values
masked (the plugin's settings may put a token there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.paths import DataRoot
from llmspace.presenters.models_page import ModelsPagePresenter
from tests.plugins.builders import make_plugin


def test_a_plugin_providers_base_url_is_listed_masked(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
    provider = {"id": "cloud", "name": "Kit Cloud", "api": "openai-completions",
                "baseUrl": "http://kit:pw-0123456789@127.0.0.1:9/v1?token=tk-0123456789",
                "models": [{"id": "kit-1", "name": "Kit One"}]}
    make_plugin(home, "kit", files={"models.json": {"providers": [provider]}})
    app = App(DataRoot(home))
    try:
        app.plugins  # noqa: B018 -- attaches the plugin contributions
        [row] = ModelsPagePresenter(app.models, app.providers).plugin_rows()
    finally:
        app.close()
    assert row.base_url == "http://kit:***@127.0.0.1:9/v1?token=***"
