"""The template path of prompt rendering: Jinja2 in its sandbox.

A text takes the template path when it contains `{%`, `{{ @…`, or a `{{…}}` holding one of
`. [ | (` (`is_template`). `TemplateRenderer.render(text)` then:
- rewrites `{{@include(expr)}}` into a filter call; an include reads the file through the
  injected loader and renders it recursively with the same variables (depth ≤ 10, at most
  100 includes per render; missing → ""; a file that is not a valid template is inserted
  verbatim);
- offers `exists(path)` (memoised per renderer, i.e. per render);
- gives every identifier the text uses but no variable defines a *sentinel*: a string that
  prints itself as `{{name}}` (so unknown names stay as written) and is falsy in `{% if %}`
  (a deliberate choice: empty and unknown values are falsy);
- prints JSON objects and lists as pretty JSON and `true`/`false`/`` for
  JSON booleans and null, the way the original's engine prints them.

Templates run in the sandbox of `core/templating/sandbox.py`: `_`-prefixed attributes
(`__class__`, `__globals__`, …) raise instead of rendering empty; no recursive loops, no
`lipsum`. Every render is bounded (per text, with its includes): time (`MAX_SECONDS`, or the
renderer's `time_limit`), output size (`MAX_TEXT`), integer size (`MAX_INT_BITS`, refused
before computing), list/text growth, the size of anything printed, compared or hashed, loop
iterations (`MAX_ITERATIONS`) and ranges (`MAX_RANGE`). A text past a bound raises
`TemplateLimitError` (the caller stops the render naming the place); any other failure
raises `TemplateError` (the caller keeps the original text and reports a warning).

No I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import TemplateSyntaxError, meta, nodes, pass_context
from jinja2.exceptions import SecurityError

from .jinja_values import JsonDict, JsonList, Sentinel, wrap_json
from .sandbox import (
    MAX_INT_BITS,
    MAX_ITERATIONS,
    MAX_RANGE,
    MAX_SECONDS,
    MAX_TEXT,
    LimitExceeded,
    harden,
    new_env,
)

MAX_INCLUDE_DEPTH = 10
MAX_INCLUDE_COUNT = 100

# (The first `[^{}.[|(]*` cannot overlap the marker class, so matching stays linear.)
TEMPLATE_MARKER_RE = re.compile(r"\{%|\{\{\s*@|\{\{[^{}.\[|(]*[.\[|(][^{}]*\}\}")
_INCLUDE_RE = re.compile(r"\{\{\s*@include\(([\s\S]*?)\)\s*\}\}")
_EXPRESSION_RE = re.compile(r"\{\{([\s\S]*?)\}\}|\{%([\s\S]*?)%\}")
_STRING_RE = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")
_IDENT_RE = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z0-9_]*)")

# Names that never get a sentinel or count as variable references.
RESERVED = frozenset([
    "if", "elif", "else", "endif", "for", "endfor", "in", "and", "or", "not", "is", "true", "false", "none",
    "null", "True", "False", "None", "set", "endset", "macro", "endmacro", "call", "endcall", "filter",
    "endfilter", "block", "endblock", "extends", "include", "import", "from", "as", "do", "with", "without",
    "raw", "endraw", "loop", "super", "range", "cycler", "joiner", "dict", "namespace", "exists", "caller",
    "varargs", "kwargs", "self", "recursive",
])


class TemplateError(Exception):
    """A template that cannot be parsed or rendered (message says why, with the line)."""


class TemplateLimitError(TemplateError):
    """A template that exceeded a work bound; `reason` completes "the template …"."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"refused by the sandbox: the template {reason}")
        self.reason = reason



def is_template(text: str) -> bool:
    """True when `text` takes the template path (the rule is in the module docstring)."""
    return ("{%" in text or "{{" in text) and TEMPLATE_MARKER_RE.search(text) is not None


def uses_include(text: str) -> bool:
    return _INCLUDE_RE.search(text) is not None


def rewrite_macros(text: str) -> str:
    """`{{@include(expr)}}` → `{{ (expr) | __include }}`; an empty argument renders nothing."""

    def repl(m: re.Match[str]) -> str:
        expr = m.group(1).strip()
        return f"{{{{ ({expr}) | __include }}}}" if expr else ""

    return _INCLUDE_RE.sub(repl, text)



_SCAN_ENV = new_env()
_SCAN_ENV.filters["__include"] = lambda v: v


def file_arguments(text: str) -> tuple[list[Any], list[Any]] | None:
    """The argument expressions (Jinja AST nodes) of the `@include(…)` and `exists(…)` calls
    in a template text, as (includes, exists); None when it does not parse. For import checks."""
    try:
        ast = _SCAN_ENV.parse(rewrite_macros(text))
    except TemplateSyntaxError:
        return None
    includes = [f.node for f in ast.find_all(nodes.Filter) if f.name == "__include" and f.node is not None]
    probes = [c.args[0] for c in ast.find_all(nodes.Call)
              if isinstance(c.node, nodes.Name) and c.node.name == "exists" and c.args]
    return includes, probes


def undeclared_names(text: str) -> set[str] | None:
    """Top-level names a template reads (not set/loop locals); None when it does not parse."""
    try:
        ast = _SCAN_ENV.parse(rewrite_macros(text))
    except TemplateSyntaxError:
        return None
    return {n for n in meta.find_undeclared_variables(ast) if n not in RESERVED and not n.startswith("__")}


def _expression_idents(text: str) -> list[tuple[str, int, int]]:
    """Identifiers inside `{{ }}` / `{% %}` (outside quotes, not after a dot), with spans."""
    out: list[tuple[str, int, int]] = []
    for m in _EXPRESSION_RE.finditer(text):
        group = 1 if m.group(1) is not None else 2
        inner, base = m.group(group), m.start(group)
        masked = _STRING_RE.sub(lambda s: " " * len(s.group(0)), inner)
        for im in _IDENT_RE.finditer(masked):
            out.append((im.group(1), base + im.start(1), base + im.end(1)))
    return out


def referenced_names(text: str) -> list[tuple[str, int, int]]:
    """(name, start, end) for each use of a variable in template text, for editor hints."""
    names = undeclared_names(text)
    found = []
    for name, start, end in _expression_idents(text):
        if name in RESERVED or name.startswith("__"):
            continue
        if names is not None and name not in names:
            continue
        if names is None and re.match(r"\s*=(?!=)", text[end:]):
            continue  # keyword argument
        found.append((name, start, end))
    return found


def rename_in_template(text: str, old: str, new: str) -> str:
    """Rename identifier uses of `old` inside expressions (not in quotes, not after a dot)."""
    spans = [(s, e) for name, s, e in _expression_idents(text) if name == old]
    for start, end in reversed(spans):
        text = text[:start] + new + text[end:]
    return text


class TemplateRenderer:
    """Renders template texts with one set of variables; one instance per render.

    `load_file(path)` returns a file's text or None (missing, unreadable, a folder);
    `file_exists(path)` says whether the path is a readable regular file; `time_limit` bounds
    the wall time of each `render` (seconds)."""

    def __init__(
        self,
        variables: Mapping[str, Any] | Callable[[str], tuple[bool, Any]],
        load_file: Callable[[str], str | None],
        file_exists: Callable[[str], bool],
        time_limit: float = MAX_SECONDS,
    ) -> None:
        # `variables`: a mapping, or `lookup(name) -> (found, value)` called only for the
        # names a text actually uses (so unrelated variables are never resolved).
        if callable(variables):
            self._lookup = variables
        else:
            values = dict(variables)
            self._lookup = lambda name: (name in values, values.get(name))
        self._load_file = load_file
        self._file_exists = file_exists
        self._exists_memo: dict[str, bool] = {}
        self._depth = 0
        self.include_count = 0
        self.env = new_env(time_limit)

        @pass_context  # never constant-folded at compile time: every include runs at render time
        def include_filter(_context: Any, path: Any) -> str:
            return self._include(path)

        self.env.filters["__include"] = include_filter
        self.env.globals["exists"] = self._exists

    def _exists(self, path: Any) -> bool:
        if not isinstance(path, str) or not path.strip():
            return False
        if path not in self._exists_memo:
            self._exists_memo[path] = bool(self._file_exists(path))
        return self._exists_memo[path]

    def _include(self, path: Any) -> str:
        if not isinstance(path, str) or not path:
            return ""
        if self._depth >= MAX_INCLUDE_DEPTH or self.include_count >= MAX_INCLUDE_COUNT:
            return ""
        self.include_count += 1
        content = self._load_file(path)
        if not content:
            return ""
        self._depth += 1
        try:
            return self._render(content)
        except TemplateSyntaxError:
            return content  # a readable file that is not a valid template goes in verbatim
        except LimitExceeded as exc:
            if " (in the included file " in exc.reason:
                raise
            raise LimitExceeded(f"{exc.reason} (in the included file {path})") from None
        except SecurityError:
            raise
        except Exception:
            return ""
        finally:
            self._depth -= 1

    def _context(self, ast: Any) -> dict[str, Any]:
        ctx: dict[str, Any] = {}
        for name in meta.find_undeclared_variables(ast):
            if name in self.env.globals or name in RESERVED or name.startswith("__"):
                continue
            found, value = self._lookup(name)
            ctx[name] = value if found else Sentinel("{{" + name + "}}")
        return ctx

    def _render(self, text: str) -> str:
        ast = self.env.parse(rewrite_macros(text))  # parsed once: names and compilation
        context = self._context(ast)
        template = self.env.from_string(harden(self.env, ast))
        pieces: list[str] = []
        budget = self.env.budget
        for piece in template.generate(context):
            if self._depth == 0:
                budget.emit(len(piece))
            else:
                budget.charge(len(piece))
            pieces.append(piece)
        return "".join(pieces)

    def render(self, text: str) -> str:
        """Render `text`; raises TemplateError (with the reason and line) on any failure.

        The work limits apply to each text (with its includes) separately."""
        self.env.budget.reset()
        try:
            return self._render(text)
        except TemplateSyntaxError as exc:
            raise TemplateError(f"{exc.message} (line {exc.lineno})") from None
        except LimitExceeded as exc:
            raise TemplateLimitError(exc.reason) from None
        except MemoryError:
            raise TemplateLimitError("needs too much memory") from None
        except SecurityError as exc:
            raise TemplateError(f"refused by the sandbox: {exc}") from None
        except RecursionError:
            raise TemplateError("the template nests too deeply") from None
        except Exception as exc:  # any render failure keeps the original text
            line = _error_line(exc)
            where = f" (line {line})" if line else ""
            raise TemplateError(f"{type(exc).__name__}: {exc}{where}") from None


def _error_line(exc: BaseException) -> int | None:
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


__all__ = [
    "MAX_INCLUDE_COUNT",
    "MAX_INCLUDE_DEPTH",
    "MAX_INT_BITS",
    "MAX_ITERATIONS",
    "MAX_RANGE",
    "MAX_SECONDS",
    "MAX_TEXT",
    "TEMPLATE_MARKER_RE",
    "JsonDict",
    "JsonList",
    "Sentinel",
    "TemplateError",
    "TemplateLimitError",
    "TemplateRenderer",
    "file_arguments",
    "is_template",
    "referenced_names",
    "rename_in_template",
    "rewrite_macros",
    "undeclared_names",
    "uses_include",
    "wrap_json",
]
