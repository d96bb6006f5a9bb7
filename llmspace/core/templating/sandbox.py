"""The Jinja2 sandbox that template texts run in, and the work limits of every render (the
thread's templates and the `template` assertions of evaluations): what keeps a hostile
template — e.g. a web page pasted into a `function` tool result — from hanging or exhausting
the app.

- `new_env(time_limit)`: a `SandboxedEnvironment` whose refusals raise (`_`-attributes,
  recursive loops, no `lipsum`) and whose every render is bounded by a `Budget`: wall time
  (`MAX_SECONDS`), loop iterations (`MAX_ITERATIONS`), text built and output (`MAX_TEXT`,
  `MAX_WORK`), integer size (`MAX_INT_BITS`: `**` and `*` refused before computing), list
  growth (`*`, `+`, `append`/`extend`/…), and the size of any value that is printed, compared,
  hashed or passed to a filter or method (`weigh`: lists that share parts, e.g. built by
  doubling, would otherwise stringify or compare in exponential time inside one C call, where
  no time check can interrupt them). A passed bound raises `LimitExceeded`.
- `harden(env, ast)`: rewrites a parsed template so loops, `~`, comparisons and dict keys go
  through those checks.

How values print inside a template (unknown names, JSON objects, true/false/null) is in
`core/templating/jinja_values.py`. No I/O here.
"""

from __future__ import annotations

import re
import time
from collections.abc import ItemsView, KeysView, ValuesView
from functools import update_wrapper
from typing import Any

from jinja2 import nodes, pass_context
from jinja2.exceptions import SecurityError
from jinja2.filters import do_format
from jinja2.sandbox import MAX_RANGE as MAX_RANGE  # the sandbox's `range()` limit (re-exported)
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import Namespace
from jinja2.visitor import NodeTransformer

from .jinja_values import Sentinel, printable

# Work limits per rendered text (tool results may take the template path, so a hostile
# page must not be able to hang or exhaust the app): loop iterations, characters produced by
# `*`, `+`, `~`, filters and output, and numeric width-like arguments.
MAX_ITERATIONS = 100_000
MAX_WORK = 50_000_000
MAX_TEXT = 10_000_000  # characters of one built text and of a render's whole output
MAX_SECONDS = 3.0  # wall time of one render
MAX_INT_BITS = 10_000  # about 3,000 decimal digits
MAX_DEPTH = 200  # nesting of a value that is printed, compared or hashed
_MAX_ARG = 1_000_000
_MAX_SEQUENCE = 1_000_000
_BIG_WIDTH = re.compile(r"\d{7,}")


class LimitExceeded(SecurityError):
    """Raised inside a render when a bound is passed; `reason` completes "the template …"."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the template {reason}")
        self.reason = reason


_WALKED = (list, tuple, dict, set, frozenset, Namespace, KeysView, ValuesView, ItemsView)
# Filters that only look at the top level of their input (no printing, comparing or hashing).
_SHALLOW_FILTERS = frozenset({"length", "count", "first", "last", "list", "batch", "slice", "random",
                              "reverse", "default", "d", "attr", "items", "__loop", "__include", "__weigh"})
# Methods of lists/dicts that neither print, compare nor hash their target's items.
_SHALLOW_METHODS = frozenset({"append", "extend", "insert", "update", "add", "setdefault",
                              "get", "pop", "keys", "values", "items", "copy", "clear"})


class Budget:
    """Counts the work one render does; refuses when a limit is passed."""

    def __init__(self, time_limit: float = MAX_SECONDS) -> None:
        self.time_limit = time_limit
        self.reset()

    def reset(self) -> None:
        self.iterations = 0
        self.work = 0
        self.output = 0
        self.deadline = time.monotonic() + self.time_limit

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise LimitExceeded(f"takes too long (over {self.time_limit:g} seconds)")

    def step(self) -> None:
        self.iterations += 1
        if self.iterations > MAX_ITERATIONS:
            raise LimitExceeded(f"loops more than {MAX_ITERATIONS:,} times")
        self.tick()

    def check(self, size: int) -> None:
        """Refuse before building something of `size` characters."""
        self.tick()
        if size > MAX_TEXT or self.work + size > MAX_WORK:
            raise LimitExceeded("would produce a text that is too long")

    def charge(self, size: int) -> None:
        if size > MAX_TEXT:
            raise LimitExceeded("produces a text that is too long")
        self.work += size
        if self.work > MAX_WORK:
            raise LimitExceeded("does too much work")
        self.tick()

    def weigh(self, value: Any) -> None:
        """Refuse `value` when printing, comparing or hashing it would touch more than
        `MAX_TEXT` characters or `MAX_DEPTH` levels (shared parts count each time they occur).

        The walk itself is bounded: it stops at the limit and checks the clock as it goes."""
        if not isinstance(value, _WALKED):
            return
        too_large = f"uses a value that is too large to print or compare (over {MAX_TEXT:,} characters)"
        done: dict[int, int] = {}  # weight of each container already walked (shared parts: once)
        path: set[int] = set()
        steps = 0

        def walk(v: Any, depth: int) -> int:
            nonlocal steps
            if isinstance(v, str):
                return len(v) + 2
            if isinstance(v, int):
                return v.bit_length() // 3 + 1
            if not isinstance(v, _WALKED):
                return 8
            key = id(v)
            if key in done:
                return done[key]
            if key in path:
                return 5  # a cycle prints as [...]
            if depth >= MAX_DEPTH:
                raise LimitExceeded(f"nests values more than {MAX_DEPTH} levels deep")
            steps += 1
            if not steps & 0x3FF:
                self.tick()
            path.add(key)
            items: Any = object.__getattribute__(v, "_Namespace__attrs") if isinstance(v, Namespace) else v
            weight = 2
            for item in items.items() if isinstance(items, dict) else items:
                weight += walk(item, depth + 1) + 2
                if weight > MAX_TEXT:
                    raise LimitExceeded(too_large)
            path.discard(key)
            done[key] = weight
            return weight

        walk(value, 0)

    def weigh_all(self, values: Any) -> None:
        for v in values:
            self.weigh(v)

    def emit(self, size: int) -> None:
        """Count `size` characters of the render's output."""
        self.output += size
        if self.output > MAX_TEXT:
            raise LimitExceeded(f"produces an output that is too long (over {MAX_TEXT:,} characters)")
        self.charge(size)


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, list, tuple)) else 0


def _check_args(args: Any) -> None:
    for a in args:
        if isinstance(a, int) and not isinstance(a, bool) and abs(a) > _MAX_ARG:
            raise LimitExceeded("passes a number argument that is too large")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_NUMBER_TOO_LARGE = f"computes a number that is too large (over {MAX_INT_BITS:,} bits)"


def _check_int_op(operator: str, left: Any, right: Any) -> None:
    """Refuse `**` / `*` on integers whose result would pass `MAX_INT_BITS`, before computing."""
    if not (_is_int(left) and _is_int(right)):
        return
    if operator == "**" and right > 0 and abs(left) > 1 and (abs(left).bit_length() - 1) * right >= MAX_INT_BITS:
        raise LimitExceeded(_NUMBER_TOO_LARGE)
    if operator == "*" and abs(left).bit_length() + abs(right).bit_length() > MAX_INT_BITS + 1:
        raise LimitExceeded(_NUMBER_TOO_LARGE)


# Methods that grow their list/dict/set in place (the sandbox allows them; they are bounded).
_GROWING = frozenset({"append", "extend", "insert", "update", "add", "setdefault", "__iadd__"})


class _Sandbox(SandboxedEnvironment):
    """The sandbox with JSON-style lookups, refusals that raise instead of printing "", and
    work limits (see `Budget`)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, time_limit: float = MAX_SECONDS, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.budget = Budget(time_limit)
        self.globals.pop("lipsum", None)  # generates text in bulk; useless in prompts
        self.filters = {name: _guard_filter(self, f, name) for name, f in self.filters.items()}
        self.tests = {name: _guard_test(self, f) for name, f in self.tests.items()}

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, dict) and attribute in obj:
            return obj[attribute]
        if attribute.startswith("_"):
            raise SecurityError(f"access to attribute {attribute!r} is not allowed")
        if isinstance(obj, Sentinel):
            return obj.child(attribute, True)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        self.budget.weigh(argument)  # a tuple key is hashed
        if isinstance(obj, Sentinel) and isinstance(argument, (str, int)) and not str(argument).startswith("_"):
            return obj.child(argument, False)
        return super().getitem(obj, argument)

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        raise SecurityError(f"access to attribute {attribute!r} of {type(obj).__name__!r} object is not allowed")

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        self.budget.tick()
        _check_int_op(operator, left, right)
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > _MAX_SEQUENCE:
                    raise LimitExceeded("repeats a text or list to a length that is too long")
        if operator == "+" and isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
            if len(left) + len(right) > _MAX_SEQUENCE:
                raise LimitExceeded("builds a list that is too long")
        if operator == "+" and isinstance(left, str) and isinstance(right, str):
            self.budget.check(len(left) + len(right))
        if operator == "%" and isinstance(left, str):
            if _BIG_WIDTH.search(left):
                raise LimitExceeded("uses a format width that is too large")
            self.budget.weigh(right)
        result = super().call_binop(context, operator, left, right)
        if _is_int(result) and result.bit_length() > MAX_INT_BITS:
            raise LimitExceeded(_NUMBER_TOO_LARGE)
        self.budget.charge(_size(result))
        return result

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _check_args(args)
        _check_args(kwargs.values())
        __self.budget.tick()
        __self.budget.weigh_all(args)
        __self.budget.weigh_all(kwargs.values())
        owner = getattr(getattr(__obj, "__wrapped__", None), "__self__", None)
        if isinstance(owner, str) and _BIG_WIDTH.search(owner):
            raise LimitExceeded("uses a format width that is too large")
        target = getattr(__obj, "__self__", None)
        name = getattr(__obj, "__name__", "")
        if isinstance(target, str) and name in ("replace", "join"):
            if name == "join" and args:
                __self.budget.check(len(target) * len(args[0]) if hasattr(args[0], "__len__") else 0)
            elif name == "replace":
                __self.budget.check(_estimate("replace", target, args))
        if name not in _SHALLOW_METHODS:
            __self.budget.weigh(target)
        grows: list[Any] | dict[Any, Any] | set[Any] | None = (
            target if isinstance(target, (list, dict, set)) and name in _GROWING else None)
        if grows is not None:
            added = sum(len(a) for a in args if isinstance(a, (str, list, tuple, dict, set)))
            if len(grows) + added > _MAX_SEQUENCE:
                raise LimitExceeded("builds a list that is too long")
        result = super().call(__context, __obj, *args, **kwargs)
        if grows is not None and len(grows) > _MAX_SEQUENCE:
            raise LimitExceeded("builds a list that is too long")
        if _is_int(result) and result.bit_length() > MAX_INT_BITS:
            raise LimitExceeded(_NUMBER_TOO_LARGE)
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

    weigh_input = name not in _SHALLOW_FILTERS

    def guarded(*args: Any, **kwargs: Any) -> Any:
        _check_args(args[skip:])
        _check_args(kwargs.values())
        value = args[skip - 1] if len(args) >= skip else None
        if weigh_input:
            env.budget.weigh(value)
        env.budget.weigh_all(args[skip:])
        env.budget.weigh_all(kwargs.values())
        if name == "join" and value is not None and not hasattr(value, "__len__"):
            value = list(value)  # a generator: materialise so its size is known
            args = (*args[: skip - 1], value, *args[skip:])
        if f is do_format and isinstance(value, str) and _BIG_WIDTH.search(value):
            raise LimitExceeded("uses a format width that is too large")
        env.budget.check(_estimate(name, value, args[skip:]))
        result = f(*args, **kwargs)
        if _is_int(result) and result.bit_length() > MAX_INT_BITS:
            raise LimitExceeded(_NUMBER_TOO_LARGE)
        env.budget.charge(_size(result))
        return result

    return update_wrapper(guarded, f)


def _guard_test(env: _Sandbox, f: Any) -> Any:
    """Wrap a test (`is eq`, `is in`, …): its arguments may be compared or hashed."""

    def guarded(*args: Any, **kwargs: Any) -> Any:
        env.budget.weigh_all(args)
        env.budget.weigh_all(kwargs.values())
        return f(*args, **kwargs)

    return update_wrapper(guarded, f)


def _weighed(node: nodes.Expr) -> nodes.Expr:
    return nodes.Filter(node, "__weigh", [], [], None, None, lineno=node.lineno)


class _Harden(NodeTransformer):
    """Rewrites a parsed template so loops and `~` joins are counted and the operands of
    comparisons and dict keys are weighed (see `Budget`)."""

    def visit_Compare(self, node: nodes.Compare) -> nodes.Node:
        self.generic_visit(node)
        node.expr = _weighed(node.expr)
        for operand in node.ops:
            operand.expr = _weighed(operand.expr)
        return node

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:
        self.generic_visit(node)
        for pair in node.items:
            pair.key = _weighed(pair.key)
        return node

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        if node.recursive:
            raise SecurityError("recursive loops are not allowed")
        node.iter = nodes.Filter(node.iter, "__loop", [], [], None, None, lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Filter(nodes.List(node.nodes, lineno=node.lineno), "__concat", [], [], None, None, lineno=node.lineno)


def harden(env: _Sandbox, ast: nodes.Template) -> nodes.Template:
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
        parts = list(parts)
        budget.weigh_all(parts)
        pieces = [str(p) for p in parts]
        budget.check(sum(len(p) for p in pieces))
        text = "".join(pieces)
        budget.charge(len(text))
        return text

    def weigh(value: Any) -> Any:
        budget.weigh(value)
        return value

    def finalize(value: Any) -> Any:
        budget.weigh(value)
        if isinstance(value, str):
            budget.charge(len(value))
        return printable(value)

    env.filters["__loop"] = loop
    env.filters["__concat"] = concat
    env.filters["__weigh"] = weigh
    env.finalize = finalize


def new_env(time_limit: float = MAX_SECONDS) -> _Sandbox:
    env = _Sandbox(time_limit, autoescape=False, keep_trailing_newline=True, finalize=printable, optimized=False)
    _install_counters(env)
    return env

