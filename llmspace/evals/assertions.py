"""Assertions of dataset evaluations (`llmspace eval`): parsing and checking one output (the
pass/fail checks of a cell, not the run verdicts a user gives two runs, `core/run_verdicts.py`).

An assertion is `{"type", "value"?, "weight"?, "threshold"?}` as in promptfoo; `not-<type>`
inverts it. `parse_assertion(raw, where)` validates one (unknown types, bad values and
template syntax are refused before anything runs); `check(assertion, observation)` checks
one cell's `Observation` and returns a `Check`. `llm-rubric` needs a model judge, so it is
parsed here but checked by `llmspace/evals/judge.py` (`check` refuses it).

Types: `equals`, `contains`, `icontains`, `starts-with`, `regex` (a value left out means the
case's `expected`); `contains-any`, `contains-all` (a list, or a comma-separated text);
`is-json` (optionally a JSON Schema as value); `json-schema` (the output, parsed as JSON,
validates against the value); `tool-called` (a tool name, or `{"name", "arguments"}` where
the arguments are a subset of the call's); `no-tool-called` (none, or none of that name);
`max-latency` (ms), `max-cost` (USD), `max-tokens` (output tokens); `template` (a Jinja
expression without braces, such as `output | length < 200`, over `output`, `expected` and
`vars`, run in the bounded sandbox of `core/templating/sandbox.py`); `llm-rubric`;
`javascript` and `python` (code, parsed here, run confined by `evals/code_assertions.py`);
promptfoo's further local types, `evals/assertion_types.py`; `similar` (parsed here, checked
with an embedding model by `evals/embeddings.py`); `select-best` and `max-score` (parsed here,
checked across all outputs of a case by `evals/compare_outputs.py`).
A JSON output may be wrapped in one Markdown code fence, and is read only up to the app's
JSON depth (`llmspace/jsoncheck.py`); deeper JSON fails the check with that reason. Regexes
(`regex` values and JSON Schema patterns) run time-limited (`evals/timed_regex.py`): one that
runs past the limit fails its check with that reason, whichever way the assertion points.

`case_score(checks)` is the weighted mean of the checks' scores (1 pass, 0 fail) and
`case_passes(checks, threshold)` applies a case's threshold (None: every check passes).
Pure: no I/O, no network.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserFacingError
from ..jsoncheck import DEPTH_REASON, MAX_JSON_DEPTH
from . import assertion_types, conversation_assertions, model_graded
from .timed_regex import RegexError, RegexTimeout, compile_error, schema_patterns, search

TYPES = ("equals", "contains", "icontains", "contains-any", "contains-all", "starts-with", "regex", "is-json",
         "json-schema", "tool-called", "no-tool-called", "max-latency", "max-cost", "max-tokens", "template",
         "llm-rubric", "javascript", "python", "similar", *assertion_types.TYPES, *model_graded.KINDS, "select-best", "max-score")
JUDGED = "llm-rubric"  # judged by the evaluation's judge model (llmspace/evals/judge.py), as is every model-graded type
COMPARE = ("select-best", "max-score")  # over all outputs of a case, once its cells are done: llmspace/evals/compare_outputs.py
CODE = ("javascript", "python")  # run in a confined plugin host: llmspace/evals/code_assertions.py
SIMILAR = "similar"  # cosine of embeddings: llmspace/evals/embeddings.py
_USES_EXPECTED = ("equals", "contains", "icontains", "starts-with", "regex")
_NEEDS_VALUE = ("contains-any", "contains-all", "json-schema", "tool-called", "max-latency", "max-cost", "max-tokens",
                "template", "llm-rubric", "javascript", "python", "similar", "select-best", *assertion_types.NEEDS_VALUE)
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


@dataclass(frozen=True)
class Assertion:
    type: str  # without the `not-` prefix
    value: Any = None
    weight: float = 1.0
    threshold: float | None = None
    negate: bool = False
    grader: str | None = None  # a promptfoo model-graded type (factuality, g-eval, …) judged as llm-rubric is
    transforms: tuple[str, ...] = ()  # promptfoo transforms of the output, in turn (evals/code_assertions.py runs them)
    judge: str | None = None  # the "provider/model" that grades this assertion instead of the evaluation's judge
    rubric_prompt: tuple[tuple[str, str], ...] | None = None  # promptfoo's rubricPrompt: (role, template) messages
    context_transform: str | None = None  # promptfoo's contextTransform: code that extracts a context-* type's context
    embedder: str | None = None  # a similar assertion's own "provider/model" embedder (promptfoo's provider), else the evaluation's

    @property
    def label(self) -> str:
        """The assertion as a person wrote it, short: `not-contains "x"`."""
        name = ("not-" if self.negate else "") + (self.grader or self.type)
        if self.value is None:
            return name
        text = self.value if isinstance(self.value, str) else json.dumps(self.value, ensure_ascii=False, sort_keys=True)
        return f"{name} {_short(text, 60)!r}" if isinstance(self.value, str) else f"{name} {_short(text, 60)}"

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": ("not-" if self.negate else "") + (self.grader or self.type)}
        if self.value is not None:
            data["value"] = self.value
        if self.weight != 1.0:
            data["weight"] = self.weight
        if self.threshold is not None:
            data["threshold"] = self.threshold
        return data


@dataclass(frozen=True)
class Observation:
    """What a cell produced, and the case it ran for."""

    output: str
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()  # (name, arguments)
    latency_ms: float | None = None
    cost: float = 0.0
    output_tokens: int | None = None
    expected: str | None = None
    vars: dict[str, Any] = field(default_factory=dict)
    prompt: str = ""  # the rendered task the model was given
    finish_reason: str | None = None  # stop | length | tool_calls | content_filter | the provider's own
    tools: tuple[dict[str, Any], ...] = ()  # the tools the request offered ({name, description, parameters})
    value: Any = None  # the output as a transform left it when that is not text (`output` holds it as JSON)


@dataclass(frozen=True)
class Check:
    assertion: str  # the label
    passed: bool
    weight: float = 1.0
    reason: str = ""
    score: float | None = None  # judges: the mean criterion score (1–5)

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"assertion": self.assertion, "pass": self.passed, "weight": self.weight}
        if self.reason:
            data["reason"] = self.reason
        if self.score is not None:
            data["score"] = self.score
        return data

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Check:
        return cls(str(data.get("assertion", "")), bool(data.get("pass")), float(data.get("weight", 1.0)),
                   str(data.get("reason", "")), data.get("score"))


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _number(value: Any, where: str, kind: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise UserFacingError(f"{where}: {kind} needs a number as value, not {value!r}.")
    try:
        number = float(value)
    except ValueError:
        raise UserFacingError(f"{where}: {kind} needs a number as value, not {value!r}.") from None
    if not math.isfinite(number) or number < 0:
        raise UserFacingError(f"{where}: {kind} needs a non-negative number as value, not {value!r}.")
    return number


def parse_assertion(raw: Any, where: str) -> Assertion:
    """One assertion from a file or dataset row; `where` names it in errors ("cases.csv row 3")."""
    if isinstance(raw, str):
        raw = {"type": raw}
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        raise UserFacingError(f"{where}: an assertion must be an object with a \"type\", not {raw!r}.",
                              hint='Example: {"type": "contains", "value": "42"}')
    unknown_keys = sorted(set(raw) - {"type", "value", "weight", "threshold", "metric", "provider"})
    if unknown_keys:
        raise UserFacingError(f"{where}: unknown key {unknown_keys[0]!r} in assertion {raw['type']!r}.",
                              hint="An assertion has type, value, weight and threshold.")
    name = raw["type"].strip()
    negate = name.startswith("not-")
    kind = name[4:] if negate else name
    if kind not in TYPES and kind not in conversation_assertions.TYPES:
        raise UserFacingError(f"{where}: unknown assertion type {name!r}.", hint="Known types: " + ", ".join(TYPES) + " (and not-<type>).")
    if negate and (kind == JUDGED or kind in model_graded.KINDS or kind in COMPARE):
        raise UserFacingError(f"{where}: {kind} has no not- form.", hint="Write the criteria the other way round.")
    value = raw.get("value")
    if value is None and kind in _NEEDS_VALUE:
        raise UserFacingError(f"{where}: assertion {name!r} needs a value.")
    weight = raw.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight < 0:
        raise UserFacingError(f"{where}: the weight of {name!r} must be a non-negative number, not {weight!r}.")
    threshold = raw.get("threshold")
    if threshold is not None:
        threshold = _number(threshold, where, f"the threshold of {name!r}")
    if kind in ("max-latency", "max-cost", "max-tokens"):
        value = _number(value, where, name)
    elif kind in ("contains-any", "contains-all"):
        value = _string_list(value, where, name)
    elif kind == "regex" and value is not None:
        problem = compile_error(str(value))
        if problem is not None:
            raise UserFacingError(f"{where}: the regex {value!r} does not compile ({problem}).")
    elif kind in ("json-schema", "is-json") and value is not None:
        _check_schema(value, where, name)
    elif conversation_assertions.claims(kind, value):  # turns, goal-met, no-leak, tool-called {times, before}
        value = conversation_assertions.parse_value(kind, value, negate, where)
    elif kind == "tool-called":
        value = _tool_value(value, where)
    elif kind == "no-tool-called" and value is not None and not isinstance(value, str):
        raise UserFacingError(f"{where}: no-tool-called takes a tool name or no value.")
    elif kind == "template":
        _template_expression(str(value), where)
    elif kind in assertion_types.TYPES:
        value = assertion_types.parse_value(kind, value, where)
    elif kind == SIMILAR:
        value = _similar_value(value, where, threshold)
    elif kind in CODE and not (isinstance(value, str) and value.strip()):
        raise UserFacingError(f"{where}: a {kind} assertion needs its code, or file://PATH, as value.")
    elif kind in (JUDGED, "select-best") and not (isinstance(value, str) and value.strip()):
        raise UserFacingError(f"{where}: {kind} needs " + ("a rubric name or " if kind == JUDGED else "") + "the criteria as text.")
    elif kind == "max-score":
        value = assertion_types.max_score_value(value, where)
    elif kind in model_graded.KINDS:
        return Assertion(JUDGED, _graded_value(kind, value, where), float(weight), threshold, False, grader=kind)
    return Assertion(kind, value, float(weight), threshold, negate)


def _graded_value(kind: str, value: Any, where: str) -> Any:
    if kind == "g-eval" and isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return list(value)
    if isinstance(value, str) and value.strip():
        return value
    if value is None and kind in ("factuality", "model-graded-factuality", "context-recall", "context-faithfulness",
                                  "context-relevance", "answer-relevance", "conversation-relevance"):
        return None  # the case's expected is the reference (the relevance types take no value)
    what = "the reference answer" if "factuality" in kind else "the criteria"
    raise UserFacingError(f"{where}: {kind} needs {what} as value, not {value!r}.")


def _similar_value(value: Any, where: str, threshold: float | None) -> str | list[str]:
    if threshold is not None and threshold > 1:
        raise UserFacingError(f"{where}: the threshold of similar is a cosine similarity up to 1, not {threshold:g}.")
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return list(value)
    raise UserFacingError(f"{where}: similar needs a text, or a list of texts, to compare the output with, not {value!r}.")


def _string_list(value: Any, where: str, name: str) -> list[str]:
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        items = [str(v) for v in value]
    else:
        items = []
    if not items:
        raise UserFacingError(f"{where}: {name} needs a list of texts as value, not {value!r}.")
    return items


def _tool_value(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, str) and value.strip():
        return {"name": value.strip()}
    if isinstance(value, dict) and isinstance(value.get("name"), str) and \
            isinstance(value.get("arguments", {}), dict) and set(value) <= {"name", "arguments"}:
        return {"name": value["name"], "arguments": dict(value.get("arguments") or {})}
    raise UserFacingError(f"{where}: tool-called takes a tool name or {{\"name\", \"arguments\"}}, not {value!r}.")


def _check_schema(value: Any, where: str, name: str) -> None:
    import jsonschema

    if not isinstance(value, dict):
        raise UserFacingError(f"{where}: {name} needs a JSON Schema object as value.")
    try:
        jsonschema.validators.validator_for(value).check_schema(value)
    except jsonschema.SchemaError as exc:
        raise UserFacingError(f"{where}: the schema of {name} is not a valid JSON Schema ({exc.message}).") from None
    except RecursionError:
        raise UserFacingError(f"{where}: the schema of {name} is {DEPTH_REASON}.") from None
    for pattern in schema_patterns(value):
        problem = compile_error(pattern)
        if problem is not None:
            raise UserFacingError(f"{where}: the pattern {pattern!r} in the schema of {name} does not compile ({problem}).")


def _template_expression(expr: str, where: str) -> Any:
    """The compiled `{% if EXPR %}` template (syntax errors refused before the run)."""
    from jinja2 import TemplateSyntaxError

    from ..core.templating.sandbox import harden, new_env

    env = new_env()
    try:
        ast = env.parse("{% if " + expr + " %}1{% else %}0{% endif %}")
    except TemplateSyntaxError as exc:
        raise UserFacingError(f"{where}: the template expression {expr!r} is not valid ({exc.message}).",
                              hint="Write a Jinja expression without braces, such as: output | length < 200") from None
    return env, env.from_string(harden(env, ast))


# -- checking ------------------------------------------------------------------------------


class JsonTooDeep(ValueError):
    """JSON nested deeper than the app reads (`MAX_JSON_DEPTH`)."""


def _deeper_than(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def parse_json_output(text: str) -> Any:
    """The output as JSON (one surrounding Markdown code fence allowed); raises ValueError
    (`JsonTooDeep` for JSON nested more than `MAX_JSON_DEPTH` levels)."""
    m = _FENCE.match(text)
    try:
        value = json.loads(m.group(1) if m else text)
    except RecursionError:
        raise JsonTooDeep(DEPTH_REASON) from None
    if isinstance(value, (dict, list)) and _deeper_than(value, MAX_JSON_DEPTH):
        raise JsonTooDeep(DEPTH_REASON)
    return value


def check(a: Assertion, obs: Observation) -> Check:
    """Check one assertion (not llm-rubric) against one observation; a code assertion, which
    only a confined host runs (`evals/code_assertions.py`), fails here saying so."""
    if a.type == JUDGED or a.type in COMPARE:
        raise ValueError(f"{a.type} is checked by a judge (llmspace/evals/judge.py) or across a case's outputs (compare_outputs.py)")
    if a.type == SIMILAR:
        return Check(a.label, False, a.weight, "similar needs an embedding model: give --embedder PROVIDER/MODEL or embedder: in the file")
    if a.type in CODE:
        return Check(a.label, False, a.weight, f"{a.type} assertions run on this machine's executor only (not on Ray workers)")
    try:
        passed, reason = _check(a, obs)
    except RegexTimeout as exc:  # neither a match nor a miss: failed, whichever way the assertion points
        return Check(a.label, False, a.weight, str(exc))
    if a.negate:
        passed = not passed
        reason = "" if passed else f"expected not: {reason or a.label}"
    return Check(a.label, passed, a.weight, "" if passed else (reason or "did not hold"))


def _expected_value(a: Assertion, obs: Observation) -> str | None:
    if a.value is not None:
        return a.value if isinstance(a.value, str) else json.dumps(a.value, ensure_ascii=False)
    return obs.expected


def needs_expected(a: Assertion) -> bool:
    """True for an assertion without a value that compares the output with the case's `expected`."""
    return a.type in _USES_EXPECTED and a.value is None


def _check(a: Assertion, obs: Observation) -> tuple[bool, str]:
    out = obs.output
    kind = a.type
    if kind in _USES_EXPECTED:
        want = _expected_value(a, obs)
        if want is None:
            return False, f"{kind} has no value and the case has no expected"
        if kind == "equals":
            ok = out.strip() == want.strip() or _json_equal(out, a.value)
            return ok, f"output {_short(out, 80)!r} is not {_short(want, 80)!r}"
        if kind == "contains":
            return want in out, f"output does not contain {_short(want, 80)!r}"
        if kind == "icontains":
            return want.casefold() in out.casefold(), f"output does not contain {_short(want, 80)!r} (any case)"
        if kind == "starts-with":
            return out.startswith(want), f"output does not start with {_short(want, 80)!r}"
        try:
            return search(want, out), f"output does not match /{_short(want, 80)}/"
        except RegexError as exc:  # the case's expected as a regex (a value was compiled when parsed)
            return False, f"the regex /{_short(want, 80)}/ does not compile ({exc})"
    if kind == "contains-any":
        return any(v in out for v in a.value), "output contains none of " + ", ".join(map(repr, a.value))
    if kind == "contains-all":
        missing = [v for v in a.value if v not in out]
        return not missing, "output lacks " + ", ".join(map(repr, missing))
    if kind in ("is-json", "json-schema"):
        try:
            data = parse_json_output(out)
        except JsonTooDeep as exc:
            return False, f"output is not JSON the checks can read ({exc})"
        except ValueError as exc:
            return False, f"output is not JSON ({exc})"
        if a.value is None:
            return True, ""
        return _validate(data, a.value)
    if kind == "tool-called":
        name, args = a.value["name"], a.value.get("arguments") or {}
        hit = any(n == name and _subset(args, got) for n, got in obs.tool_calls)
        called = ", ".join(n for n, _ in obs.tool_calls) or "none"
        return hit, f"no call of {name}" + (f" with {json.dumps(args, ensure_ascii=False)}" if args else "") + f" (called: {called})"
    if kind == "no-tool-called":
        names = [n for n, _ in obs.tool_calls if a.value is None or n == a.value]
        return not names, "called " + ", ".join(names)
    if kind == "max-latency":
        if obs.latency_ms is None:
            return False, "no latency measured"
        return obs.latency_ms <= a.value, f"latency {obs.latency_ms:.0f} ms > {a.value:g} ms"
    if kind == "max-cost":
        return obs.cost <= a.value, f"cost ${obs.cost:.6f} > ${a.value:g}"
    if kind == "max-tokens":
        if obs.output_tokens is None:
            return False, "the provider reported no token count"
        return obs.output_tokens <= a.value, f"{obs.output_tokens} output tokens > {a.value:g}"
    if kind == "template":
        return _run_template(str(a.value), obs)
    if kind in assertion_types.TYPES:
        return assertion_types.check_value(kind, a.value, out, tool_calls=obs.tool_calls, tools=obs.tools,
                                           finish_reason=obs.finish_reason, threshold=a.threshold)
    raise ValueError(f"unhandled assertion type {kind}")


def _json_equal(out: str, value: Any) -> bool:
    if value is None or isinstance(value, str):
        return False
    try:
        return bool(parse_json_output(out) == value)
    except ValueError:
        return False


def _subset(want: Any, got: Any) -> bool:
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and _subset(v, got[k]) for k, v in want.items())
    return bool(want == got)


def _validate(data: Any, schema: dict[str, Any]) -> tuple[bool, str]:
    from .timed_regex import validator_for

    try:
        error = next(iter(validator_for(schema).iter_errors(data)), None)
    except RecursionError:
        return False, f"schema: the output is too deeply nested to validate ({DEPTH_REASON})"
    if error is None:
        return True, ""
    where = "/".join(str(p) for p in error.absolute_path)
    return False, f"schema: {error.message}" + (f" at /{where}" if where else "")


def _run_template(expr: str, obs: Observation) -> tuple[bool, str]:
    from ..core.templating.jinja_values import wrap_json

    env, template = _template_expression(expr, "template")
    env.budget.reset()
    context = {"output": obs.output, "expected": obs.expected, "vars": wrap_json(dict(obs.vars))}
    try:
        result = template.render(context)
    except Exception as exc:  # the sandbox refused or the expression failed: a failed check, with the reason
        return False, f"template error: {type(exc).__name__}: {exc}"
    return result == "1", f"{expr} is false"


def case_score(checks: list[Check]) -> float:
    """The weighted share of passed checks (1.0 when there are none, or all weights are 0)."""
    total = sum(c.weight for c in checks)
    if total <= 0:
        return 1.0 if all(c.passed for c in checks) else 0.0
    return sum(c.weight for c in checks if c.passed) / total


def case_passes(checks: list[Check], threshold: float | None) -> bool:
    if threshold is None:
        return all(c.passed for c in checks)
    return case_score(checks) >= threshold - 1e-12
