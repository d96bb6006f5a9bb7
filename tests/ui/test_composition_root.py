"""UI parts get narrow, typed services when they are built; only the composition root
(`ui/main_window.py`, and `ui/main.py` which starts it) sees the whole window or the App. A
part takes neither the window, the App nor the editor view untyped, and no part takes the
App whole (`app: App`): it gets the App's services it uses, bound by the root. An AST scan,
so it needs no display."""

from __future__ import annotations

import ast
from pathlib import Path

import llmspace.ui

UI = Path(llmspace.ui.__file__).parent
ROOTS = {"main_window.py", "main.py"}
HUB_NAMES = {"window", "app", "view"}  # never untyped outside the root
WHOLE = "App"  # no part outside the root takes it whole


def _untyped(annotation: ast.expr | None) -> bool:
    """No annotation, or `Any` (as a name, `typing.Any` or the string "Any")."""
    if annotation is None:
        return True
    if isinstance(annotation, ast.Constant) and annotation.value == "Any":
        return True
    return (isinstance(annotation, ast.Name) and annotation.id == "Any") or (
        isinstance(annotation, ast.Attribute) and annotation.attr == "Any")


def _names_app(annotation: ast.expr | None) -> bool:
    """The annotation is the App (`App`, `app.App`, "App", `App | None`)."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return False
    return any((isinstance(n, ast.Name) and n.id == WHOLE) or (isinstance(n, ast.Attribute) and n.attr == WHOLE)
               for n in ast.walk(annotation))


def _hubs(path: Path, shown: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            a = node.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))):
                if arg.arg in HUB_NAMES and _untyped(arg.annotation):
                    found.append(f"{shown}:{arg.lineno} parameter {arg.arg}")
                elif _names_app(arg.annotation):
                    found.append(f"{shown}:{arg.lineno} parameter {arg.arg}: App")
        elif isinstance(node, ast.AnnAssign):
            t = node.target
            name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
            if name in HUB_NAMES and _untyped(node.annotation):
                found.append(f"{shown}:{node.lineno} attribute {name}: Any")
            elif _names_app(node.annotation):
                found.append(f"{shown}:{node.lineno} attribute {name}: App")
    return sorted(found, key=lambda f: int(f.split(":")[1].split()[0]))  # in line order


def _parts() -> list[Path]:
    """Every module of llmspace/ui but the composition root."""
    return [p for p in sorted(UI.rglob("*.py")) if p.relative_to(UI).as_posix() not in ROOTS]


def test_no_ui_module_outside_the_composition_root_takes_the_window_the_app_or_the_view_untyped_or_the_app_whole():
    hubs = [h for p in _parts() for h in _hubs(p, p.relative_to(UI.parent).as_posix())]
    assert hubs == [], "give the part the typed services it uses (ui/services.py, ui/app_services.py, ui/editor/context.py): " + ", ".join(hubs)


def test_the_scan_sees_an_untyped_window_parameter_and_attribute(tmp_path):
    sample = tmp_path / "part.py"
    sample.write_text("from typing import Any\nclass P:\n    window: Any\n"
                      "    def __init__(self, master, window: Any, app) -> None: ...\n", encoding="utf-8")
    assert _hubs(sample, "part.py") == ["part.py:3 attribute window: Any", "part.py:4 parameter window",
                                          "part.py:4 parameter app"]


def test_the_scan_sees_an_untyped_view_and_the_app_taken_whole(tmp_path):
    sample = tmp_path / "part.py"
    sample.write_text("from typing import Any\nclass P:\n    app: App\n"
                      "    def __init__(self, view: Any, app: 'App', other: App | None, ok: Services) -> None: ...\n"
                      "def f(cards: Any, view) -> None: ...\n", encoding="utf-8")
    assert _hubs(sample, "part.py") == ["part.py:3 attribute app: App", "part.py:4 parameter view",
                                          "part.py:4 parameter app: App", "part.py:4 parameter other: App",
                                          "part.py:5 parameter view"]


def test_no_ui_part_imports_the_main_window():
    importers = []
    for p in _parts():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("main_window"):
                importers.append(p.relative_to(UI.parent).as_posix())
    assert importers == [], "parts get services, not the window: " + ", ".join(importers)
