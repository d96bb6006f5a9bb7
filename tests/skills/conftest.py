"""Skill test fixtures: HOME and LLM_SPACE_HOME in temporary folders, a skill writer."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.paths import DataRoot


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary HOME, so the default folders (~/.claude/skills, …) are test folders."""
    h = tmp_path / "user-home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    return h


@pytest.fixture
def root(home: Path, user_home: Path) -> DataRoot:
    return DataRoot(home)


def write_skill(folder: Path, dirname: str, name: str | None = None, description: str | None = "Does things.",
                body: str = "# Body\n\nSteps.\n", raw: str | None = None) -> Path:
    """Create `<folder>/<dirname>/SKILL.md` (frontmatter from name/description, or raw text)."""
    d = folder / dirname
    d.mkdir(parents=True, exist_ok=True)
    if raw is None:
        lines = ["---"]
        lines.append(f"name: {name or dirname}")
        if description is not None:
            lines.append(f"description: {description}")
        lines += ["---", "", body]
        raw = "\n".join(lines)
    (d / "SKILL.md").write_text(raw, encoding="utf-8")
    return d
