"""Skill test fixtures: the data root of `home` and a skill writer (HOME in a temporary folder is
`user_home`, in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.paths import DataRoot


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
