"""Settings › Skills logic without a display: the user's folders, every skill with its
source, plugin sources apart (switched as a whole, never removed), per-skill switches that
land in settings/skills.json, and problems."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.presenters.skills_page import SkillsPagePresenter
from tests.plugins.builders import make_plugin


def skill(name: str, description: str = "Does things.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nBody of {name}\n"


def write(folder: Path, name: str, text: str | None = None) -> None:
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(text if text is not None else skill(name), encoding="utf-8")


@pytest.fixture
def app(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    make_plugin(home, "kit", files={"skills/alpha/SKILL.md": skill("alpha"), "skills/beta/SKILL.md": skill("beta")})
    application = App(DataRoot(home))
    application.plugins  # noqa: B018 -- attaches the plugin contributions
    yield application
    application.close()


def stored(home: Path) -> dict:
    return json.loads((home / "settings" / "skills.json").read_text("utf-8"))


def test_folders_skills_and_plugin_sources_are_listed_apart(app: App, home: Path, tmp_path: Path) -> None:
    team = tmp_path / "team"
    write(team, "drafting")
    p = SkillsPagePresenter(app.skills)
    assert p.add_folder(str(team)) == str(team)
    view = p.snapshot()
    by_path = {f.path: f for f in view.folders}
    assert by_path[str(team)].status == "1 skills" and by_path["~/.claude/skills"].status == "missing"
    sources = {(r.name, r.source) for r in view.skills}
    assert {("drafting", "user"), ("alpha", "plugin:kit"), ("beta", "plugin:kit")} <= sources
    assert [r.source for r in view.skills].index("plugin:kit") > [r.source for r in view.skills].index("user")
    [src] = view.sources
    assert (src.origin, src.plugin, src.skills, src.state) == ("plugin:kit", "kit", 2, "on")
    assert src.folder == (home / "plugins" / "kit" / "skills").absolute()
    assert str(team) in [e["path"] for e in stored(home)["discoveryPaths"]]


def test_one_skill_is_switched_in_its_own_folder_and_written_to_skills_json(app: App, home: Path, tmp_path: Path) -> None:
    team = tmp_path / "team"
    write(team, "drafting")
    p = SkillsPagePresenter(app.skills)
    p.add_folder(str(team))
    row = next(r for r in p.snapshot().skills if r.name == "drafting")
    p.set_skill_enabled(row.key, False)
    entry = next(e for e in stored(home)["discoveryPaths"] if e["path"] == str(team))
    assert entry["hiddenSkills"] == ["drafting"]
    assert next(r for r in p.snapshot().skills if r.name == "drafting").state == "off"
    alpha = next(r for r in p.snapshot().skills if r.name == "alpha")
    p.set_skill_enabled(alpha.key, False)
    assert stored(home)["pluginSkills"] == {"plugin:kit": {"hiddenSkills": ["alpha"]}}
    assert p.snapshot().sources[0].state == "1 of 2 on"
    assert "alpha" not in [s.name for s in app.skills.enabled()]


def test_a_plugin_source_is_switched_as_a_whole_and_cannot_be_removed(app: App, home: Path) -> None:
    p = SkillsPagePresenter(app.skills)
    assert p.set_source_enabled("plugin:kit", False) == 2
    assert p.snapshot().sources[0].state == "off"
    assert set(stored(home)["pluginSkills"]["plugin:kit"]["hiddenSkills"]) == {"alpha", "beta"}
    folder = str((home / "plugins" / "kit" / "skills").absolute())
    with pytest.raises(UserFacingError, match="plugin skill sources cannot be removed"):
        p.remove_folder(folder)
    with pytest.raises(UserFacingError, match="already listed"):
        p.add_folder(folder)
    p.set_source_enabled("plugin:kit", True)
    assert p.snapshot().sources[0].state == "on"


def test_removing_a_folder_forgets_it_without_deleting_files(app: App, home: Path, tmp_path: Path) -> None:
    team = tmp_path / "team"
    write(team, "drafting")
    p = SkillsPagePresenter(app.skills)
    p.add_folder(str(team))
    with pytest.raises(UserFacingError, match="already a skill folder"):
        p.add_folder(str(team))
    p.remove_folder(str(team))
    assert str(team) not in [f.path for f in p.snapshot().folders]
    assert (team / "drafting" / "SKILL.md").exists()
    with pytest.raises(UserFacingError, match="not a configured skill folder"):
        p.remove_folder(str(team))


def test_problems_and_conflicts_are_shown_on_the_rows_and_in_the_list(app: App, tmp_path: Path) -> None:
    team = tmp_path / "team"
    write(team, "alpha")  # the plugin has an alpha too: neither is active
    write(team, "broken", "no frontmatter here\n")
    p = SkillsPagePresenter(app.skills)
    p.add_folder(str(team))
    view = p.snapshot()
    alphas = [r for r in view.skills if r.name == "alpha"]
    assert len(alphas) == 2 and {r.state for r in alphas} == {"conflict"}
    assert all("none of them is active" in r.problem for r in alphas)
    assert any("frontmatter" in problem for problem in view.problems)
    # switching the user's one off resolves the conflict for the plugin's
    p.set_skill_enabled(next(r.key for r in alphas if r.source == "user"), False)
    states = {r.source: r.state for r in p.snapshot().skills if r.name == "alpha"}
    assert states == {"user": "off", "plugin:kit": "on"}


def test_a_malformed_skills_json_refuses_changes_and_is_left_as_it_is(app: App, home: Path, tmp_path: Path) -> None:
    path = home / "settings" / "skills.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{nope", "utf-8")
    p = SkillsPagePresenter(app.skills)
    assert any("skills.json" in problem for problem in p.snapshot().problems)
    with pytest.raises(UserFacingError):
        p.add_folder(str(tmp_path))
    assert path.read_text("utf-8") == "{nope"
