"""Skill locators `llm-space://internal/skills/<name>`."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.skills.locator import parse_skill_locator, skill_locator
from llmspace.skills.manager import SkillManager
from tests.skills.conftest import write_skill


def test_a_locator_round_trips() -> None:
    url = skill_locator("deep-research")
    assert url == "llm-space://internal/skills/deep-research"
    assert parse_skill_locator(url) == "deep-research"
    assert parse_skill_locator("llm-space://internal/skills/%64eep") == "deep"


@pytest.mark.parametrize("url", [
    "llm-space://internal/skills/a/b",         # extra segment
    "llm-space://internal/skills/a/",          # trailing slash
    "llm-space://internal/skills/a?x=1",       # query
    "llm-space://internal/skills/a#top",       # fragment
    "llm-space://user@internal/skills/a",      # user info
    "llm-space://internal:80/skills/a",        # port
    "llm-space://other/skills/a",              # other host
    "LLM-SPACE://internal/skills/a",           # wrong-case scheme
    "llm-space://internal/skills/%zz",         # bad escape
    "llm-space://internal/skills/a%2Fb",       # encoded slash
    "llm-space://internal/skills/Bad_Name",    # invalid name
    "llm-space://internal/plugins/a",          # not skills
    "llm-space://internal/skills/",            # no name
    "https://internal/skills/a",
    "",
])
def test_malformed_locators_are_rejected(url: str) -> None:
    assert parse_skill_locator(url) is None


def test_invalid_names_have_no_locator() -> None:
    with pytest.raises(ValueError):
        skill_locator("Not Valid")


def test_the_manager_resolves_a_locator_to_the_enabled_skill_folder(root: DataRoot, user_home: Path) -> None:
    folder = write_skill(user_home / ".agents" / "skills", "local")
    mgr = SkillManager(root, auto_seed=False)
    assert mgr.resolve_locator(skill_locator("local")) == folder
    mgr.set_enabled("local", False)
    with pytest.raises(UserFacingError, match='Skill "local" not found'):
        mgr.resolve_locator(skill_locator("local"))
    with pytest.raises(UserFacingError, match="is not a skill location"):
        mgr.resolve_locator("llm-space://internal/skills/a/b")
