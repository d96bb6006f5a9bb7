"""docs/architecture.md stays true: every repository path it names exists, and the imports
inside `llmspace/` follow its layer table: each unit imports only the units its row allows,
and its row allows only what it imports (a right nobody uses is a right someone will).
A unit with a "Floors of `unit/`" sub-table places each of its modules on one floor, and its
imports (type-checking and lazy ones too) stay on their floor or go down.
README.md's Layout section names every top-level unit of `llmspace/`, and the shared design's
layer list (`../shared/DESIGN.md`, when it is beside the checkout) names the same packages."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "llmspace"
FOUNDATION = {"errors", "redact", "secrets", "origin", "origin_session", "paths", "jsonio", "jsoncheck", "temp_files", "processes", "cancel", "registry", "__init__"}
REPO_PREFIXES = ("llmspace/", "tests/", "docs/", "bench/", "build/", "scripts/")


def _doc() -> str:
    return DOC.read_text(encoding="utf-8")


def test_every_repository_path_the_architecture_doc_names_exists() -> None:
    named = {m.split("::")[0] for m in re.findall(r"`([^`\s]+)`", _doc()) if m.startswith(REPO_PREFIXES)}
    assert named, "the doc names no repository paths"
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert missing == [], f"docs/architecture.md names paths that do not exist: {missing}"


def _layer_rows() -> dict[str, set[str]]:
    """Each row of the layer table: unit -> the words of its "May import" cell
    (`foundation` stays one word)."""
    rows: dict[str, set[str]] = {}
    section = _doc().split("\n## Layers", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("Unit", "---"):
            continue
        rows[cells[0].strip("`")] = {w.strip("`") for w in re.split(r"[,\s]+", cells[2]) if w.strip("`")}
    return rows


def _layer_table() -> dict[str, set[str]]:
    allowed: dict[str, set[str]] = {}
    for unit, words in _layer_rows().items():
        targets: set[str] = set()
        for word in words:
            targets |= FOUNDATION if word == "foundation" else {word}
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
        elif (name := _dynamic_import(node)) is not None:
            parts = name.split(".")
            if parts[0] == "llmspace" and len(parts) > 1:
                found.add(parts[1])
    return found


def _dynamic_import(node: ast.AST) -> str | None:
    """The module of `importlib.import_module("llmspace.x…")` (or an f-string starting with it)."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute | ast.Name)):
        return None
    if (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) != "import_module":
        return None
    arg = node.args[0]
    if isinstance(arg, ast.JoinedStr) and arg.values:
        arg = arg.values[0]
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None


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


def test_the_ui_draws_and_reaches_the_engine_and_the_evaluations_only_through_presenters() -> None:
    """The UI draws; presenters decide: `ui` imports nothing of `local` (downloads, the
    engine, the models) or `evals` (starting, stopping and reading evaluations), not even for
    types — `presenters/local_models.py` and `presenters/evaluations.py` work them."""
    named = sorted({"local", "evals"} & _layer_table()["ui"])
    assert named == [], f"the ui row of the layer table names {named}"


def test_the_layer_table_allows_each_unit_only_the_units_it_imports() -> None:
    """allowed == used: a row naming a unit its code never imports fails, so the table
    says what the code depends on today (a new dependency is a deliberate table edit)."""
    used: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        unit = _unit_of(path)
        row = "foundation" if unit in FOUNDATION else unit
        targets = {"foundation" if t in FOUNDATION else t for t in _imported_units(path) - {unit}}
        used.setdefault(row, set()).update(targets)
    problems = []
    for row, words in sorted(_layer_rows().items()):
        unused = sorted(words - used.get(row, set()))
        if unused:
            problems.append(f"{row} may import {', '.join(unused)} but imports none of it")
    assert problems == [], "rows of docs/architecture.md's layer table to narrow:\n" + "\n".join(problems)


FLOORED_UNITS = ("plugins",)


def _floors(unit: str) -> list[tuple[int, list[str]]]:
    """The "Floors of `unit/`" sub-table of the Layers section: (floor, the paths of its
    cell, relative to `llmspace/unit/`), the ground first."""
    section = _doc().split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    parts = section.split(f"\n### Floors of `{unit}/`", 1)
    assert len(parts) == 2, f"docs/architecture.md's Layers section has no 'Floors of `{unit}/`' sub-table"
    floors = []
    for line in parts[1].split("\n### ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].isdigit():
            floors.append((int(cells[0]), re.findall(r"`([^`]+)`", cells[1])))
    return sorted(floors)


def _floor_of(unit: str) -> dict[Path, int]:
    """Each module of `llmspace/unit/` -> its floor (the longest entry naming it: a folder
    entry places every module under it)."""
    base = PACKAGE / unit
    entries: dict[str, int] = {}
    for floor, paths in _floors(unit):
        for entry in paths:
            assert (base / entry).exists(), f"the floors of {unit}/ name {entry}, which does not exist"
            assert entry not in entries, f"the floors of {unit}/ name {entry} twice"
            entries[entry] = floor
    placed: dict[Path, int] = {}
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(base).as_posix()
        if rel == "__init__.py":
            continue  # the unit's own face
        named = [e for e in entries if rel == e or (e.endswith("/") and rel.startswith(e))]
        if named:
            placed[path] = entries[max(named, key=len)]
    return placed


def _imported_files(path: Path) -> set[Path]:
    """The files of `llmspace/` that `path` imports, every import statement counted (at the
    top, lazy, and under `if TYPE_CHECKING:`)."""
    package = ["llmspace", *path.relative_to(PACKAGE).parts[:-1]]
    found: set[Path] = set()

    def resolve(dotted: list[str]) -> Path | None:
        where = PACKAGE.parent.joinpath(*dotted)
        for candidate in (where.with_suffix(".py"), where / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        modules: list[list[str]] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = [*base, *node.module.split(".")] if node.module else base
            else:
                module = (node.module or "").split(".")
            modules = [[*module, a.name] for a in node.names if resolve([*module, a.name])] or [module]
        elif isinstance(node, ast.Import):
            modules = [a.name.split(".") for a in node.names]
        for module in modules:
            if module[0] == "llmspace" and (file := resolve(module)) is not None:
                found.add(file)
    return found


@pytest.mark.parametrize("unit", FLOORED_UNITS)
def test_every_module_of_a_floored_unit_stands_on_one_floor(unit: str) -> None:
    placed = _floor_of(unit)
    missing = sorted(p.relative_to(PACKAGE / unit).as_posix() for p in (PACKAGE / unit).rglob("*.py")
                     if p not in placed and p != PACKAGE / unit / "__init__.py")
    assert missing == [], f"modules of {unit}/ on no floor of docs/architecture.md's 'Floors of `{unit}/`': {missing}"
    assert {f for f, _ in _floors(unit)} == set(range(1, len(_floors(unit)) + 1)), "floors are numbered 1, 2, … from the ground"


@pytest.mark.parametrize("unit", FLOORED_UNITS)
def test_imports_inside_a_floored_unit_stay_on_their_floor_or_go_down(unit: str) -> None:
    placed = _floor_of(unit)
    problems = []
    for path, floor in sorted(placed.items()):
        for target in sorted(_imported_files(path)):
            if target in placed and placed[target] > floor:
                problems.append(f"{path.relative_to(ROOT)} (floor {floor}) imports "
                                f"{target.relative_to(ROOT)} (floor {placed[target]})")
    assert problems == [], f"imports that run up the floors of {unit}/ (docs/architecture.md):\n" + "\n".join(problems)


def test_the_floor_scan_sees_lazy_type_checking_relative_and_package_imports(tmp_path: Path) -> None:
    found = _imported_files(PACKAGE / "plugins" / "hosts" / "pool.py")
    assert PACKAGE / "plugins" / "hosts" / "host.py" in found
    assert PACKAGE / "paths.py" in found
    assert all(p.is_file() for p in found)


def test_the_readme_layout_names_every_top_level_unit() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = readme.split("\n## Layout", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([\w/.]+)`", layout))
    units = sorted(p.name + "/" if p.is_dir() else p.name for p in PACKAGE.iterdir()
                   if (p.is_dir() and any(p.glob("*.py"))) or (p.suffix == ".py" and p.name != "__init__.py"))
    missing = [u for u in units if u not in named]
    assert missing == [], f"README.md's Layout section does not name: {missing}"


DESIGN = ROOT.parent / "shared" / "DESIGN.md"


def test_the_shared_designs_layer_list_and_the_package_name_the_same_units() -> None:
    """The design's layer list and `llmspace/` agree on every package (e.g. the plugin host is
    `plugin_host/` in both) and on every module the design names; the modules it does not name
    are listed under "Where the code differs" in docs/architecture.md."""
    if not DESIGN.is_file():
        pytest.skip(f"the shared design is not beside this checkout ({DESIGN})")
    block = DESIGN.read_text(encoding="utf-8").split("\n## Layers", 1)[1].split("```", 2)[1]
    named: set[str] = set()
    for line in block.splitlines():
        if m := re.match(r"((?:\w+(?:/|\.py))(?:,\s*\w+(?:/|\.py))*)", line):
            named |= {n.strip() for n in m.group(1).split(",")}
    packages = {p.name + "/" for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.name for p in PACKAGE.glob("*.py")} - {"__init__.py", "__main__.py"}
    differences = _doc().split("\n## Where the code differs from the shared design", 1)[1]
    # A unit added after the design's list was written is accepted when "Where the code differs" names it.
    assert sorted(p for p in packages - named if f"`llmspace/{p}`" not in differences) == [], \
        "packages neither in the design's layer list nor under 'Where the code differs'"
    assert sorted(n for n in named if not (PACKAGE / n).exists()) == [], "units the design names that llmspace/ lacks"
    unexplained = sorted(m for m in modules - named if f"`llmspace/{m}`" not in differences)
    assert unexplained == [], "top-level modules neither in the design's layer list nor under 'Where the code differs'"
