"""docs/architecture.md stays true: every repository path it names exists, and the imports
inside `llmspace/` follow its layer table (each unit imports only the units its row allows)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "llmspace"
FOUNDATION = {"errors", "redact", "origin", "paths", "jsonio", "jsoncheck", "cancel", "registry", "__init__"}
REPO_PREFIXES = ("llmspace/", "tests/", "docs/", "bench/", "build/", "scripts/")


def _doc() -> str:
    return DOC.read_text(encoding="utf-8")


def test_every_repository_path_the_architecture_doc_names_exists() -> None:
    named = {m for m in re.findall(r"`([^`\s]+)`", _doc()) if m.startswith(REPO_PREFIXES)}
    assert named, "the doc names no repository paths"
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert missing == [], f"docs/architecture.md names paths that do not exist: {missing}"


def _layer_table() -> dict[str, set[str]]:
    allowed: dict[str, set[str]] = {}
    section = _doc().split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("Unit", "---"):
            continue
        unit = cells[0].strip("`")
        targets: set[str] = set()
        for word in re.split(r"[,\s]+", cells[2]):
            word = word.strip("`")
            if word == "foundation":
                targets |= FOUNDATION
            elif word:
                targets.add(word)
        if unit == "foundation":
            for name in FOUNDATION:
                allowed[name] = targets
        else:
            allowed[unit] = targets
    return allowed


def _unit_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imported_units(path: Path) -> set[str]:
    rel = path.relative_to(PACKAGE)
    package = ["llmspace", *rel.parts[:-1]]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            parts = module.split(".")
            if parts[0] != "llmspace":
                continue
            if len(parts) == 1:  # from llmspace import x / from . import x at the top
                found |= {a.name if (PACKAGE / a.name).exists() or (PACKAGE / f"{a.name}.py").exists() else "__init__"
                          for a in node.names}
            else:
                found.add(parts[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "llmspace" and len(parts) > 1:
                    found.add(parts[1])
    return found


def test_imports_follow_the_layer_table_of_the_architecture_doc() -> None:
    allowed = _layer_table()
    assert {"ui", "core", "agent", "providers"} <= set(allowed)
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        unit = _unit_of(path)
        if unit in ("__main__",):
            continue
        assert unit in allowed, f"{path.relative_to(ROOT)}: the unit {unit!r} has no row in the layer table"
        for target in sorted(_imported_units(path) - {unit}):
            if target not in allowed[unit]:
                problems.append(f"{path.relative_to(ROOT)} ({unit}) imports {target}")
    assert problems == [], "imports that break docs/architecture.md's layer table:\n" + "\n".join(problems)
