"""SkillManager: discovery folders, validation, clashes, enable/disable, seeding."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.skills.manager import SEED_SKILLS, SkillManager
from llmspace.skills.skill import SkillFormatError, is_valid_skill_name, parse_skill_text
from tests.skills.conftest import write_skill
from tests.support.limited import billion_laughs_flow, run_limited


def agents(user_home: Path) -> Path:
    return user_home / ".agents" / "skills"


def names(skills) -> list[str]:
    return [s.name for s in skills]


# -- seeding --------------------------------------------------------------------------------

def test_first_use_seeds_three_example_skills_into_the_managed_folder(root: DataRoot) -> None:
    mgr = SkillManager(root)
    skills = mgr.enabled()
    assert names(skills) == sorted(SEED_SKILLS)
    for s in skills:
        assert s.folder == root.root / "skills"
        assert s.path == root.root / "skills" / s.name
        assert s.description and s.body() and not s.body().startswith("---")
    assert mgr.problems() == []


def test_seeding_never_overwrites_and_never_recreates_deleted_seeds(root: DataRoot) -> None:
    mgr = SkillManager(root)
    assert mgr.seed() is True
    skill_file = root.root / "skills" / "grill-me" / "SKILL.md"
    skill_file.write_text("---\nname: grill-me\ndescription: mine\n---\nmine", encoding="utf-8")
    (root.root / "skills" / "deep-research" / "SKILL.md").unlink()
    assert SkillManager(root).seed() is False
    assert skill_file.read_text(encoding="utf-8").endswith("mine")
    assert not (root.root / "skills" / "deep-research" / "SKILL.md").exists()


def test_settings_file_is_created_with_the_default_folders(root: DataRoot) -> None:
    SkillManager(root, auto_seed=False).list()
    raw = (root.root / "settings" / "skills.json").read_text(encoding="utf-8")
    assert raw.endswith("}\n")
    assert json.loads(raw) == {"discoveryPaths": [
        {"path": "~/.claude/skills", "hiddenSkills": []},
        {"path": "~/.codex/skills", "hiddenSkills": []},
        {"path": "~/.agents/skills", "hiddenSkills": []},
        {"path": str(root.root / "skills"), "hiddenSkills": []},
    ]}


# -- discovery ------------------------------------------------------------------------------

def test_skills_in_home_folders_are_discovered_in_folder_order(root: DataRoot, user_home: Path) -> None:
    write_skill(user_home / ".claude" / "skills", "zeta")
    write_skill(agents(user_home), "alpha", description="First one.")
    mgr = SkillManager(root, auto_seed=False)
    assert names(mgr.list()) == ["zeta", "alpha"]
    assert names(mgr.enabled()) == ["alpha", "zeta"]
    alpha = mgr.find_enabled("alpha")
    assert alpha is not None and alpha.description == "First one." and alpha.folder == agents(user_home)
    assert alpha.body() == "# Body\n\nSteps."


def test_symlinked_skill_folders_are_followed(root: DataRoot, user_home: Path, tmp_path: Path) -> None:
    real = write_skill(tmp_path / "elsewhere", "linked")
    agents(user_home).mkdir(parents=True)
    os.symlink(real, agents(user_home) / "linked")
    os.symlink(tmp_path / "gone", agents(user_home) / "dangling")
    mgr = SkillManager(root, auto_seed=False)
    skill = mgr.find_enabled("linked")
    assert skill is not None and skill.path == agents(user_home) / "linked"
    assert skill.body() == "# Body\n\nSteps."
    assert any("dangling" in p and "broken symlink" in p for p in mgr.problems())


def test_broken_skill_folders_are_reported_without_crashing(root: DataRoot, user_home: Path) -> None:
    folder = agents(user_home)
    write_skill(folder, "good")
    write_skill(folder, "no-desc", description=None)
    write_skill(folder, "blank-desc", description='""')
    write_skill(folder, "broken-yaml", raw="---\nname: broken-yaml\ndescription: [unclosed\n---\nbody")
    write_skill(folder, "no-frontmatter", raw="# Just markdown")
    write_skill(folder, "list-frontmatter", raw="---\n- a\n- b\n---\n")
    write_skill(folder, "bad-name", name="Bad_Name")
    write_skill(folder, "Upper")
    (folder / "empty-dir").mkdir()
    (folder / "notes.txt").write_text("not a skill", encoding="utf-8")
    (folder / ".hidden").mkdir()
    unreadable = write_skill(folder, "unreadable") / "SKILL.md"
    unreadable.chmod(0)
    try:
        mgr = SkillManager(root, auto_seed=False)
        found = names(mgr.list())
        assert found == (["good"] if os.geteuid() != 0 else ["good", "unreadable"])  # root reads anything
        text = "\n".join(mgr.problems())
    finally:
        unreadable.chmod(0o644)
    assert "no-desc/SKILL.md: the frontmatter has no description" in text
    assert "blank-desc/SKILL.md: the frontmatter has no description" in text
    assert "broken-yaml/SKILL.md: the frontmatter is not valid YAML" in text
    assert "no-frontmatter/SKILL.md: SKILL.md has no YAML frontmatter" in text
    assert "list-frontmatter/SKILL.md: the frontmatter must be a YAML mapping" in text
    assert "'Bad_Name' is not a valid skill name" in text
    assert "Upper: the folder name is not a valid skill name" in text
    assert "empty-dir: no SKILL.md" in text
    assert "notes.txt" not in text and ".hidden" not in text


def test_a_frontmatter_name_that_differs_from_its_folder_is_reported_but_usable(root: DataRoot, user_home: Path) -> None:
    write_skill(agents(user_home), "grill-me", name="grilling")
    mgr = SkillManager(root, auto_seed=False)
    assert mgr.find_enabled("grilling") is not None
    assert any('named "grilling" but its folder is "grill-me"' in p for p in mgr.problems())


def test_name_clashes_first_folder_wins_and_are_reported(root: DataRoot, user_home: Path) -> None:
    write_skill(user_home / ".claude" / "skills", "dup", description="from claude")
    write_skill(agents(user_home), "dup", description="from agents")
    mgr = SkillManager(root, auto_seed=False)
    assert [s.description for s in mgr.enabled()] == ["from claude"]
    assert mgr.find_enabled("dup").description == "from claude"
    assert any('Skill "dup" is defined more than once' in p for p in mgr.problems())
    mgr.set_enabled("dup", False)
    assert mgr.enabled() == [] and mgr.find_enabled("dup") is None


def test_a_missing_folder_has_no_skills_and_no_problems(root: DataRoot) -> None:
    mgr = SkillManager(root, auto_seed=False)
    assert mgr.list() == [] and mgr.problems() == []


# -- enable / disable -----------------------------------------------------------------------

def test_disabling_hides_the_skill_in_its_folder_and_enabling_shows_it(root: DataRoot, user_home: Path) -> None:
    write_skill(agents(user_home), "alpha")
    write_skill(agents(user_home), "beta")
    mgr = SkillManager(root, auto_seed=False)
    mgr.set_enabled("alpha", False)
    data = json.loads((root.root / "settings" / "skills.json").read_text(encoding="utf-8"))
    assert data["discoveryPaths"][2] == {"path": "~/.agents/skills", "hiddenSkills": ["alpha"]}
    assert names(mgr.enabled()) == ["beta"]
    assert [(s.name, s.enabled) for s in mgr.list()] == [("alpha", False), ("beta", True)]
    mgr.set_enabled("alpha", True)
    assert names(mgr.enabled()) == ["alpha", "beta"]
    mgr.set_all_enabled(False)
    assert mgr.enabled() == []
    with pytest.raises(UserFacingError, match='No skill named "nope"'):
        mgr.set_enabled("nope", True)


def test_unknown_settings_keys_are_kept_and_folders_can_be_added_and_removed(root: DataRoot, tmp_path: Path) -> None:
    settings = root.root / "settings" / "skills.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"discoveryPaths": [{"path": "  ~/.agents/skills ", "hiddenSkills": [1, "x"], "note": "keep"},
                                                       {"path": "~/.agents/skills"}], "extra": True}), encoding="utf-8")
    mgr = SkillManager(root, auto_seed=False)
    assert [(f.path, f.hidden) for f in mgr.settings.folders()] == [("~/.agents/skills", ["x"])]
    custom = tmp_path / "custom"
    write_skill(custom, "mine")
    mgr.settings.add_folder(str(custom))
    assert names(mgr.enabled()) == ["mine"]
    mgr.settings.remove_folder(str(custom))
    assert mgr.enabled() == []
    data = json.loads(settings.read_text(encoding="utf-8"))
    assert data["extra"] is True and data["discoveryPaths"][0]["note"] == "keep"


def test_a_malformed_settings_file_is_reported_and_never_overwritten(root: DataRoot, user_home: Path) -> None:
    settings = root.root / "settings" / "skills.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("{ not json", encoding="utf-8")
    write_skill(agents(user_home), "alpha")
    mgr = SkillManager(root, auto_seed=False)
    assert names(mgr.enabled()) == ["alpha"]
    assert any("malformed JSON" in p for p in mgr.problems())
    with pytest.raises(UserFacingError, match="malformed JSON"):
        mgr.set_enabled("alpha", False)
    assert settings.read_text(encoding="utf-8") == "{ not json"


# -- plugin sources -------------------------------------------------------------------------

def test_plugin_sources_join_after_the_configured_folders(root: DataRoot, user_home: Path, tmp_path: Path) -> None:
    write_skill(agents(user_home), "shared", description="user")
    plugin = tmp_path / "plugin-skills"
    write_skill(plugin, "shared", description="plugin")
    write_skill(plugin, "extra")
    mgr = SkillManager(root, auto_seed=False)
    mgr.add_source(plugin, "plugin:demo")
    # a plugin never wins a name: both "shared" skills are inactive while both are enabled
    assert [(s.name, s.description) for s in mgr.enabled()] == [("extra", "Does things.")]
    assert any('Skill "shared" is defined by' in p and "plugin:demo" in p for p in mgr.problems())
    mgr.set_enabled("extra", False)
    assert names(mgr.enabled()) == []
    assert json.loads((root.root / "settings" / "skills.json").read_text())["pluginSkills"] == {"plugin:demo": {"hiddenSkills": ["extra"]}}
    mgr.remove_source("plugin:demo")
    assert [s.origin for s in mgr.list()] == ["settings"]
    assert names(mgr.enabled()) == ["shared"]


# -- name rule and frontmatter --------------------------------------------------------------

@pytest.mark.parametrize("name,ok", [("a", True), ("pdf-tools", True), ("a1-b2", True), ("x" * 64, True),
                                     ("x" * 65, False), ("-a", False), ("a-", False), ("a--b", False),
                                     ("A", False), ("a_b", False), ("", False), ("a b", False)])
def test_skill_name_rule(name: str, ok: bool) -> None:
    assert is_valid_skill_name(name) is ok


def test_frontmatter_whose_aliases_expand_a_billion_times_is_a_format_error_not_a_memory_error() -> None:
    text = f"---\ndescription: d\nrest: {billion_laughs_flow()}\nname: *l8\n---\nBody\n"
    code = ("from llmspace.skills.skill import SkillFormatError, parse_skill_text\n"
            f"try:\n    parse_skill_text({text!r})\nexcept SkillFormatError as exc:\n    print(exc)\n")
    done = run_limited(code, memory_mb=1024, timeout=120)
    assert done.returncode == 0, done.stderr[-1500:]
    assert "frontmatter is not valid YAML at line 3: its aliases (*name) expand to more than" in done.stdout


def test_frontmatter_fields_and_body_are_split() -> None:
    meta, body = parse_skill_text("\ufeff---\nname: x\ndescription: >\n  two\n  lines\nlicense: MIT\n---\n\nBody --- here\n---\n")
    assert meta == {"name": "x", "description": "two lines\n", "license": "MIT"}
    assert body == "\nBody --- here\n---\n"
    with pytest.raises(SkillFormatError, match="no name"):
        parse_skill_text("---\ndescription: d\n---\n")


@pytest.mark.parametrize("content, where", [
    ({"discoveryPaths": 3}, "discoveryPaths must be a list"),
    ({"discoveryPaths": [{"path": 5}]}, "discoveryPaths[0].path"),
    ({"discoveryPaths": [{"path": "~/x", "hiddenSkills": "alpha"}]}, "discoveryPaths[0].hiddenSkills"),
    ({"pluginSkills": 3}, "pluginSkills must be an object"),
])
def test_a_wrong_shaped_settings_file_is_reported_with_its_json_path_and_never_overwritten(
        root: DataRoot, user_home: Path, content: dict, where: str) -> None:
    settings = root.root / "settings" / "skills.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(content), encoding="utf-8")
    before = settings.read_bytes()
    write_skill(agents(user_home), "alpha")
    mgr = SkillManager(root, auto_seed=False)
    assert names(mgr.enabled()) == ["alpha"]  # the default folders meanwhile
    assert any(where in p and str(settings) in p for p in mgr.problems()), mgr.problems()
    with pytest.raises(UserFacingError, match="left unchanged"):
        mgr.settings.add_folder("/somewhere")
    with pytest.raises(UserFacingError):
        mgr.set_enabled("alpha", False)
    assert settings.read_bytes() == before
