"""Settings › Skills screen logic (no Tk): the user's skill folders, every discovered skill
with its source and whether it is on, the plugin skill sources (apart: they cannot be
removed, only switched on or off as a whole) and the problems discovery found.

    p = SkillsPagePresenter(app.skills)
    view = p.snapshot()                 # folders, skills, plugin sources, problems
    p.add_folder("~/team/skills"); p.remove_folder("~/team/skills")
    p.set_skill_enabled(row.key, False) # this skill only, in its own folder
    p.set_source_enabled("plugin:kit", False)   # like `llmspace skills disable --source plugin:kit`

Everything is delegated to `skills.manager.SkillManager` and its `SkillSettings`
(`settings/skills.json`, written atomically); the same calls back `llmspace skills …`
(llmspace/commands/skills.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserFacingError

USER = "settings"  # the origin of skills found in the user's folders


@dataclass(frozen=True)
class FolderRow:
    """One configured discovery folder."""

    path: str  # as written in skills.json (may start with ~)
    resolved: Path
    exists: bool
    skills: int
    hidden: int

    @property
    def status(self) -> str:
        if not self.exists:
            return "missing"
        return f"{self.skills} skills" + (f", {self.hidden} off" if self.hidden else "")


@dataclass(frozen=True)
class SkillRow:
    """One discovered skill; `key` is unique across folders and sources."""

    key: str
    name: str
    description: str
    source: str  # "user" or "plugin:<name>"
    origin: str  # "settings" or "plugin:<name>"
    folder: Path
    path: Path
    enabled: bool
    state: str  # "on", "off" or "conflict"
    problem: str  # the conflict, else the first problem found in the skill


@dataclass(frozen=True)
class SourceRow:
    """The skills folder one plugin contributes."""

    origin: str  # plugin:<name>
    folder: Path
    skills: int
    enabled: int

    @property
    def plugin(self) -> str:
        return self.origin.removeprefix("plugin:")

    @property
    def state(self) -> str:
        if not self.skills:
            return "no skills"
        if self.enabled == self.skills:
            return "on"
        return "off" if self.enabled == 0 else f"{self.enabled} of {self.skills} on"


@dataclass(frozen=True)
class SkillsView:
    folders: list[FolderRow]
    skills: list[SkillRow]
    sources: list[SourceRow]
    problems: list[str]


class SkillsPagePresenter:
    def __init__(self, skills: Any) -> None:
        self.skills = skills

    # -- reading ---------------------------------------------------------------------------
    def snapshot(self) -> SkillsView:
        found = self.skills.list()
        problems = self.skills.problems()
        rows = [_row(s) for s in found]
        configured = self.skills.settings.folders()
        folders = []
        for entry in configured:
            resolved = entry.resolved()
            mine = [r for r in rows if r.origin == USER and r.folder == resolved]
            folders.append(FolderRow(entry.path, resolved, resolved.is_dir(), len(mine),
                                     sum(1 for r in mine if not r.enabled)))
        sources = []
        for folder, origin, _hidden in self.skills.folders():
            if origin == USER:
                continue
            mine = [r for r in rows if r.origin == origin]
            sources.append(SourceRow(origin, folder, len(mine), sum(1 for r in mine if r.enabled)))
        user_first = sorted(rows, key=lambda r: (r.origin != USER, r.origin))  # stable: folder order kept
        return SkillsView(folders, user_first, sources, problems)

    def row(self, key: str) -> SkillRow:
        for r in self.snapshot().skills:
            if r.key == key:
                return r
        raise UserFacingError("That skill is no longer there.", hint="The list was refreshed; pick it again.")

    # -- folders ---------------------------------------------------------------------------
    def add_folder(self, path: str) -> str:
        path = path.strip()
        if not path:
            raise UserFacingError("Choose a folder to add.")
        if path in {f.path for f in self.skills.settings.folders()}:
            raise UserFacingError(f"{path} is already a skill folder.")
        owner = self.skills.plugin_folder(path)
        if owner is not None:
            raise UserFacingError(f"{path} is the skill folder of {owner}; its skills are already listed.",
                                  hint="Switch them on or off under Skills from plugins.")
        self.skills.settings.add_folder(path)
        return path

    def remove_folder(self, path: str) -> None:
        """Forget a user folder (no files are deleted); a plugin's folder is refused."""
        configured = [f.path for f in self.skills.settings.folders()]
        if path not in configured:
            owner = self.skills.plugin_folder(path)
            if owner is not None:
                raise UserFacingError(f"{path} is the skill folder of {owner}; plugin skill sources cannot be removed.",
                                      hint=f"Switch its skills off here, or disable the plugin {owner.removeprefix('plugin:')} "
                                           "in Settings › Plugins.")
            raise UserFacingError(f"{path} is not a configured skill folder; nothing was removed.")
        self.skills.settings.remove_folder(path)

    # -- switching -------------------------------------------------------------------------
    def set_skill_enabled(self, key: str, enabled: bool) -> SkillRow:
        """Switch one skill in its own folder (a skill of the same name elsewhere keeps its state)."""
        row = self.row(key)
        if row.origin == USER:
            self.skills.settings.set_hidden(row.folder, {row.name: not enabled})
        else:
            self.skills.settings.set_plugin_hidden(row.origin, {row.name: not enabled})
        return row

    def set_source_enabled(self, origin: str, enabled: bool) -> int:
        """Every skill of a plugin source on or off; returns how many."""
        if not origin.startswith("plugin:"):
            raise UserFacingError("Only plugin sources are switched as a whole; switch your skills one by one.")
        return int(self.skills.set_source_enabled(origin, enabled))


def _row(skill: Any) -> SkillRow:
    state = "conflict" if skill.enabled and skill.conflict else ("on" if skill.enabled else "off")
    problem = skill.conflict or (skill.problems[0] if skill.problems else "")
    source = "user" if skill.origin == USER else skill.origin
    return SkillRow(f"{skill.origin}|{skill.path}", skill.name, " ".join(skill.description.split()), source,
                    skill.origin, skill.folder, skill.path, skill.enabled, state, problem)
