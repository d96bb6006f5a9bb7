"""promptfoo tests read as cases, with promptfoo's semantics: `defaultTest` merged in, list
variables expanded into one case per combination, `{{var}}` in assertion values rendered with
the case's variables, `assert-set` and `$ref` resolved, `transform`s (the test's, then the
assertion's) kept on each assertion for the code host, `latency`/`cost` read as
`max-latency`/`max-cost`, an llm-rubric threshold read on the 0–1 scale, and the
`description` as the case's id (made unique: identical tests stay separate cases).

    reader = TestReader(path, default_test, templates)
    for case in reader.cases(test, "test 3", base_folder): …
    reader.unsupported, reader.notes                 # types we do not run; what ran differently

Keys are checked against `evals/promptfoo_keys.py`: a refused or unknown key raises a
`UserFacingError` naming it and the file before anything runs.
"""

from __future__ import annotations

import glob
import itertools
import json
import os
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from . import model_graded, rubric_prompt
from .assertions import TYPES, Assertion, parse_assertion
from .case import Case, confined, content_id, file_value, read_document, threshold_value, value_text
from .promptfoo_keys import ASSERT_KEYS, OPTION_KEYS, TEST_KEYS, refuse_test_provider, refuse_unknown
from .promptfoo_simulated import NOTE, PROVIDER_ID, SimulatedUser, scenario_values, simulated_user

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}")
RENAMED = {"latency": "max-latency", "cost": "max-cost"}  # promptfoo's threshold becomes our value
ID_MAX = 120
CODE = ("javascript", "python")  # their file:// value names code (and a function), not text to inline
MAX_GLOB_FILES = 1000  # files one `file://` glob variable may expand into


def _render(text: str, values: dict[str, Any], missing: set[str]) -> str:
    """`text` with each `{{name}}` / `{{name.key}}` replaced by the case's value (undefined: "")."""
    if "{%" in text:
        raise ValueError("template tags ({% … %})")

    def sub(m: re.Match[str]) -> str:
        name, path = m.group(1), m.group(2)
        if name not in values:
            missing.add(name)
            return ""
        value = values[name]
        for key in path.split(".")[1:]:
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except ValueError:
                    return ""
            value = value.get(key) if isinstance(value, dict) else None
        return value_text(value)

    out = PLACEHOLDER.sub(sub, text)
    if "{{" in out:
        raise ValueError("a {{ … }} that is not a plain variable (filters and expressions are not rendered)")
    return out


def _render_value(value: Any, values: dict[str, Any], missing: set[str]) -> Any:
    if isinstance(value, str):
        return _render(value, values, missing) if "{{" in value or "{%" in value else value
    if isinstance(value, list):
        return [_render_value(v, values, missing) for v in value]
    if isinstance(value, dict):
        return {k: _render_value(v, values, missing) for k, v in value.items()}
    return value


def _id_text(text: str) -> str:
    one = " ".join(text.split()).replace("|", "/")
    return one if len(one) <= ID_MAX else one[: ID_MAX - 1] + "…"


class TestReader:
    """Reads the tests of one promptfoo file (state: ids given so far, types not run, notes)."""

    def __init__(self, path: Path, default_test: dict[str, Any] | None = None,
                 templates: dict[str, Any] | None = None) -> None:
        self.path = path
        self.default = default_test or {}
        self.templates = templates or {}
        self.unsupported: dict[str, list[str]] = {}
        self.notes: dict[str, int] = {}  # note -> how many times it applied
        self._ids: Counter[str] = Counter()
        self._row = 0
        self._default_checked = False
        self.conversation: bool | None = None  # promptfoo:simulated-user tests (None: no test read yet)

    def _check_keys(self, test: dict[str, Any], where: str) -> None:
        """A test's (or defaultTest's) keys: a refused or unknown one raises; notes for the others."""
        refuse_test_provider(test, where, self.path)
        for key in refuse_unknown(test, TEST_KEYS, where, self.path, "a test"):
            if key == "provider":  # the simulated user: its own notes
                continue
            self.note(f"`{key}`{' of defaultTest' if where == 'defaultTest' else ''}: {TEST_KEYS[key][1]}")

    def note(self, text: str) -> None:
        self.notes[text] = self.notes.get(text, 0) + 1

    # -- one test -----------------------------------------------------------------------

    def cases(self, test: Any, where: str, base: Path) -> list[Case]:
        if not isinstance(test, dict):
            raise UserFacingError(f"{self.path.name}: {where} is not an object of vars, assert, … ({test!r:.80}).")
        if not self._default_checked:
            self._check_keys(self.default, "defaultTest")
            self._default_checked = True
        self._check_keys(test, where)
        options = {**(self.default.get("options") or {}), **(test.get("options") or {})}
        if not isinstance(options, dict):
            raise UserFacingError(f"{self.path.name}: {where}: `options` must be an object.")
        for key in refuse_unknown(options, OPTION_KEYS, f"{where} options", self.path, "a test's options"):
            self.note(f"options.{key}: {OPTION_KEYS[key][1]}" + (f" (named {self._provider_name(options[key])})" if key == "provider" else ""))
        variables = {**self._vars(self.default.get("vars"), where, base), **self._vars(test.get("vars"), where, base)}
        raw_asserts = [*self._assert_list(self.default.get("assert"), "defaultTest"), *self._assert_list(test.get("assert"), where)]
        meta = {**(self.default.get("metadata") or {}), **(test.get("metadata") or {})}
        threshold = test.get("threshold", self.default.get("threshold"))
        description = value_text(test.get("description") or "")
        rid = test.get("id") or meta.get("id")
        if not options.get("disableVarExpansion"):
            variables = {k: self._glob(v, base, where) for k, v in variables.items()}
        combos = self._expand(variables, bool(options.get("disableVarExpansion")))
        sim = self._simulated_user(test, where)
        out = []
        for values in combos:
            self._row += 1
            values = {k: file_value(base, v, where) for k, v in values.items()}
            if sim is not None:
                values = scenario_values(values, sim, where, self.path)
            expected = values.pop("expected", None) if "expected" in values else None
            if rid:
                stem = _id_text(str(rid))
            elif description:
                stem = _id_text(description)
            else:
                stem = content_id({"vars": values, "assert": raw_asserts, "description": description})
            self._ids[stem] += 1
            case_id = stem if self._ids[stem] == 1 else f"{stem} ({self._ids[stem]})"
            assertions = self._assertions(raw_asserts, values, case_id, where, base, self._transform(options, where), options)
            for k, v in meta.items():
                values.setdefault(str(k), v)
            out.append(Case(case_id, values, None if expected is None else value_text(expected), assertions,
                            threshold_value(threshold, where), description, self._row, lenient=True))
        return out

    def _simulated_user(self, test: dict[str, Any], where: str) -> SimulatedUser | None:
        """promptfoo's simulated user driving this test (its own provider, else defaultTest's);
        a file must make all its tests conversations or none."""
        sim = simulated_user(test["provider"], where, self.path) if "provider" in test else \
            simulated_user(self.default.get("provider"), "defaultTest", self.path)
        if self.conversation is not None and self.conversation != (sim is not None):
            raise UserFacingError(f"{self.path.name}: {where} {'uses' if sim else 'does not use'} the provider "
                                  f"{PROVIDER_ID} and an earlier test {'does not' if sim else 'does'}: an evaluation is "
                                  "conversations or single answers; nothing was run.",
                                  hint=f"Put the {PROVIDER_ID} tests in a file of their own (or set it on defaultTest).")
        self.conversation = sim is not None
        for text in (NOTE, *sim.notes) if sim is not None else ():
            self.notes.setdefault(text, 1)  # said once for the file
        return sim

    def _transform(self, options: dict[str, Any], where: str) -> tuple[str, ...]:
        """The test's transform of the output (`postprocess` is promptfoo's older name for it)."""
        code = options.get("transform", options.get("postprocess"))
        if code is None:
            return ()
        from .code_assertions import check_transform

        return (check_transform(code, f"{self.path.name} {where} options.transform"),)

    @staticmethod
    def _provider_name(value: Any) -> str:
        if isinstance(value, dict):
            return str(value.get("id") or value.get("label") or "a provider object")
        return str(value)

    def _vars(self, value: Any, where: str, base: Path) -> dict[str, Any]:
        if value is None:
            return {}
        if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return vars_files(self.path, value, base, where)
        if not isinstance(value, dict):
            raise UserFacingError(f"{self.path.name}: {where}: `vars` must be a mapping or a file path, not {value!r:.80}.")
        return {str(k): v for k, v in value.items()}

    def _glob(self, value: Any, base: Path, where: str) -> Any:
        """A `file://` glob variable as promptfoo reads it: a list of the files it matches (one
        case per file), each inside the test file's folder; other values unchanged."""
        if not isinstance(value, str) or not value.startswith("file://") or not any(c in value for c in "*?["):
            return value
        pattern = value[len("file://"):]
        found = sorted(p for p in glob.glob(str(base / pattern), recursive=True) if Path(p).is_file())
        if not found:
            raise UserFacingError(f"{self.path.name}: {where}: no file matches the variable {value!r} in {base}; nothing was run.")
        if len(found) > MAX_GLOB_FILES:
            raise UserFacingError(f"{self.path.name}: {where}: the variable {value!r} matches {len(found)} files, more than "
                                  f"{MAX_GLOB_FILES} (one case each); nothing was run.", hint="Narrow the pattern.")
        return ["file://" + str(confined(base, os.path.relpath(p, base), f"{self.path.name} {where}").relative_to(
            os.path.realpath(base))) for p in found]

    def _expand(self, variables: dict[str, Any], disabled: bool) -> list[dict[str, Any]]:
        lists = {k: v for k, v in variables.items() if isinstance(v, list) and k != "_conversation" and not disabled}
        if not lists:
            return [dict(variables)]
        for k, v in lists.items():
            if not v:
                raise UserFacingError(f"{self.path.name}: the variable {k!r} is an empty list (no case to run).")
        names = list(lists)
        out = []
        for combo in itertools.product(*(lists[n] for n in names)):
            out.append({**variables, **dict(zip(names, combo, strict=True))})
        return out

    def _assert_list(self, value: Any, where: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise UserFacingError(f"{self.path.name}: {where}: `assert` must be a list.")
        return value

    # -- assertions ---------------------------------------------------------------------

    def _resolve_ref(self, raw: dict[str, Any], where: str) -> Any:
        ref = raw.get("$ref")
        prefix = "#/assertionTemplates/"
        if not isinstance(ref, str) or not ref.startswith(prefix):
            raise UserFacingError(f"{self.path.name}: {where}: `$ref` {ref!r} is not '#/assertionTemplates/NAME'.")
        name = ref[len(prefix):]
        if name not in self.templates:
            raise UserFacingError(f"{self.path.name}: {where}: `$ref` names the assertion template {name!r}, "
                                  "which `assertionTemplates` does not define.")
        return {**self.templates[name], **{k: v for k, v in raw.items() if k != "$ref"}}

    def _flatten(self, raws: list[Any], where: str, depth: int = 0) -> list[Any]:
        out: list[Any] = []
        for raw in raws:
            if isinstance(raw, dict) and "$ref" in raw:
                raw = self._resolve_ref(raw, where)
            if isinstance(raw, dict) and raw.get("type") == "assert-set":
                refuse_unknown(raw, ASSERT_KEYS, f"{where} assert-set", self.path, "an assertion")
                if raw.get("threshold") is not None or raw.get("weight", 1) != 1:
                    raise UserFacingError(f"{self.path.name}: {where}: an `assert-set` with a `threshold` or `weight` is "
                                          "not run yet (without them its assertions join the case's); nothing was run.")
                if depth > 10:
                    raise UserFacingError(f"{self.path.name}: {where}: assert-sets nested too deeply.")
                out.extend(self._flatten(self._assert_list(raw.get("assert"), where), where, depth + 1))
                continue
            out.append(raw)
        return out

    def _assertions(self, raws: list[Any], values: dict[str, Any], case_id: str, where: str, base: Path,
                    transforms: tuple[str, ...] = (), options: dict[str, Any] | None = None) -> list[Assertion]:
        out = []
        missing: set[str] = set()
        for raw in self._flatten(raws, where):
            if isinstance(raw, str):
                raw = {"type": raw}
            if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
                raise UserFacingError(f"{self.path.name}: {where}: an assertion must be an object with a type, not {raw!r:.80}.")
            for key in refuse_unknown(raw, ASSERT_KEYS, f"{where} assertion {raw['type']!r}", self.path, "an assertion"):
                self.note(f"assertion `{key}`: {ASSERT_KEYS[key][1]}")
            kind = raw["type"]
            negate = kind.startswith("not-")
            base_kind = kind[4:] if negate else kind
            item: dict[str, Any] = {"type": kind}
            if base_kind in RENAMED:
                item["type"] = ("not-" if negate else "") + RENAMED[base_kind]
                item["value"] = raw.get("threshold", raw.get("value"))
                if "weight" in raw:
                    item["weight"] = raw["weight"]
            else:
                item.update({k: raw[k] for k in ("value", "weight", "threshold") if k in raw})
            if item["type"].removeprefix("not-") not in TYPES:
                self.unsupported.setdefault(kind, []).append(case_id)
                continue
            if "value" in item:
                try:
                    value = item["value"] if base_kind in CODE else file_value(base, item["value"], where)
                    item["value"] = _render_value(value, values, missing)
                except ValueError as exc:
                    raise UserFacingError(f"{self.path.name}: {where}: the value of {kind!r} has {exc}; nothing was run.") from None
            judging = judge_settings(raw, options or {}, base, f"{self.path.name} {where} assertion {kind!r}")
            if judging.get("rubric_prompt") is not None and item["type"] not in rubric_prompt.KINDS:
                raise UserFacingError(f"{self.path.name}: {where}: `rubricPrompt` on {kind!r} is not run (llmspace runs it for "
                                      f"{', '.join(rubric_prompt.KINDS)}); nothing was run.")
            if not {"judge", "embedder"} & set(judging) and (raw.get("provider") or (options or {}).get("provider")):
                self.note(f"`provider` on {base_kind}: not used (only a judged assertion's provider is its judge, and a "
                          "similar assertion's its embedder)")
            if item["type"] == "llm-rubric" and "rubric_prompt" not in judging and isinstance(item.get("threshold"), (int, float)) \
                    and 0 <= item["threshold"] <= 1:
                item["threshold"] = 1 + 4 * float(item["threshold"])  # promptfoo's 0–1 score on the judge's 1–5 scale
            parsed = replace(parse_assertion(item, f"{self.path.name} {where}"), **judging)
            if raw.get("contextTransform") is not None:
                parsed = replace(parsed, context_transform=self._context_transform(raw, parsed, where))
            own = raw.get("transform")
            if own is not None:
                from .code_assertions import check_transform

                own = check_transform(own, f"{self.path.name} {where} assertion {kind!r} transform")
            chain = (*transforms, *(() if own is None else (own,)))
            out.append(replace(parsed, transforms=chain) if chain else parsed)
        for name in sorted(missing):
            self.note(f"the variable {name!r} in an assertion value has no value in some cases: the empty string was used")
        return out

    def _context_transform(self, raw: dict[str, Any], parsed: Assertion, where: str) -> str:
        """promptfoo's `contextTransform`, checked: only the context-* types take it."""
        from .code_assertions import check_transform

        if parsed.grader not in model_graded.CONTEXT_KINDS:
            raise UserFacingError(f"{self.path.name}: {where}: `contextTransform` on {raw['type']!r} is not run (llmspace runs "
                                  f"it for {', '.join(model_graded.CONTEXT_KINDS)}); nothing was run.")
        return check_transform(raw["contextTransform"], f"{self.path.name} {where} assertion {raw['type']!r} contextTransform")


def vars_files(path: Path, value: str | list[str], base: Path, where: str) -> dict[str, Any]:
    """A test's `vars:` given as a file (or files): their mappings merged."""
    out: dict[str, Any] = {}
    for spec in [value] if isinstance(value, str) else value:
        data = read_document(confined(base, spec.removeprefix("file://"), f"{path.name} {where}"), f"{path.name} {where}")
        for item in data if isinstance(data, list) else [data]:
            if not isinstance(item, dict):
                raise UserFacingError(f"{path.name}: {where}: the vars file {spec} must hold a mapping of NAME: value.")
            out.update({str(k): v for k, v in item.items()})
    return out


def provider_kinds(value: Any) -> tuple[Any, Any]:
    """A grading `provider` as (its text model, its embedding model): promptfoo's per-kind map
    `{text: …, embedding: …}` gives each its own (a kind it leaves out is None); one provider
    (an id or `{id: …}`) is both."""
    if isinstance(value, dict) and "id" not in value and set(value) & {"text", "embedding"}:
        return value.get("text"), value.get("embedding")
    return value, value


def judge_settings(raw: dict[str, Any], options: dict[str, Any], base: Path, where: str) -> dict[str, Any]:
    """A judged assertion's own judge and rubricPrompt (the assertion's, else its test's
    options'), as `Assertion` fields; an assertion that no judge grades gets none."""
    kind = str(raw.get("type", ""))
    judged = kind in ("llm-rubric", "select-best", *model_graded.KINDS) and kind != "answer-relevance"
    out: dict[str, Any] = {}
    text, embedding = provider_kinds(raw.get("provider", options.get("provider")))
    if judged and text is not None:
        out["judge"] = rubric_prompt.judge_model(text, where)
    if kind in ("similar", "not-similar") and embedding is not None:
        out["embedder"] = rubric_prompt.judge_model(embedding, where)
    prompt = raw.get("rubricPrompt", options.get("rubricPrompt") if judged and kind != "select-best" else None)
    if prompt is not None:
        out["rubric_prompt"] = rubric_prompt.read_rubric_prompt(prompt, base, where)
    return out
