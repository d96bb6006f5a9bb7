"""Plugin skills: a source apart from the user's folders, per-skill choices in skills.json,
name conflicts that leave every party inactive, and the `skills` commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.cli import main
from llmspace.paths import DataRoot

from ..builders import make_plugin


def skill(name: str, description: str = "Does things.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nBody of {name}\n"


@pytest.fixture
def fresh(home: Path, user_home: Path):
    apps: list[App] = []

    def make() -> App:
        app = App(DataRoot(home))
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.close()


def names(app: App) -> list[str]:
    return [s.name for s in app.skills.enabled()]


def test_plugin_skills_join_as_their_own_source_and_keep_choices_across_disable(home: Path, fresh) -> None:
    make_plugin(home, "kit", files={"skills/alpha/SKILL.md": skill("alpha"), "skills/beta/SKILL.md": skill("beta")})
    app = fresh()
    app.plugins  # noqa: B018 -- building the plugin service attaches the contributions
    [reg] = app.registries.skill_sources.by_source("plugin:kit")
    assert reg.value == (home / "plugins" / "kit" / "skills").absolute()
    assert {s.name: s.origin for s in app.skills.list() if s.origin != "settings"} == {"alpha": "plugin:kit", "beta": "plugin:kit"}
    assert {"alpha", "beta"} <= set(names(app))
    app.skills.set_enabled("beta", False)
    stored = json.loads((home / "settings" / "skills.json").read_text())
    assert stored["pluginSkills"] == {"plugin:kit": {"hiddenSkills": ["beta"]}}
    assert "discoveryPaths" in stored  # the user's folders are kept as they were
    app.plugins.disable("kit")
    assert not {"alpha", "beta"} & set(names(app))
    assert app.skills.find_enabled("alpha") is None  # the skill() tool cannot load it either
    app.plugins.enable("kit")
    assert "alpha" in names(app) and "beta" not in names(app)
    assert (home / "plugins" / "kit" / "skills" / "beta" / "SKILL.md").read_text() == skill("beta")


def test_two_plugins_with_one_skill_name_are_both_inactive_and_say_which_files(home: Path, fresh) -> None:
    make_plugin(home, "one", files={"skills/review/SKILL.md": skill("review")})
    make_plugin(home, "two", files={"skills/review/SKILL.md": skill("review"), "skills/other/SKILL.md": skill("other")})
    app = fresh()
    assert "review" not in names(app) and "other" in names(app)
    info = app.plugins.get("one")
    [ext] = [e for e in info.extensions if e.kind == "skill"]
    assert ext.status == "failed" and info.status == "error"
    assert str(home / "plugins" / "one" / "skills" / "review" / "SKILL.md") in ext.reason
    assert str(home / "plugins" / "two" / "skills" / "review" / "SKILL.md") in ext.reason
    assert ext.error_id and ext.log_path is not None and ext.log_path.exists()
    assert app.plugins.get("two").status == "degraded"
    app.plugins.disable("two")
    assert "review" in names(app)
    assert app.plugins.get("one").status == "active"


def test_a_plugin_skill_and_a_user_skill_with_one_name_are_both_inactive_until_one_is_disabled(
        home: Path, user_home: Path, fresh) -> None:
    mine = user_home / ".agents" / "skills" / "notes"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text(skill("notes", "mine"), encoding="utf-8")
    make_plugin(home, "kit", files={"skills/notes/SKILL.md": skill("notes", "plugin")})
    app = fresh()
    clashing = [s for s in app.skills.list() if s.name == "notes"]
    assert len(clashing) == 2 and all(s.conflict and not s.active for s in clashing)
    assert "notes" not in names(app)
    assert any('Skill "notes" is defined by' in p for p in app.skills.problems())
    app.skills.settings.set_hidden(mine.parent.absolute(), {"notes": True})
    [left] = [s for s in app.skills.enabled() if s.name == "notes"]
    assert left.origin == "plugin:kit" and left.description == "plugin"


def test_skills_commands_show_the_source_and_refuse_to_remove_a_plugin_folder(
        home: Path, user_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_plugin(home, "kit", files={"skills/alpha/SKILL.md": skill("alpha"), "skills/beta/SKILL.md": skill("beta")})
    assert main(["skills", "list", "--json"]) == 0
    listed = {s["name"]: s for s in json.loads(capsys.readouterr().out)["skills"]}
    assert listed["alpha"]["source"] == "plugin:kit" and listed["alpha"]["active"]
    folder = str((home / "plugins" / "kit" / "skills").absolute())
    assert main(["skills", "remove-folder", folder]) == 1
    err = capsys.readouterr().err
    assert "skill folder of plugin:kit" in err and "cannot be removed" in err
    assert main(["skills", "disable", "--source", "plugin:kit"]) == 0
    assert "2 skill(s) disabled" in capsys.readouterr().out
    assert main(["skills", "list"]) == 0
    out = capsys.readouterr().out
    assert "From plugin:kit (a plugin source" in out
    assert any(line.split()[:2] == ["alpha", "no"] for line in out.splitlines())


def test_without_third_party_plugins_no_plugin_skill_is_offered(home: Path, fresh, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SPACE_DISABLE_PLUGINS", "1")
    make_plugin(home, "kit", files={"skills/alpha/SKILL.md": skill("alpha")})
    app = fresh()
    assert "alpha" not in names(app)
    assert app.registries.skill_sources.by_source("plugin:kit") == []
    assert app.plugins.get("kit").status == "disabled"
