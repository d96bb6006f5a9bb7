"""Small modules, composed. No class in `llmspace/` is a mixin
(a class named *Mixin shares undeclared attributes with its host; use a component that gets
what it uses in its constructor), and no module of `llmspace/` is longer than 500 lines
(split it by responsibility)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import llmspace

PACKAGE = Path(llmspace.__file__).parent
MAX_LINES = 500


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_class_in_llmspace_is_a_mixin():
    mixins = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Mixin"):
                mixins.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}")
    assert mixins == [], "compose components instead of mixins: " + ", ".join(mixins)


def test_no_module_in_llmspace_is_longer_than_500_lines():
    long = []
    for path in _modules():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            long.append(f"{path.relative_to(PACKAGE.parent)} ({n} lines)")
    assert long == [], f"split by responsibility (at most {MAX_LINES} lines): " + ", ".join(long)


CALLER_LIST = re.compile(r"(?:^|[.;:(]\s+)(Callers?:|Called (?:by|through|from)\b|Used by\b)|\b(?:used|called) by `[^`]+\.py`", re.M)


def test_no_module_docstring_lists_the_modules_callers():
    """Who imports a module is the import graph's to say (`rg -l 'modname'`); a docstring's
    "Callers: …" / "Used by …" line goes stale as modules move (two of 112 were wrong), so a
    docstring says what lives in the module, never who calls it."""
    found = []
    for path in _modules():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False) or ""
        for match in CALLER_LIST.finditer(doc):
            line = doc[match.start():].strip().splitlines()[0]
            found.append(f"{path.relative_to(PACKAGE.parent)}: {line}")
    assert found == [], "say what the module holds, not who calls it:\n" + "\n".join(found)
