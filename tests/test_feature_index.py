"""The "Feature → file index" of docs/architecture.md stays true: every row names at least one
`path::function` (or `path::Class.method`), each path exists and each name is defined there
(found by parsing the file: Python by its AST, the JavaScript host's modules by their
declarations), and the behaviours a newcomer looks for first keep their rows."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
HEADING = "\n## Feature → file index"
REF = re.compile(r"`([\w./-]+\.(?:py|mjs|js))::([\w.]+)`")

# The 12 behaviours of issue 21 a newcomer must find in at most 3 moves: each keeps a row
# whose feature cell holds these words.
BEHAVIOURS = (
    "Ctrl-C or Stop",
    "command palette's list",
    "written atomically",
    "`@include` in a model reply",
    "zip-slip",
    "Python plugin tool call",
    "JS plugin's runtime",
    "redacted from error messages",
    "OpenAI Responses stream",
    "staged `writeThread`",
    "minimum window size",
    "dropped ZIP",
)


def _rows() -> list[tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    assert HEADING in text, "docs/architecture.md has no 'Feature → file index' section"
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 2 and cells[0] not in ("Feature", "---"):
            rows.append((cells[0], cells[1]))
    return rows


def _python_defines(path: Path, dotted: str) -> bool:
    """Whether `dotted` (`name`, `Class.method`, `Class.Inner.name`) is defined in `path`: a
    function, class or assigned name at module level, then methods and attributes inside."""
    scope: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
    *outer, last = dotted.split(".")
    for part in outer:
        found = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == part), None)
        if found is None:
            return False
        scope = found.body
    return any(last in _names(node) for node in scope)


def _names(node: ast.stmt) -> set[str]:
    """The names a statement defines in its scope."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return {t.id for t in targets if isinstance(t, ast.Name)}


def _js_defines(path: Path, dotted: str) -> bool:
    """Whether the ES module declares `dotted`: a function, class, const/let or a method."""
    text = path.read_text(encoding="utf-8")
    name = dotted.split(".")[-1]
    patterns = (rf"\bfunction\*?\s+{name}\s*\(", rf"\bclass\s+{name}\b", rf"\b(?:const|let|var)\s+{name}\s*=",
                rf"^\s+(?:async\s+)?{name}\s*\([^)]*\)\s*\{{")
    return any(re.search(p, text, re.M) for p in patterns)


def test_every_row_of_the_feature_index_names_a_file_and_function() -> None:
    rows = _rows()
    assert len(rows) >= 40, f"the index has only {len(rows)} rows"
    bare = [feature for feature, where in rows if not REF.search(where)]
    assert bare == [], f"rows without a `path::function`: {bare}"


def test_every_path_and_function_the_feature_index_names_exists() -> None:
    missing = []
    for feature, where in _rows():
        for rel, name in REF.findall(where):
            path = ROOT / rel
            if not path.is_file():
                missing.append(f"{feature}: {rel} does not exist")
            elif not (_python_defines(path, name) if path.suffix == ".py" else _js_defines(path, name)):
                missing.append(f"{feature}: {rel} defines no {name}")
    assert missing == [], "docs/architecture.md's feature index is out of date:\n" + "\n".join(missing)


def test_the_behaviours_a_newcomer_looks_for_keep_their_rows() -> None:
    features = [feature for feature, _ in _rows()]
    lost = [words for words in BEHAVIOURS if not any(words in feature for feature in features)]
    assert lost == [], f"rows of the feature index lost: {lost}"


def test_the_index_resolves_methods_and_refuses_names_that_are_not_there(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("X = 1\nclass A:\n    class B:\n        def c(self): ...\n    def d(self): ...\ndef e(): ...\n")
    assert all(_python_defines(module, n) for n in ("X", "A", "A.B.c", "A.d", "e"))
    assert not any(_python_defines(module, n) for n in ("A.c", "e.x", "Z", "A.B.d"))
