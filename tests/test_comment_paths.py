"""Paths that docstrings and comments name stay true, as the feature index's do
(tests/test_feature_index.py): every path to a `.py`, `.mjs`, `.js` or `.ts` file written in a
docstring or comment of the project's Python files names a file of this repository, and a bare
file name names one that exists somewhere in it. A renamed or removed module fails here.

What is not a repository path: a plugin's own files, named by the folders of the plugin layout
(`tools/…`, `commands/…`, `thread-storages/…`, as the plugin guide writes them), and globs."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("llmspace", "tests", "bench", "build", "scripts", ".ci")
# A path-like word: folders and a file name with a code extension, not part of a longer word,
# a glob (`*`) or a URL.
PATH = re.compile(r"(?<![\w./*:-])((?:[\w-]+/)*[\w-]+\.(?:py|mjs|js|ts))(?![\w/*])")
# The plugin layout of the plugin guide: these folders name files inside a plugin, not ours.
PLUGIN_FOLDERS = ("tools/", "commands/", "thread-storages/", "tests/test_plugin.py")
# Bare file names a plugin author writes (examples in docstrings of the plugin tests).
PLUGIN_FILE_EXAMPLES = {"hello.ts", "hello.js", "echo-args.ts"}


def _sources() -> list[Path]:
    return sorted(p for folder in SCANNED for p in (ROOT / folder).rglob("*.py"))


def _texts(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and docstring in `path`."""
    source = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            doc = ast.get_docstring(node, clean=False)
            if doc and node.body:
                yield node.body[0].lineno, doc


def _exists(ref: str, where: Path, names: set[str], paths: list[str]) -> bool:
    if "/" not in ref:
        return ref in names or ref in PLUGIN_FILE_EXAMPLES
    if ref.startswith(PLUGIN_FOLDERS):
        return True
    bases = (ROOT, ROOT / "llmspace", where.parent, ROOT / "tests")
    return any((base / ref).exists() for base in bases) or any(p.endswith("/" + ref) for p in paths)


def stale_references(files: list[Path]) -> list[str]:
    tracked = [p for p in ROOT.rglob("*") if not {".git", ".venv", ".cache", "node_modules"} & set(p.parts)]
    names = {p.name for p in tracked}
    paths = [p.as_posix() for p in tracked]
    stale = []
    for path in files:
        for line, text in _texts(path):
            for match in PATH.finditer(text):
                if not _exists(match.group(1), path, names, paths):
                    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                    stale.append(f"{where}:{line} names {match.group(1)}, which does not exist")
    return stale


def test_every_path_a_docstring_or_comment_names_exists() -> None:
    assert stale_references(_sources()) == []


def test_a_renamed_module_named_in_a_comment_is_found(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text('"""Reads what `llmspace/plugins/contrib_models.py` builds."""\n'
                      "# see code_calls.py and llmspace/jsonio.py\n", encoding="utf-8")
    found = stale_references([module])
    assert [s.split(" names ")[1] for s in found] == [
        "code_calls.py, which does not exist",
        "llmspace/plugins/contrib_models.py, which does not exist",
    ]
