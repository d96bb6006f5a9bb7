"""The template path of prompt rendering (reference §5.3): Jinja2 in its sandbox.

A text takes the template path when it contains `{%`, `{{ @…`, or a `{{…}}` holding one of
`. [ | (` (`is_template`). `TemplateRenderer.render(text)` then:
- rewrites `{{@include(expr)}}` into a filter call; an include reads the file through the
  injected loader and renders it recursively with the same variables (depth ≤ 10, at most
  100 includes per render; missing → ""; a file that is not a valid template is inserted
  verbatim);
- offers `exists(path)` (memoised per renderer, i.e. per render);
- gives every identifier the text uses but no variable defines a *sentinel*: a string that
  prints itself as `{{name}}` (so unknown names stay as written) and is falsy in `{% if %}`
  (a deliberate choice for reference §12.3 item 1: empty and unknown values are falsy);
- prints JSON objects and lists as pretty JSON (§12.3 item 2) and `true`/`false`/`` for
  JSON booleans and null, the way the original's engine prints them.

Templates run in `jinja2.sandbox.SandboxedEnvironment`; any `_`-prefixed attribute
(`__class__`, `__globals__`, …) raises `SecurityError` instead of rendering empty. Because
tool results (web pages…) can take the template path, each text also has work limits: at most
100,000 loop iterations, bounded text growth through `*`, `+`, `~`, `%`, filters and method
calls, bounded output, no recursive loops, no `lipsum`. Any failure raises `TemplateError`;
the caller keeps the original text and reports a warning.

Callers: `core/render.py`, `core/variables.py` (reference scanning, renames). No I/O here.
"""

from __future__ import annotations

import json
import re
from functools import update_wrapper
from typing import Any, Callable, Mapping

from jinja2 import TemplateSyntaxError, meta, nodes, pass_context
from jinja2.exceptions import SecurityError
from jinja2.filters import do_format
from jinja2.sandbox import SandboxedEnvironment
from jinja2.visitor import NodeTransformer

MAX_INCLUDE_DEPTH = 10
MAX_INCLUDE_COUNT = 100
# Work limits per rendered text (tool results may take the template path, so a hostile
# page must not be able to hang or exhaust the app): loop iterations, characters produced by
# `*`, `+`, `~`, filters and output, and numeric width-like arguments.
MAX_ITERATIONS = 100_000
MAX_WORK = 50_000_000
MAX_TEXT = 10_000_000
_MAX_ARG = 1_000_000
_MAX_SEQUENCE = 1_000_000
_BIG_WIDTH = re.compile(r"\d{7,}")

# (The first `[^{}.[|(]*` cannot overlap the marker class, so matching stays linear.)
TEMPLATE_MARKER_RE = re.compile(r"\{%|\{\{\s*@|\{\{[^{}.\[|(]*[.\[|(][^{}]*\}\}")
_INCLUDE_RE = re.compile(r"\{\{\s*@include\(([\s\S]*?)\)\s*\}\}")
_EXPRESSION_RE = re.compile(r"\{\{([\s\S]*?)\}\}|\{%([\s\S]*?)%\}")
_STRING_RE = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")
_IDENT_RE = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z0-9_]*)")

# Names that never get a sentinel or count as variable references.
RESERVED = frozenset(
    "if elif else endif for endfor in and or not is true false none null True False None "
    "set endset macro endmacro call endcall filter endfilter block endblock extends include "
    "import from as do with without raw endraw loop super range cycler joiner dict "
    "namespace exists caller varargs kwargs self recursive".split()
)


class TemplateError(Exception):
    """A template that cannot be parsed or rendered (message says why, with the line)."""


class Sentinel(str):
    """Stands in for an unknown name: prints `{{name}}`, is falsy; `.attr` / `[key]` on it give
    a sentinel for the longer expression, so unknown dotted names also stay as written."""

    def __bool__(self) -> bool:
        return False

    def child(self, key: Any, attribute: bool) -> "Sentinel":
        inner = self[2:-2]
        if attribute:
            return Sentinel(f"{{{{{inner}.{key}}}}}")
        shown = json.dumps(key, ensure_ascii=False) if isinstance(key, str) else repr(key)
        return Sentinel(f"{{{{{inner}[{shown}]}}}}")


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


class JsonDict(dict):  # type: ignore[type-arg]
    """A JSON object in a template: prints as pretty JSON; `.key` reads the key first."""

    def __str__(self) -> str:
        return _pretty(self)


class JsonList(list):  # type: ignore[type-arg]
    """A JSON array in a template: prints as pretty JSON."""

    def __str__(self) -> str:
        return _pretty(self)


def wrap_json(value: Any) -> Any:
    """Parsed JSON with objects/arrays wrapped so templates print them as pretty JSON."""
    if isinstance(value, dict):
        return JsonDict((k, wrap_json(v)) for k, v in value.items())
    if isinstance(value, list):
        return JsonList(wrap_json(v) for v in value)
    return value


def is_template(text: str) -> bool:
    """True when `text` takes the template path (reference §5.3 dispatch rule)."""
    return ("{%" in text or "{{" in text) and TEMPLATE_MARKER_RE.search(text) is not None


def uses_include(text: str) -> bool:
    return _INCLUDE_RE.search(text) is not None


def rewrite_macros(text: str) -> str:
    """`{{@include(expr)}}` → `{{ (expr) | __include }}`; an empty argument renders nothing."""

    def repl(m: re.Match[str]) -> str:
        expr = m.group(1).strip()
        return f"{{{{ ({expr}) | __include }}}}" if expr else ""

    return _INCLUDE_RE.sub(repl, text)


def _finalize(value: Any) -> Any:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return ""
    return value


class _Budget:
    """Counts the work one render does; refuses when a limit is passed."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.iterations = 0
        self.work = 0

    def step(self) -> None:
        self.iterations += 1
        if self.iterations > MAX_ITERATIONS:
            raise SecurityError(f"the template loops more than {MAX_ITERATIONS:,} times")

    def check(self, size: int) -> None:
        """Refuse before building something of `size` characters."""
        if size > MAX_TEXT or self.work + size > MAX_WORK:
            raise SecurityError("the template would produce a text that is too long")

    def charge(self, size: int) -> None:
        if size > MAX_TEXT:
            raise SecurityError("the template produces a text that is too long")
        self.work += size
        if self.work > MAX_WORK:
            raise SecurityError("the template does too much work")


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, list, tuple)) else 0


def _check_args(args: Any) -> None:
    for a in args:
        if isinstance(a, int) and not isinstance(a, bool) and abs(a) > _MAX_ARG:
            raise SecurityError("a number argument is too large")


class _Sandbox(SandboxedEnvironment):
    """The sandbox with JSON-style lookups, refusals that raise instead of printing "", and
    work limits (see `_Budget`)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.budget = _Budget()
        self.globals.pop("lipsum", None)  # generates text in bulk; useless in prompts
        self.filters = {name: _guard_filter(self, f, name) for name, f in self.filters.items()}

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, dict) and attribute in obj:
            return obj[attribute]
        if attribute.startswith("_"):
            raise SecurityError(f"access to attribute {attribute!r} is not allowed")
        if isinstance(obj, Sentinel):
            return obj.child(attribute, True)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, Sentinel) and isinstance(argument, (str, int)) and not str(argument).startswith("_"):
            return obj.child(argument, False)
        return super().getitem(obj, argument)

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        raise SecurityError(f"access to attribute {attribute!r} of {type(obj).__name__!r} object is not allowed")

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(right, (int, float)) and abs(right) > 256:
            raise SecurityError("the power is too large")
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > _MAX_SEQUENCE:
                    raise SecurityError("the repeated text or list is too long")
        if operator == "%" and isinstance(left, str) and _BIG_WIDTH.search(left):
            raise SecurityError("a format width is too large")
        result = super().call_binop(context, operator, left, right)
        self.budget.charge(_size(result))
        return result

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        _check_args(args)
        _check_args(kwargs.values())
        owner = getattr(getattr(__obj, "__wrapped__", None), "__self__", None)
        if isinstance(owner, str) and _BIG_WIDTH.search(owner):
            raise SecurityError("a format width is too large")
        target = getattr(__obj, "__self__", None)
        if isinstance(target, str) and getattr(__obj, "__name__", "") in ("replace", "join"):
            name = __obj.__name__
            if name == "join" and args:
                __self.budget.check(len(target) * len(args[0]) if hasattr(args[0], "__len__") else 0)
            elif name == "replace":
                __self.budget.check(_estimate("replace", target, args))
        result = super().call(__context, __obj, *args, **kwargs)
        __self.budget.charge(_size(result))
        return result


def _estimate(name: str, value: Any, args: Any) -> int:
    """Rough size of what `replace` / `join` / `indent` would build, checked before building."""
    args = list(args)
    if name == "replace" and isinstance(value, str) and len(args) >= 2 and isinstance(args[0], str):
        return len(value) + value.count(args[0]) * len(str(args[1])) if args[0] else len(value) * (len(str(args[1])) + 1)
    if name == "join" and hasattr(value, "__len__") and args and isinstance(args[0], str):
        return len(value) * len(args[0])
    if name == "indent" and isinstance(value, str) and args and isinstance(args[0], int):
        return len(value) + (value.count("\n") + 1) * args[0]
    return 0


def _guard_filter(env: _Sandbox, f: Any, name: str = "") -> Any:
    """Wrap a filter: refuse huge numeric arguments, format widths and blow-ups; charge its result."""
    skip = 2 if getattr(f, "jinja_pass_arg", None) is not None else 1

    def guarded(*args: Any, **kwargs: Any) -> Any:
        _check_args(args[skip:])
        _check_args(kwargs.values())
        value = args[skip - 1] if len(args) >= skip else None
        if name == "join" and value is not None and not hasattr(value, "__len__"):
            value = list(value)  # a generator: materialise so its size is known
            args = (*args[: skip - 1], value, *args[skip:])
        if f is do_format and isinstance(value, str) and _BIG_WIDTH.search(value):
            raise SecurityError("a format width is too large")
        env.budget.check(_estimate(name, value, args[skip:]))
        result = f(*args, **kwargs)
        env.budget.charge(_size(result))
        return result

    return update_wrapper(guarded, f)


class _Harden(NodeTransformer):
    """Rewrites a parsed template so loops and `~` joins are counted (see `_Budget`)."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        if node.recursive:
            raise SecurityError("recursive loops are not allowed")
        node.iter = nodes.Filter(node.iter, "__loop", [], [], None, None, lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Filter(nodes.List(node.nodes, lineno=node.lineno), "__concat", [], [], None, None, lineno=node.lineno)


def _harden(env: _Sandbox, ast: nodes.Template) -> nodes.Template:
    ast = _Harden().visit(ast)
    ast.set_environment(env)
    return ast


def _install_counters(env: _Sandbox) -> None:
    budget = env.budget

    @pass_context
    def loop(_context: Any, iterable: Any) -> Any:
        for item in iterable:
            budget.step()
            yield item

    @pass_context
    def concat(_context: Any, parts: Any) -> str:
        text = "".join(str(p) for p in parts)
        budget.charge(len(text))
        return text

    env.filters["__loop"] = loop
    env.filters["__concat"] = concat


def _new_env() -> _Sandbox:
    env = _Sandbox(autoescape=False, keep_trailing_newline=True, finalize=_finalize, optimized=False)
    _install_counters(env)
    return env


_SCAN_ENV = _new_env()
_SCAN_ENV.filters["__include"] = lambda v: v


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
    `file_exists(path)` says whether the path is a readable regular file."""

    def __init__(
        self,
        variables: Mapping[str, Any] | Callable[[str], tuple[bool, Any]],
        load_file: Callable[[str], str | None],
        file_exists: Callable[[str], bool],
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
        self.env = _new_env()

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
        template = self.env.from_string(_harden(self.env, ast))
        pieces: list[str] = []
        for piece in template.generate(context):
            self.env.budget.charge(len(piece))
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
    "MAX_INCLUDE_COUNT", "MAX_INCLUDE_DEPTH", "TEMPLATE_MARKER_RE", "JsonDict", "JsonList", "Sentinel",
    "TemplateError", "TemplateRenderer", "is_template", "referenced_names", "rename_in_template",
    "rewrite_macros", "undeclared_names", "uses_include", "wrap_json",
]
