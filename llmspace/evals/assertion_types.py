"""The local promptfoo assertion types beyond the first set: their values checked when read
(`parse_value`) and their checks (`check_value`), pure and without network.

- `icontains-any`, `icontains-all`: `contains-any`/`contains-all` in any case;
- `contains-json`: some JSON object or array inside the output (optionally one that
  validates against the value, a JSON Schema);
- `is-valid-openai-tools-call`, `is-valid-function-call`: the reply called tools, each one the
  request offered, with arguments that validate against that tool's parameters;
- `finish-reason`: the provider's reason the reply ended (`stop`, `length`, `tool_calls`,
  `content_filter`; Anthropic's `end_turn`, `max_tokens`, `tool_use` read as those);
- `is-sql`: the output parses as SQL statements (sqlglot, a validating parser with dialects:
  `sqlparse` accepts any text); the value may name `databaseType` and `allowedTables` /
  `allowedColumns` in node-sql-parser's `operation::table` / `operation::table::column` form
  (`null` for any table, each part a regex);
- `contains-sql`: the same for the first fenced code block of the output (else all of it);
- `word-count`: the number of whitespace-separated words, exactly the value or within
  `{min, max}`;
- `levenshtein`: the edit distance of the output and the value is at most the threshold
  (default 5); `is-valid-openai-function-call` is `is-valid-function-call`;
- `is-refusal`: the output reads as a refusal (`evals/refusal.py`: an empty reply, a refusal
  opening, an apology that declines, a refusal phrase), no value;
- `guardrails`: no content filter stopped the reply — promptfoo reads the provider's guardrail
  flags; our providers report a filter only as the finish reason `content_filter` (OpenAI's,
  and Anthropic's `refusal` read as it), so that is what fails it (`not-guardrails` passes
  only then), no value.

Types that need a service evaluations do not have (`moderation`, `classifier`, `trace-*`) are
refused with `refusal_reason`; `--skip-unsupported` runs the rest and names each skipped one
(`skipped_assertions`) in the summary and the report.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..errors import UserFacingError
from ..jsoncheck import DEPTH_REASON

TYPES = ("icontains-any", "icontains-all", "contains-json", "is-valid-openai-tools-call", "is-valid-function-call",
         "is-valid-openai-function-call", "finish-reason", "is-sql", "contains-sql", "word-count", "levenshtein",
         "is-refusal", "guardrails")
NEEDS_VALUE = ("icontains-any", "icontains-all", "finish-reason", "word-count", "levenshtein")
LEVENSHTEIN_MAX = 5  # promptfoo's default largest distance
FINISH_ALIASES = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
                  "function_call": "tool_calls", "refusal": "content_filter"}
DIALECTS = {"mysql": "mysql", "mariadb": "mysql", "postgresql": "postgres", "postgres": "postgres", "sqlite": "sqlite",
            "bigquery": "bigquery", "snowflake": "snowflake", "transactsql": "tsql", "tsql": "tsql", "hive": "hive",
            "redshift": "redshift", "db2": "", "flinksql": "", "mongodb": ""}
REFUSED = {  # promptfoo types evaluations cannot run (a service they do not call): why each is refused
    "moderation": "it needs a moderation service (OpenAI's or Azure's moderation API, or Llama Guard on Replicate), "
                  "which evaluations do not call",
    "classifier": "it needs a Hugging Face text-classification model behind its Inference API, which evaluations "
                  "do not call",
    "trace-": "it checks the OpenTelemetry trace of the provider's call, which evaluations do not record",
    "non-empty": ("it is not a promptfoo assertion type (promptfoo's list of types has none, so promptfoo refuses it too): "
                  "to require an answer, write `not-equals` with the value '' or `regex` with the value '\\S'"),
}
MAX_JSON_STARTS = 2000  # the places in an output where contains-json tries a JSON value
_JSON_START = re.compile(r"[\[{]")
_FENCED = re.compile(r"```[A-Za-z]*[ \t]*\n(.*?)\n?```", re.DOTALL)


def refusal_reason(kind: str) -> str:
    """Why an assertion type is not run (for the refusal and the skipped list)."""
    base = kind.removeprefix("not-")
    for prefix, why in REFUSED.items():
        if base == prefix or (prefix.endswith("-") and base.startswith(prefix)):
            return why
    return "llmspace does not run this type"


def skipped_assertions(unsupported: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The assertions `--skip-unsupported` left out, by type: {assertion, reason, cases}."""
    return [{"assertion": kind, "reason": refusal_reason(kind), "cases": list(ids)} for kind, ids in sorted(unsupported.items())]


def unsupported_text(file: str, unsupported: dict[str, list[str]]) -> str:
    """The refusal of a dataset with assertion types llmspace does not run, each with why."""
    parts = [f"{kind} ({refusal_reason(kind)}; cases {', '.join(ids[:5])}{'…' if len(ids) > 5 else ''})"
             for kind, ids in sorted(unsupported.items())]
    return f"{file} uses assertion types llmspace does not run: " + "; ".join(parts) + "."


def _short(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def parse_value(kind: str, value: Any, where: str) -> Any:
    """The value of an assertion of one of `TYPES`, checked (raises `UserFacingError`)."""
    if kind in ("icontains-any", "icontains-all"):
        items = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else \
            [str(v) for v in value] if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value) else []
        if not items:
            raise UserFacingError(f"{where}: {kind} needs a list of texts as value, not {value!r}.")
        return items
    if kind == "finish-reason":
        if not isinstance(value, str) or not value.strip():
            raise UserFacingError(f"{where}: finish-reason needs the reason as value (stop, length, tool_calls, content_filter).")
        return value.strip()
    if kind == "word-count":
        return _word_count_value(value, where)
    if kind == "levenshtein":
        if not isinstance(value, str):
            raise UserFacingError(f"{where}: levenshtein needs the text to compare with as value, not {value!r}.")
        return value
    if kind in ("is-sql", "contains-sql") and value is not None:
        if not isinstance(value, dict) or set(value) - {"databaseType", "allowedTables", "allowedColumns"}:
            raise UserFacingError(f"{where}: is-sql takes {{databaseType, allowedTables, allowedColumns}} as value, not {value!r}.")
        dialect = str(value.get("databaseType") or "mysql").replace(" ", "").lower()
        if dialect not in DIALECTS or not DIALECTS[dialect]:
            raise UserFacingError(f"{where}: is-sql cannot read the SQL of {value.get('databaseType')!r}.",
                                  hint="Known: " + ", ".join(k for k, v in DIALECTS.items() if v) + ".")
        for key in ("allowedTables", "allowedColumns"):
            rules = value.get(key)
            if rules is not None and not (isinstance(rules, list) and all(isinstance(r, str) for r in rules)):
                raise UserFacingError(f"{where}: is-sql's {key} must be a list of texts.")
            for rule in rules or []:
                try:
                    re.compile(rule.split("::", 1)[-1])
                except re.error as exc:
                    raise UserFacingError(f"{where}: is-sql's {key} entry {rule!r} is not a valid pattern ({exc}).") from None
        return value
    if kind == "contains-json" and value is not None:
        if isinstance(value, str):  # promptfoo allows the schema as JSON or YAML text
            import yaml

            from ..jsonio import load_yaml

            try:
                value = load_yaml(value)
            except yaml.YAMLError as exc:
                raise UserFacingError(f"{where}: the schema of contains-json is not JSON or YAML ({exc}).") from None
        if not isinstance(value, dict):
            raise UserFacingError(f"{where}: contains-json takes a JSON Schema object as value.")
    return value


def max_score_value(value: Any, where: str) -> dict[str, Any] | None:
    """max-score's options, checked: `{method: average|sum, weights: {type: n}, threshold: n}`, each optional
    (the pass over a case's outputs, `evals/compare_outputs.py`, applies them)."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) - {"method", "weights", "threshold"}:
        raise UserFacingError(f"{where}: max-score takes {{method, weights, threshold}} as value, not {value!r}.")
    if value.get("method", "average") not in ("average", "sum"):
        raise UserFacingError(f"{where}: max-score's method is average or sum, not {value['method']!r}.")
    weights = value.get("weights", {})
    if not isinstance(weights, dict) or not all(isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w)
                                                and w >= 0 for w in weights.values()):
        raise UserFacingError(f"{where}: max-score's weights map assertion types to non-negative numbers, not {weights!r}.")
    threshold = value.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                  or not math.isfinite(threshold)):
        raise UserFacingError(f"{where}: max-score's threshold must be a number, not {threshold!r}.")
    return {"method": value.get("method", "average"), "weights": {str(k): float(w) for k, w in weights.items()},
            **({"threshold": float(threshold)} if threshold is not None else {})}


def _word_count_value(value: Any, where: str) -> dict[str, float]:
    def number(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise UserFacingError(f"{where}: word-count needs a whole number or {{min, max}}, not {value!r}.")
        return float(v)

    if isinstance(value, dict) and value and set(value) <= {"min", "max"}:
        bounds = {k: number(v) for k, v in value.items()}
        if "min" in bounds and "max" in bounds and bounds["min"] > bounds["max"]:
            raise UserFacingError(f"{where}: word-count's min is above its max.")
        return bounds
    n = number(value)
    return {"min": n, "max": n}


def check_value(kind: str, value: Any, output: str, *, tool_calls: tuple[tuple[str, dict[str, Any]], ...] = (),
                tools: tuple[dict[str, Any], ...] = (), finish_reason: str | None = None,
                threshold: float | None = None) -> tuple[bool, str]:
    """(held, why not) of one assertion of `TYPES` on one output."""
    if kind == "icontains-any":
        folded = output.casefold()
        return any(v.casefold() in folded for v in value), "output contains none of " + ", ".join(map(repr, value)) + " (any case)"
    if kind == "icontains-all":
        folded = output.casefold()
        missing = [v for v in value if v.casefold() not in folded]
        return not missing, "output lacks " + ", ".join(map(repr, missing)) + " (any case)"
    if kind == "contains-json":
        return _contains_json(output, value)
    if kind in ("is-valid-openai-tools-call", "is-valid-function-call", "is-valid-openai-function-call"):
        return _valid_calls(tool_calls, tools)
    if kind == "finish-reason":
        got = FINISH_ALIASES.get((finish_reason or "").lower(), (finish_reason or "").lower())
        want = FINISH_ALIASES.get(value.lower(), value.lower())
        return got == want, f"the reply ended with {finish_reason or 'no reason'!r}, not {value!r}"
    if kind == "is-sql":
        return _is_sql(output, value)
    if kind == "contains-sql":
        block = _FENCED.search(output)
        return _is_sql(block.group(1) if block else output, value)
    if kind == "levenshtein":
        return _levenshtein(output, value, threshold)
    if kind == "is-refusal":
        from .refusal import refusal_phrase

        phrase = refusal_phrase(output)
        return phrase is not None, "the output is not a refusal" if phrase is None else f"the output is a refusal ({phrase!r})"
    if kind == "guardrails":
        filtered = FINISH_ALIASES.get((finish_reason or "").lower(), (finish_reason or "").lower()) == "content_filter"
        return not filtered, (f"the provider's content filter stopped the reply (finish reason {finish_reason!r})" if filtered
                              else "no content filter stopped the reply")
    if kind == "word-count":
        words = len(output.split())
        low, high = value.get("min", 0.0), value.get("max", math.inf)
        if low == high:
            return words == low, f"{words} words, not {low:g}"
        return low <= words <= high, f"{words} words, not from {low:g} to {high:g}"
    raise ValueError(f"unhandled assertion type {kind}")


def json_values(text: str) -> list[Any]:
    """Every JSON object or array found in `text`, outermost first (a fenced block included)."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    i, starts = 0, 0
    while starts < MAX_JSON_STARTS:
        match = _JSON_START.search(text, i)
        if match is None:
            break
        starts += 1
        try:
            value, end = decoder.raw_decode(text, match.start())
        except ValueError:
            i = match.start() + 1
            continue
        found.append(value)
        i = end
    return found


def _contains_json(output: str, schema: dict[str, Any] | None) -> tuple[bool, str]:
    from .timed_regex import RegexTimeout, validator_for

    try:
        values = json_values(output)
    except RecursionError:
        return False, f"the output's JSON is {DEPTH_REASON}"
    if not values:
        return False, "output contains no JSON object or array"
    if schema is None:
        return True, ""
    last = ""
    for value in values:
        try:
            error = next(iter(validator_for(schema).iter_errors(value)), None)
        except RecursionError:
            return False, f"the output's JSON is {DEPTH_REASON}"
        except RegexTimeout as exc:
            return False, str(exc)
        if error is None:
            return True, ""
        last = error.message
    return False, f"no JSON in the output matches the schema ({_short(last)})"


def _valid_calls(calls: tuple[tuple[str, dict[str, Any]], ...], tools: tuple[dict[str, Any], ...]) -> tuple[bool, str]:
    import jsonschema

    if not tools:
        return False, "the request offered no tools"
    if not calls:
        return False, "the reply called no tool"
    by_name = {str(t.get("name")): t for t in tools}
    for name, arguments in calls:
        tool = by_name.get(name)
        if tool is None:
            return False, f"the reply called {name!r}, which the request did not offer ({', '.join(sorted(by_name))})"
        schema = tool.get("parameters") or {"type": "object"}
        try:
            error = next(iter(jsonschema.validators.validator_for(schema)(schema).iter_errors(arguments)), None)
        except (jsonschema.SchemaError, RecursionError) as exc:
            return False, f"the parameters of {name!r} cannot be checked ({type(exc).__name__})"
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path)
            return False, f"the arguments of {name!r} do not match its parameters: {error.message}" + (f" at /{where}" if where else "")
    return True, ""


def _is_sql(output: str, value: dict[str, Any] | None) -> tuple[bool, str]:
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ErrorLevel, SqlglotError

    text = output.strip()
    fence = re.match(r"^```[A-Za-z]*\s*\n(.*?)\n?```$", text, re.DOTALL)
    text = fence.group(1).strip() if fence else text
    dialect = DIALECTS[str((value or {}).get("databaseType") or "mysql").replace(" ", "").lower()]
    if not text:
        return False, "the output is empty, not SQL"
    try:
        statements = [s for s in sqlglot.parse(text, read=dialect, error_level=ErrorLevel.RAISE) if s is not None]
    except (SqlglotError, RecursionError) as exc:
        return False, f"the output is not valid {dialect} SQL ({_short(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)})"
    kinds = (exp.Query, exp.DML, exp.DDL, exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter,
             exp.Use, exp.Set, exp.Transaction, exp.Commit, exp.Rollback, exp.Describe, exp.Show, exp.TruncateTable)
    if not statements or any(not isinstance(s, kinds) for s in statements):
        return False, "the output is not an SQL statement"
    if not value:
        return True, ""
    for statement in statements:
        op = type(statement).__name__.lower()
        tables = sorted({t.name for t in statement.find_all(exp.Table)})
        for table in tables:
            if value.get("allowedTables") is not None and not _allowed(value["allowedTables"], op, table, None):
                return False, f"the SQL uses the table {table!r} ({op}), which allowedTables does not allow"
        for column in statement.find_all(exp.Column):
            if value.get("allowedColumns") is not None and not _allowed(value["allowedColumns"], op, column.table or None, column.name):
                return False, f"the SQL uses the column {column.name!r} ({op}), which allowedColumns does not allow"
    return True, ""


def _levenshtein(output: str, want: str, threshold: float | None) -> tuple[bool, str]:
    """Distance at most `threshold`: a band of width 2k+1 around the diagonal suffices (a
    longer distance is only reported as more than k), so long outputs cost O(n·k)."""
    k = int(LEVENSHTEIN_MAX if threshold is None else threshold)
    a, b = output, want
    if abs(len(a) - len(b)) > k:
        return False, f"edit distance more than {k} (the lengths differ by {abs(len(a) - len(b))})"
    big = k + 1
    prev = {j: j for j in range(min(len(b), k) + 1)}
    for i in range(1, len(a) + 1):
        row: dict[int, int] = {}
        for j in range(max(0, i - k), min(len(b), i + k) + 1):
            if j == 0:
                row[j] = i
                continue
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(prev.get(j, big) + 1, row.get(j - 1, big) + 1, prev.get(j - 1, big) + cost)
        prev = row
        if min(prev.values(), default=big) > k:
            return False, f"edit distance more than {k}"
    return prev.get(len(b), big) <= k, f"edit distance more than {k}"


def _allowed(rules: list[str], op: str, table: str | None, column: str | None) -> bool:
    """node-sql-parser's whitelist: `op::db::table` for tables, `op::table::column` for columns."""
    for rule in rules:
        parts = rule.split("::")
        if len(parts) != 3:
            continue
        rule_op, middle, last = parts
        if not re.fullmatch(rule_op, op, re.IGNORECASE):
            continue
        if column is None and re.fullmatch(last, table or "", re.IGNORECASE):
            return True
        if column is not None and (middle == "null" or table is None or re.fullmatch(middle, table, re.IGNORECASE)) \
                and re.fullmatch(last, column, re.IGNORECASE):
            return True
    return False
