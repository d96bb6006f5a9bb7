"""SkillManager: Agent Skills discovery, enable/disable, lookup and first-start seeding.

Discovery folders come from `settings/skills.json` (see `settings/skills.py`), in order,
followed by folders added at run time with `add_source(folder, origin)` (plugins), which are
registrations of the `skill_sources` registry (`llmspace/registries.py`; canonical ID
`<origin>:skills:<folder>`, source `<origin>`). Every call
scans the folders afresh, so skills are always current. `enabled()` de-duplicates by name
(first folder wins among the user's folders; the clash is reported by `problems()`), sorted
by name; `find_enabled(name)` returns the first enabled match in folder order (what the
`skill` tool uses). Disabling a skill hides its name in every folder that has it.

Plugin skills (source `plugin:<name>`, registered by llmspace/plugins/contributions/plugin_contributions.py)
never win a name: when an enabled plugin skill shares its name with an enabled skill of
another source (the user's folders or another plugin), every one of them is inactive
(`Skill.conflict` names the files) until only one source remains. Their per-skill choices
are kept in `skills.json` under `pluginSkills` (settings/skills.py), so re-enabling a
plugin restores them.

On first use, when `<LLM_SPACE_HOME>/skills` does not exist yet, three example skills from
`llmspace/assets/skills/` are written there (`seed()`); they are never overwritten.

Safe to call from worker threads (read-only scans).
"""

from __future__ import annotations

import builtins
from pathlib import Path

from ..errors import UserFacingError
from ..jsonio import write_bytes_atomic
from ..paths import DataRoot
from ..registry import Registry
from ..settings.skills import SkillSettings
from .skill import SKILL_FILE, Skill, scan_folder

ASSETS = Path(__file__).resolve().parent.parent / "assets" / "skills"
SEED_SKILLS = ("deep-research", "frontend-design", "grill-me")


class SkillManager:
    """Skills of one data root."""

    def __init__(self, root: DataRoot, *, auto_seed: bool = True, sources: Registry[Path] | None = None) -> None:
        self.root = root
        self.settings = SkillSettings(root)
        # Folders contributed at run time, by canonical ID (`<origin>:skills:<folder>`), source = origin.
        self.sources: Registry[Path] = sources if sources is not None else Registry("skill source")
        self._auto_seed = auto_seed
        self._seed_checked = False

    # -- sources ---------------------------------------------------------------------------
    def add_source(self, folder: Path | str, origin: str) -> None:
        """Add a discovery folder contributed at run time (e.g. `plugin:<id>`), after the configured ones."""
        path = Path(folder).absolute()
        self.sources.register(f"{origin}:skills:{path}", path, source=origin)

    def remove_source(self, origin: str) -> None:
        self.sources.unregister_source(origin)

    def folders(self) -> list[tuple[Path, str, set[str]]]:
        """(folder, origin, hidden names) in discovery order; repeated folders appear once."""
        out: list[tuple[Path, str, set[str]]] = []
        seen: set[Path] = set()
        for entry in self.settings.folders():
            path = entry.resolved()
            if path not in seen:
                seen.add(path)
                out.append((path, "settings", set(entry.hidden)))
        for reg in self.sources.active():
            path, origin = reg.value, reg.source
            if path not in seen:
                seen.add(path)
                out.append((path, origin, self.settings.plugin_hidden(origin)))
        return out

    # -- discovery -------------------------------------------------------------------------
    def _scan(self) -> tuple[list[Skill], list[str]]:
        if self._auto_seed and not self._seed_checked:
            self._seed_checked = True
            try:
                self.seed()
            except UserFacingError:
                pass  # reported by the folder scan if it matters; seeding is best effort
        skills: list[Skill] = []
        problems: list[str] = []
        folders = self.folders()
        if self.settings.problem:
            problems.append(self.settings.problem)
        for path, origin, hidden in folders:
            found, issues = scan_folder(path, hidden=hidden, origin=origin)
            skills.extend(found)
            problems.extend(issues)
        problems.extend(_mark_conflicts(skills))
        first: dict[str, Skill] = {}
        for skill in skills:
            if skill.conflict:
                continue
            winner = first.setdefault(skill.name, skill)
            if winner is not skill:
                note = (f'Skill "{skill.name}" is defined more than once: {winner.path} and '
                        f"{skill.path}; the first enabled one is used.")
                skill.problems.append(note)
                problems.append(note)
        return skills, problems

    def list(self) -> list[Skill]:
        """Every discovered skill in folder order (enabled or not), with its problems."""
        return self._scan()[0]

    def problems(self) -> builtins.list[str]:
        """Broken frontmatter, missing descriptions, bad names, name clashes, unreadable settings."""
        return self._scan()[1]

    def enabled(self) -> builtins.list[Skill]:
        """Enabled skills, de-duplicated by name (first folder wins), sorted by name."""
        out: dict[str, Skill] = {}
        for skill in self.list():
            if skill.active:
                out.setdefault(skill.name, skill)
        return [out[name] for name in sorted(out)]

    def find_enabled(self, name: str) -> Skill | None:
        """The first enabled skill called `name`, in folder order."""
        for skill in self.list():
            if skill.active and skill.name == name:
                return skill
        return None

    def plugin_folder(self, path: str) -> str | None:
        """The plugin whose skill folder `path` is (it cannot be removed as a user folder), or None."""
        try:
            wanted = Path(path).expanduser().absolute()
        except (OSError, RuntimeError):
            return None
        for folder, origin, _hidden in self.folders():
            if origin != "settings" and folder == wanted:
                return origin
        return None

    def set_source_enabled(self, origin: str, enabled: bool) -> int:
        """Enable or disable every skill of one source (`plugin:<name>`); returns how many."""
        matches = [s for s in self.list() if s.origin == origin]
        if not matches:
            raise UserFacingError(f"No skills come from {origin!r}.", hint="Run `llmspace skills list` to see the sources.")
        self._set_hidden(matches, not enabled)
        return len(matches)

    def resolve_locator(self, url: str) -> Path:
        """The folder of the enabled skill named by `llm-space://internal/skills/<name>`."""
        from .locator import parse_skill_locator

        name = parse_skill_locator(url)
        if name is None:
            raise UserFacingError(f"{url!r} is not a skill location.", hint="Expected llm-space://internal/skills/<name>.")
        skill = self.find_enabled(name)
        if skill is None:
            raise UserFacingError(f'Skill "{name}" not found.', hint="It may be disabled or removed; see Settings › Skills.")
        return skill.path

    # -- enable / disable ------------------------------------------------------------------
    def set_enabled(self, name: str, enabled: bool) -> None:
        """Show or hide a skill (by name) in every folder where it is found."""
        matches = [s for s in self.list() if s.name == name]
        if not matches:
            raise UserFacingError(f'No skill named "{name}" was found.', hint="Run `llmspace skills list` to see the skills.")
        self._set_hidden(matches, not enabled)

    def set_all_enabled(self, enabled: bool) -> None:
        """Enable all / Disable all (disable = hide every currently discovered skill)."""
        self._set_hidden(self.list(), not enabled)

    def _set_hidden(self, skills: builtins.list[Skill], hide: bool) -> None:
        by_folder: dict[tuple[Path, str], dict[str, bool]] = {}
        for s in skills:
            by_folder.setdefault((s.folder, s.origin), {})[s.name] = hide
        for (folder, origin), names in by_folder.items():
            if origin == "settings":
                self.settings.set_hidden(folder, names)
            else:
                self.settings.set_plugin_hidden(origin, names)

    # -- seeding ---------------------------------------------------------------------------
    def seed(self) -> bool:
        """Write the example skills into `<root>/skills` if that folder does not exist yet."""
        target = self.root.root / "skills"
        if target.exists():
            return False
        seeds: list[tuple[str, bytes]] = []
        for name in SEED_SKILLS:
            try:
                seeds.append((name, (ASSETS / name / SKILL_FILE).read_bytes()))
            except OSError:
                continue
        if not seeds:
            return False  # assets missing (broken install): try again next start
        target.mkdir(parents=True, exist_ok=True)
        for name, data in seeds:
            dest = target / name / SKILL_FILE
            if not dest.exists():
                write_bytes_atomic(dest, data)
        return True


def _mark_conflicts(skills: builtins.list[Skill]) -> builtins.list[str]:
    """Set `conflict` on enabled skills whose name an enabled skill of another source also
    has, when a plugin is among those sources (user folders keep first-wins). Returns the problems."""
    by_name: dict[str, builtins.list[Skill]] = {}
    for skill in skills:
        if skill.enabled:
            by_name.setdefault(skill.name, []).append(skill)
    problems: builtins.list[str] = []
    for name, group in by_name.items():
        origins = {s.origin for s in group}
        if len(origins) < 2 or origins == {"settings"}:
            continue
        parties = " and ".join(f"{'the skill folders' if s.origin == 'settings' else s.origin} ({s.file})" for s in group)
        note = f'Skill "{name}" is defined by {parties}; none of them is active until only one remains.'
        for s in group:
            s.conflict = note
        problems.append(note)
    return problems
