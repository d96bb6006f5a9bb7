"""No import cycle between modules of `llmspace/`.

A static scan (nothing is imported): every module's imports, read with `ast` —
`import a.b`, `from .a import b` (an edge to `a.b` when `b` is a submodule, else to `a`),
`from . import x` — at module level, inside `try`/`if`, and inside functions (a lazy import
hides a cycle from the interpreter, not from a reader: the six cycles of issue 21 were all
lazy), excluding those under `if TYPE_CHECKING:` (they never run). In the packages of
`TYPED_PACKAGES` (`llmspace/ui`, `llmspace/evals` and `llmspace/plugins`) the type-checking imports between their own modules count
too: a circle of type hints is still a circle for the reader. The modules that import
each other, directly or round a loop, form a strongly connected component; every component of more than one module is a cycle.

`ALLOWED` lists the cycles that remain while their folders are being reworked, each with why;
a cycle that is not inside one of them fails, and an entry that no longer matches a cycle
fails too (remove it).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import llmspace

PACKAGE = Path(llmspace.__file__).parent
ROOT = "llmspace"

# Packages whose modules' `if TYPE_CHECKING:` imports count as ties too: a circle that closes
# only through type hints still makes each module of it unreadable without the others. Add a
# package here once its circles are cut.
TYPED_PACKAGES: frozenset[str] = frozenset({"llmspace.ui", "llmspace.evals", "llmspace.plugins"})

# Cycles still to be cut, each with why (none today). Each entry: the modules of one cycle.
ALLOWED: tuple[frozenset[str], ...] = ()


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts
    }


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _runtime_imports(node: ast.AST, typed: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run — at module level, in `try`/`if`/`with` blocks, in
    function and class bodies (a lazy import still ties the two modules) — except under
    `if TYPE_CHECKING:` (its `else:` still counts)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test) and not typed:
            for stmt in child.orelse:
                yield from _runtime_imports(ast.Module(body=[stmt], type_ignores=[]))
        else:
            yield from _runtime_imports(child, typed)


def _targets(name: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> set[str]:
    found: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name == ROOT or alias.name.startswith(ROOT + "."):
                found.add(alias.name)
        return found & known
    if node.level:
        package = name if is_package else name.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
        if not (base == ROOT or base.startswith(ROOT + ".")):
            return found
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        found.add(sub if sub in known else base)
    return found & known


def _typed(name: str, packages: frozenset[str]) -> bool:
    """`name` is a module of one of `packages` (or one of them)."""
    return any(name == p or name.startswith(p + ".") for p in packages)


def import_graph(typed_packages: frozenset[str] = TYPED_PACKAGES) -> dict[str, set[str]]:
    """Each module's imports of other `llmspace` modules; in `typed_packages`, the
    type-checking imports between their own modules count too."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges: set[str] = set()
        for node in _runtime_imports(tree):
            edges |= _targets(name, path.name == "__init__.py", node, known)
        if _typed(name, typed_packages):
            for node in _runtime_imports(tree, typed=True):
                edges |= {t for t in _targets(name, path.name == "__init__.py", node, known)
                          if _typed(t, typed_packages)}
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _show(component: frozenset[str], graph: dict[str, set[str]]) -> str:
    ties = [f"{a} -> {b}" for a in sorted(component) for b in sorted(graph[a] & component)]
    return "{" + ", ".join(sorted(component)) + "}: " + "; ".join(ties)


def test_the_scan_sees_relative_absolute_package_and_lazy_imports_and_skips_type_checking() -> None:
    known = {"llmspace.a", "llmspace.a.b", "llmspace.a.c", "llmspace.d", "llmspace.e"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import c\n"
        "from .b import thing\n"
        "import llmspace.d\n"
        "if TYPE_CHECKING:\n"
        "    from ..d import other\n"
        "def f():\n"
        "    from .. import e\n"
    )
    tree = ast.parse(source)
    edges: set[str] = set()
    for node in _runtime_imports(tree):
        edges |= _targets("llmspace.a.x", False, node, known | {"llmspace.a.x"})
    assert edges == {"llmspace.a.c", "llmspace.a.b", "llmspace.d", "llmspace.e"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]


def test_no_module_of_llmspace_is_in_an_import_cycle() -> None:
    graph = import_graph()
    new = [c for c in cycles(graph) if not any(c <= allowed for allowed in ALLOWED)]
    assert new == [], "import cycles (move the shared names down to a module both can import): " + " | ".join(
        _show(c, graph) for c in new
    )


def test_every_allowed_cycle_is_still_a_cycle() -> None:
    found = cycles(import_graph())
    stale = [sorted(allowed) for allowed in ALLOWED if not any(c <= allowed for c in found)]
    assert stale == [], f"these cycles are gone: remove them from ALLOWED in {Path(__file__).name}: {stale}"


def test_type_checking_imports_count_inside_the_typed_packages_only() -> None:
    known = {"llmspace.ui", "llmspace.ui.a", "llmspace.ui.b", "llmspace.app"}
    source = ("from typing import TYPE_CHECKING\n"
              "if TYPE_CHECKING:\n"
              "    from .b import B\n"
              "    from ..app import App\n")
    tree = ast.parse(source)
    typed = {t for node in _runtime_imports(tree, typed=True)
             for t in _targets("llmspace.ui.a", False, node, known)}
    assert typed == {"llmspace.ui.b", "llmspace.app"}
    assert {t for t in typed if _typed(t, frozenset({"llmspace.ui"}))} == {"llmspace.ui.b"}
    assert not _typed("llmspace.uix", frozenset({"llmspace.ui"}))
