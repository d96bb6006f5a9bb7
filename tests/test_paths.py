"""The data root: LLM_SPACE_HOME, `~` expansion, folders created on first use only."""

from __future__ import annotations

import stat
from pathlib import Path

from llmspace.paths import DataRoot, default_home, expand_home


def test_llm_space_home_overrides_the_default(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("LLM_SPACE_HOME", str(tmp_path / "h"))
    assert default_home() == tmp_path / "h"
    assert DataRoot.from_env().root == (tmp_path / "h").absolute()


def test_default_home_is_dot_llm_space_in_the_user_home(monkeypatch):
    monkeypatch.delenv("LLM_SPACE_HOME", raising=False)
    assert default_home() == Path.home() / ".llm-space"
    monkeypatch.setenv("LLM_SPACE_HOME", "   ")
    assert default_home() == Path.home() / ".llm-space"


def test_only_a_leading_tilde_is_expanded():
    assert expand_home("~") == Path.home()
    assert expand_home("~/x") == Path.home() / "x"
    assert expand_home("~bob/x") == Path("~bob/x")
    assert expand_home("/a/~/b") == Path("/a/~/b")


def test_folders_are_created_when_first_needed_not_before(tmp_path: Path):
    root = DataRoot(tmp_path / "home")
    assert not root.root.exists()
    expected = {"workspace": root.workspace, "settings": root.settings, "skills": root.skills, "traces": root.traces,
                "plugins": root.plugins, "data/plugins": root.plugin_data, "logs": root.logs}
    for rel, path in expected.items():
        assert path == root.root / rel and path.is_dir()
    assert root.settings_file("models") == root.root / "settings" / "models.json"
    assert not (root.root / "settings" / "models.json").exists()


def test_a_data_root_that_is_a_file_is_a_clear_error_naming_llm_space_home(tmp_path: Path):
    import pytest

    from llmspace.errors import UserFacingError

    (tmp_path / "home").write_text("not a folder", "utf-8")
    with pytest.raises(UserFacingError, match="LLM_SPACE_HOME") as info:
        _ = DataRoot(tmp_path / "home").workspace
    assert str(tmp_path / "home" / "workspace") in str(info.value)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_settings_and_run_are_made_owner_only(tmp_path: Path):
    root = DataRoot(tmp_path / "home")
    assert mode(root.settings) == 0o700 and mode(root.run) == 0o700


def test_settings_and_run_left_0755_with_0644_files_are_tightened_when_first_used(tmp_path: Path):
    home = tmp_path / "home"
    for name, file in (("settings", "plugins.json"), ("run", "local-engine.json")):
        (home / name).mkdir(parents=True)
        (home / name).chmod(0o755)
        (home / name / file).write_text('{"token": "secret"}')
        (home / name / file).chmod(0o644)
    (home / "settings" / "script.sh").write_text("")
    (home / "settings" / "script.sh").chmod(0o755)
    root = DataRoot(home)
    assert mode(root.settings) == 0o700 and mode(home / "settings" / "plugins.json") == 0o600
    assert mode(home / "settings" / "script.sh") == 0o700
    assert mode(root.run) == 0o700 and mode(home / "run" / "local-engine.json") == 0o600


def test_the_engines_run_folder_is_tightened_too(tmp_path: Path):
    from llmspace.local import engine_files

    run = tmp_path / "home" / "run"
    run.mkdir(parents=True)
    run.chmod(0o755)
    (run / "local-engine.json").write_text("{}")
    (run / "local-engine.json").chmod(0o644)
    assert engine_files.run_dir(tmp_path / "home") == run
    assert mode(run) == 0o700 and mode(run / "local-engine.json") == 0o600
