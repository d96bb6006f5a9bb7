"""Regular expressions that a dataset or an evaluation file supplies, run with a time limit.

A pattern such as `(a+)+$` backtracks for ever on an output like `aaaa…!`; Python's `re`
holds the GIL while it does, so neither the run nor Ctrl-C could go on. Every such pattern
runs on the `regex` package instead, which releases the GIL while it matches and stops after
`REGEX_SECONDS` with `RegexTimeout` (the check that ran it fails with that reason).

    search(pattern, text)                    # bool; RegexTimeout, or RegexError for a bad pattern
    compile_error(pattern)                   # None, or why it does not compile
    schema_patterns(schema)                  # every `pattern` and `patternProperties` key in a schema
    validator_for(schema)                    # a jsonschema validator whose regex keywords are time-limited

JSON Schema: `pattern` (also under `propertyNames`), `patternProperties` and the extras of
`additionalProperties` are matched here; `unevaluatedProperties` is left to jsonschema after
every `patternProperties` key of the schema has been tried here, time-limited, on the
object's keys. Formats are not asserted (no format checker), so `format: regex` runs nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import regex

REGEX_SECONDS = 1.0
RegexError = regex.error


class RegexTimeout(Exception):
    """A user's regex ran longer than `REGEX_SECONDS` on one text."""

    def __init__(self, pattern: str) -> None:
        shown = pattern if len(pattern) <= 80 else pattern[:79] + "…"
        super().__init__(f"the regex /{shown}/ took longer than {REGEX_SECONDS:g} s on the output (catastrophic "
                         "backtracking?) and was stopped; simplify it")


def search(pattern: str, text: str) -> bool:
    try:
        return regex.search(pattern, text, timeout=REGEX_SECONDS) is not None
    except TimeoutError:
        raise RegexTimeout(pattern) from None


def compile_error(pattern: str) -> str | None:
    try:
        regex.compile(pattern)
    except (regex.error, ValueError, OverflowError) as exc:
        return str(exc)
    return None


def schema_patterns(schema: Any) -> Iterator[str]:
    """The regexes of a JSON Schema: `pattern` values and `patternProperties` keys (iterative)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                yield node["pattern"]
            pp = node.get("patternProperties")
            if isinstance(pp, dict):
                yield from (k for k in pp if isinstance(k, str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def validator_for(schema: dict[str, Any]) -> Any:
    """A validator of `schema`'s draft whose regex keywords run through `search`."""
    import jsonschema
    from jsonschema.exceptions import ValidationError

    base = jsonschema.validators.validator_for(schema)
    original = base.VALIDATORS
    every_pattern = sorted(set(schema_patterns(schema)))

    def pattern(validator: Any, patrn: str, instance: Any, _schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not search(patrn, instance):
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(validator: Any, pp: dict[str, Any], instance: Any, _schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in pp.items():
            for key, value in instance.items():
                if search(patrn, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    def additional_properties(validator: Any, ap: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if "patternProperties" not in schema or not validator.is_type(instance, "object"):
            yield from original["additionalProperties"](validator, ap, instance, schema)
            return
        properties = schema.get("properties", {})
        patterns = list(schema["patternProperties"])
        extras = [k for k in instance if k not in properties and not any(search(p, k) for p in patterns)]
        if validator.is_type(ap, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], ap, path=extra)
        elif not ap and extras:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            shown = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {shown}")

    def unevaluated_properties(validator: Any, up: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "object"):
            for patrn in every_pattern:  # jsonschema matches them with `re`: first here, time-limited
                for key in instance:
                    search(patrn, key)
        yield from original["unevaluatedProperties"](validator, up, instance, schema)

    keywords: dict[str, Any] = {"pattern": pattern, "patternProperties": pattern_properties,
                                "additionalProperties": additional_properties}
    if "unevaluatedProperties" in original:
        keywords["unevaluatedProperties"] = unevaluated_properties
    return jsonschema.validators.extend(base, keywords)(schema)  # type: ignore[no-untyped-call]
