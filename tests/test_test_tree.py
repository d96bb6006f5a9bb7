"""The tests mirror the package: every package of `llmspace/` (a folder with `__init__.py`, and
`llmspace/plugin_host/js`, the JavaScript host) has a twin folder under `tests/` at the same
relative path, itself a package (`__init__.py`, as every folder of tests/ is) holding at least
one `test_*.py`, so that the tests of a module are found beside the twins of its neighbours."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "llmspace"
TESTS = ROOT / "tests"
# Packages that are folders of code without an `__init__.py`.
CODE_FOLDERS = {"plugin_host/js"}
# Packages whose tests still sit flat in their parent's twin. None since tests/ui was split into
# editor/ and evals/ (issue 36, item 5): the set stays empty.
KNOWN_WITHOUT_TWIN: set[str] = set()


def _packages() -> list[str]:
    """Each package's path relative to llmspace/ ("" for llmspace itself)."""
    found = {p.parent.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("__init__.py")
             if "__pycache__" not in p.parts}
    return sorted({"" if rel == "." else rel for rel in found} | CODE_FOLDERS)


def _has_twin(rel: str) -> bool:
    twin = TESTS / rel
    return (twin / "__init__.py").is_file() and any(twin.glob("test_*.py"))


def test_every_package_has_a_twin_folder_of_tests() -> None:
    missing = [f"llmspace/{rel} → tests/{rel}/" for rel in _packages() if rel not in KNOWN_WITHOUT_TWIN
               and not _has_twin(rel)]
    assert missing == [], "give each package a twin under tests/ (with __init__.py and its test_*.py): " + ", ".join(missing)


def test_the_known_exceptions_are_packages_still_without_a_twin() -> None:
    stale = sorted(rel for rel in KNOWN_WITHOUT_TWIN if rel not in _packages() or _has_twin(rel))
    assert stale == [], "remove from KNOWN_WITHOUT_TWIN (twin made or package gone): " + ", ".join(stale)
