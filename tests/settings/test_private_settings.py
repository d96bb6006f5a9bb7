"""settings/ is owner-only (issue 35, item 9): a second account cannot read a secret plugin
setting or an API key even where home folders are 0755 — the folder is 0700 and every
settings file 0600, whichever part of the app writes it, and a data root made by an earlier
version (0755 and 0644) is tightened when the app opens it."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.paths import DataRoot
from llmspace.settings.mcp import McpSettings
from llmspace.settings.models import ModelSettings
from llmspace.settings.search import load_search_settings, save_search_settings
from llmspace.settings.skills import SkillSettings


@pytest.fixture(autouse=True)
def no_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")


def modes(folder: Path) -> dict[str, str]:
    return {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in sorted(folder.iterdir())}


def test_every_settings_file_the_app_writes_is_owner_only_in_an_owner_only_folder(home: Path, tmp_path: Path) -> None:
    root = DataRoot(home)
    app = App(root)
    try:
        app.plugins.store.set_settings("team-tools", {"apiToken": "secret-token"})
        ModelSettings(root).set_default_model("openai", "gpt-4o")
        McpSettings(root).add({"name": "files", "command": "true"})
        SkillSettings(root).add_folder(str(tmp_path))
        save_search_settings(root, load_search_settings(root))
    finally:
        app.close()
    written = modes(home / "settings")
    assert {"plugins.json", "models.json", "mcp.json", "skills.json", "search.json"} <= set(written), written
    assert oct(stat.S_IMODE((home / "settings").stat().st_mode)) == "0o700"
    assert set(written.values()) == {"0o600"}, written


def test_a_settings_folder_an_earlier_version_left_0755_is_tightened_when_the_app_opens_the_data_root(home: Path) -> None:
    settings = home / "settings"
    settings.mkdir(mode=0o755)
    settings.chmod(0o755)
    (settings / "plugins.json").write_text('{"plugins": {"team-tools": {"settings": {"apiToken": "secret"}}}}')
    (settings / "plugins.json").chmod(0o644)
    app = App(DataRoot(home))
    try:
        app.plugins.records()
    finally:
        app.close()
    assert oct(stat.S_IMODE(settings.stat().st_mode)) == "0o700"
    assert modes(settings) == {"plugins.json": "0o600"}
