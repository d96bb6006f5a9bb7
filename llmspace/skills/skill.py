"""One Agent Skill: a folder with a `SKILL.md` whose YAML frontmatter names and describes it.

`Skill` is what discovery returns; `parse_skill_text` splits and validates the frontmatter
(`jsonio.load_yaml`: PyYAML's safe loader with aliases bounded); `scan_folder` lists the
skills of one discovery folder with the problems found (broken frontmatter, missing
description, bad names, broken symlinks) — it never raises for bad skill folders. Name rule
(Agent Skills): lowercase letters, digits and hyphens, 1–64 characters, no leading, trailing
or double hyphen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..jsonio import UnreadableFileError, load_yaml, open_regular_file, read_file_bytes

SKILL_FILE = "SKILL.md"
_SCAN_CHARS = 256 * 1024
SKILL_MAX_BYTES = 16 * 1024 * 1024  # a SKILL.md larger than this is not read
NAME_RE = re.compile(r"^(?!-)(?!.*--)[a-z0-9-]{1,64}(?<!-)$")
_FRONTMATTER_RE = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)(?:\r?\n)?^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)

# C0 but \t and \n, DEL, C1: what `core.names.plain_text` removes (skills may not import core)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def is_valid_skill_name(name: object) -> bool:
    return isinstance(name, str) and bool(NAME_RE.match(name))


class SkillFormatError(ValueError):
    """A SKILL.md whose frontmatter is missing, broken or incomplete."""


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(frontmatter YAML text or None, body) of a markdown file."""
    m = _FRONTMATTER_RE.match(text)
    if not m:
        return None, text.lstrip("\ufeff")
    return m.group(1), text[m.end():]


def parse_skill_text(text: str) -> tuple[dict[str, Any], str]:
    """Frontmatter fields and body of a SKILL.md; raises SkillFormatError with the reason."""
    raw, body = split_frontmatter(text)
    if raw is None:
        raise SkillFormatError("SKILL.md has no YAML frontmatter (a block between '---' lines at the top)")
    try:
        meta = load_yaml(raw) if raw.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SkillFormatError(f"the frontmatter is not valid YAML{where}: {reason}") from None
    if not isinstance(meta, dict):
        raise SkillFormatError("the frontmatter must be a YAML mapping of fields")
    name = meta.get("name")
    if name is None or (isinstance(name, str) and not name.strip()):
        raise SkillFormatError("the frontmatter has no name")
    if not is_valid_skill_name(name):
        raise SkillFormatError(
            f"the name {name!r} is not a valid skill name (lowercase letters, digits and hyphens, "
            "1-64 characters, no leading, trailing or double hyphen)"
        )
    desc = meta.get("description")
    if not isinstance(desc, str) or not desc.strip():
        raise SkillFormatError("the frontmatter has no description")
    return meta, body


@dataclass
class Skill:
    """A discovered skill. `path` is the skill's folder; `folder` the discovery folder."""

    name: str
    description: str
    path: Path
    folder: Path
    enabled: bool = True
    origin: str = "settings"  # "settings" or the plugin that contributed the folder
    metadata: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    conflict: str = ""  # why the skill is inactive: its name is claimed by another source

    @property
    def active(self) -> bool:
        """Enabled and not in a name conflict: what `available_skills` and `skill()` may use."""
        return self.enabled and not self.conflict

    @property
    def file(self) -> Path:
        return self.path / SKILL_FILE

    def read(self) -> tuple[dict[str, Any], str]:
        """All frontmatter fields and the body, read fresh from disk."""
        # UnreadableFileError (a UserFacingError) for a FIFO, device, missing or huge file
        text = read_file_bytes(self.file, max_bytes=SKILL_MAX_BYTES).decode("utf-8", errors="replace")
        try:
            return parse_skill_text(text)
        except SkillFormatError:
            return dict(self.metadata), split_frontmatter(text)[1]

    def body(self) -> str:
        """SKILL.md without its frontmatter, stripped."""
        return self.read()[1].strip()


def scan_folder(folder: Path, *, hidden: set[str] | frozenset[str] = frozenset(), origin: str = "settings") -> tuple[list[Skill], list[str]]:
    """Skills in the direct child folders (or symlinks to folders) of `folder`, sorted by name,
    and the problems found. A missing folder has no skills and no problems."""
    skills: list[Skill] = []
    problems: list[str] = []
    try:
        if not folder.exists():
            return [], []
        if not folder.is_dir():
            return [], [f"{folder}: not a folder."]
        children = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        return [], [f"{folder}: cannot be read ({exc.strerror or exc})."]
    for child in children:
        if child.name.startswith("."):
            continue
        try:
            if not child.is_dir():
                if child.is_symlink():
                    problems.append(f"{child}: broken symlink.")
                continue
        except OSError as exc:
            problems.append(f"{child}: cannot be read ({exc.strerror or exc}).")
            continue
        skill_file = child / SKILL_FILE
        if not is_valid_skill_name(child.name):
            problems.append(f"{child}: the folder name is not a valid skill name; skipped.")
            continue
        try:
            with open_regular_file(skill_file) as f:  # a FIFO or device is refused, never waited on
                text = f.read(_SCAN_CHARS).decode("utf-8", errors="replace")  # the frontmatter is at the top
        except UnreadableFileError as exc:
            problems.append(f"{child}: no {SKILL_FILE}; skipped." if exc.missing else f"{skill_file}: {exc.reason}; skipped.")
            continue
        except OSError as exc:
            problems.append(f"{skill_file}: cannot be read ({exc.strerror or exc}); skipped.")
            continue
        try:
            meta, _body = parse_skill_text(text)
        except SkillFormatError as exc:
            problems.append(f"{skill_file}: {exc}; skipped.")
            continue
        name = str(meta["name"])
        own: list[str] = []
        if name != child.name:
            own.append(f'{skill_file}: the skill is named "{name}" but its folder is "{child.name}".')
        skills.append(
            Skill(
                name=name,
                description=_CONTROLS.sub("", str(meta["description"])).strip(),  # printed and shown
                path=child.absolute(),
                folder=folder,
                enabled=name not in hidden,
                origin=origin,
                metadata=meta,
                problems=own,
            )
        )
        problems.extend(own)
    skills.sort(key=lambda s: s.name)
    return skills, problems
