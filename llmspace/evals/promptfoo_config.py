"""promptfoo files as datasets: a configuration (`promptfooconfig.yaml`: `tests`, `defaultTest`,
`assertionTemplates`, …), a tests file (a list of tests), and promptfoo's CSV (variable columns
plus `__expected`, `__expected1…N`, `__description`, `__metadata:*`, `__threshold`,
`__config:__expectedN:threshold`).

    source = read_promptfoo(path, data)    # a configuration or a list of tests, read whole
    source.cases, source.unsupported, source.notes
    for case in csv_cases(path, rows, reader): …      # promptfoo CSV, row by row

`tests:` may be a list of tests, files, globs, `file://` paths and remote sources
(`huggingface://datasets/…`, `langfuse://traces…`: `evals/remote_tests.py`), or one of those; every file
lies inside the configuration's folder (symbolic links resolved), as `file://` values and a
test's `vars:` file do. A key llmspace does not run is refused naming it and the file
(`evals/promptfoo_keys.py`); one it runs differently leaves a note.
"""

from __future__ import annotations

import glob
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from .case import Case, confined, read_document, read_text
from .dataset_rows import csv_rows
from .promptfoo_keys import CONFIG_KEYS, CSV_COLUMNS, refuse_unknown
from .promptfoo_tests import TestReader
from .remote_tests import RemoteNote, is_remote, remote_tests

TEST_FILE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl", ".csv")
MAX_TEST_FILES = 1000
# promptfoo's assertion types: `__expected` text starting with one of them (and a colon) is that assertion
PROMPTFOO_TYPES = frozenset(["answer-relevance", "bleu", "classifier", "contains", "contains-all", "contains-any", "contains-html", "contains-json", "contains-sql", "contains-xml", "context-faithfulness", "context-recall", "context-relevance", "conversation-relevance", "cost", "equals", "factuality", "finish-reason", "g-eval", "gleu", "guardrails", "icontains", "icontains-all", "icontains-any", "is-html", "is-json", "is-refusal", "is-sql", "is-valid-function-call", "is-valid-openai-function-call", "is-valid-openai-tools-call", "is-xml", "javascript", "latency", "levenshtein", "llm-rubric", "meteor", "model-graded-closedqa", "model-graded-factuality", "moderation", "perplexity", "perplexity-score", "pi", "python", "regex", "rouge-n", "ruby", "select-best", "similar", "starts-with", "max-score", "word-count", "webhook", "tool-call-f1", "trace-span-count", "trace-span-duration", "trace-error-spans", "search-rubric", "human"])
_EXPECTED = re.compile(r"^(not-)?([a-z][a-z0-9-]*)(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$")
_EXPECTED_COLUMN = re.compile(r"^__expected(\d*)$")


@dataclass
class PromptfooSource:
    cases: list[Case]
    unsupported: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    conversation: bool = False  # promptfoo:simulated-user tests: a conversation evaluation's scenarios


def is_config(data: Any) -> bool:
    """A promptfoo configuration (an object with promptfoo's keys), not a list of rows."""
    return isinstance(data, dict) and bool(set(data) & set(CONFIG_KEYS)) and not (
        set(data) == {"tests"} and isinstance(data["tests"], list) and not _looks_like_tests(data["tests"]))


def _looks_like_tests(items: list[Any]) -> bool:
    return bool(items) and all(isinstance(t, str) or (isinstance(t, dict) and ("vars" in t or "assert" in t)) for t in items)


def is_test_list(data: Any) -> bool:
    return isinstance(data, list) and bool(data) and all(isinstance(t, dict) and isinstance(t.get("vars"), (dict, str, list))
                                                        for t in data)


def read_promptfoo(path: Path, data: Any) -> PromptfooSource:
    """The cases of a promptfoo configuration or tests list (`data`, read from `path`)."""
    base = path.parent
    notes: list[str] = []
    if isinstance(data, list):
        reader = TestReader(path)
        tests: list[tuple[Any, str]] = [(t, f"test {n}") for n, t in enumerate(data, 1)]
    else:
        for key in refuse_unknown(data, CONFIG_KEYS, "the configuration", path, "a configuration"):
            notes.append(f"`{key}` of {path.name}: {CONFIG_KEYS[key][1]}.")
        default = data.get("defaultTest") or {}
        if isinstance(default, str):
            default = read_document(confined(base, default.removeprefix("file://"), f"{path.name} defaultTest"), f"{path.name} defaultTest")
        templates = data.get("assertionTemplates") or {}
        if not isinstance(default, dict) or not isinstance(templates, dict):
            raise UserFacingError(f"{path.name}: `defaultTest` and `assertionTemplates` must be objects.")
        reader = TestReader(path, default, templates)
        if "tests" not in data:
            raise UserFacingError(f"{path.name} has no `tests:`, so there are no cases to run.")
        tests = list(_tests(path, data["tests"]))
    cases: list[Case] = []
    for test, where in tests:
        if isinstance(test, RemoteNote):
            notes.append(test.text)
        elif isinstance(test, _CsvRows):
            cases.extend(csv_cases(test.path, test.rows, reader))
        else:
            cases.extend(reader.cases(test, where, base))
    notes.extend(f"{text}" + (f" ({n}×)" if n > 1 else "") for text, n in reader.notes.items())
    return PromptfooSource(cases, reader.unsupported, notes, bool(reader.conversation))


@dataclass
class _CsvRows:
    path: Path
    rows: list[dict[str, str]]


def _tests(path: Path, value: Any) -> Iterator[tuple[Any, str]]:
    """Every test of `tests:` with where it came from (files and globs read)."""
    items = value if isinstance(value, list) else [value]
    for n, item in enumerate(items, 1):
        if isinstance(item, str):
            yield from _test_files(path, item)
        elif isinstance(item, dict):
            yield item, f"test {n}"
        else:
            raise UserFacingError(f"{path.name}: `tests` entry {n} is neither a test nor a file path ({item!r:.80}).")


def _test_files(path: Path, spec: str) -> Iterator[tuple[Any, str]]:
    if is_remote(spec):
        yield from remote_tests(spec, path.name)
        yield RemoteNote(spec), spec
        return
    base = path.parent
    rel = spec.removeprefix("file://")
    if "://" in rel:
        raise UserFacingError(f"{path.name}: the tests {spec!r} are not a file in its folder (the remote sources read are "
                              "huggingface://datasets/… and langfuse://traces); nothing was run.", hint="Download the tests into the configuration's folder and name that file.")
    if any(ch in rel for ch in "*?["):
        found = sorted(glob.glob(str(base / rel), recursive=True))
        if not found:
            raise UserFacingError(f"{path.name}: no file matches the tests {spec!r}.")
        files = [confined(base, str(Path(f).relative_to(base)), path.name) for f in found[:MAX_TEST_FILES]]
    else:
        files = [confined(base, rel, path.name)]
    for file in files:
        suffix = file.suffix.lower()
        if suffix not in TEST_FILE_SUFFIXES:
            raise UserFacingError(f"{path.name}: the tests file {file.name} is not YAML, JSON, JSON Lines or CSV "
                                  "(test generators are code, which llmspace does not run); nothing was run.")
        if suffix == ".csv":
            yield _CsvRows(file, list(csv_rows(file))), file.name
        elif suffix == ".jsonl":
            for n, line in enumerate(read_text(file, path.name, file.name).splitlines(), 1):
                if line.strip():
                    try:
                        yield json.loads(line), f"{file.name} line {n}"
                    except ValueError as exc:
                        raise UserFacingError(f"{file.name} line {n} is not JSON ({exc}).") from None
        else:
            data = read_document(file, path.name)
            for n, test in enumerate(data if isinstance(data, list) else [data], 1):
                yield test, f"{file.name} test {n}"


# -- promptfoo CSV ---------------------------------------------------------------------------


def is_promptfoo_csv(columns: Iterable[str]) -> bool:
    return any(c.startswith("__") for c in columns)


def expected_assertion(text: str) -> dict[str, Any]:
    """An `__expected` cell as promptfoo reads it: `type: value`, `type(threshold): value`, or equals."""
    for prefix, kind in (("grade:", "llm-rubric"), ("fn:", "javascript"), ("eval:", "javascript")):
        if text.startswith(prefix):
            return {"type": kind, "value": text[len(prefix):].strip()}
    m = _EXPECTED.match(text)
    if m and m.group(2) in PROMPTFOO_TYPES:
        negate, kind, threshold, value = m.groups()
        item: dict[str, Any] = {"type": (negate or "") + kind}
        if value is not None:
            value = value.strip()
            item["value"] = [v.strip() for v in value.split(",")] if kind.endswith(("-all", "-any")) else value
        if threshold is not None:
            item["threshold"] = float(threshold)
        return item
    return {"type": "equals", "value": text}


def csv_test(path: Path, row: dict[str, str], n: int) -> tuple[dict[str, Any], int]:
    """One promptfoo CSV row as a test, and how many of its variable cells were empty."""
    test: dict[str, Any] = {"vars": {}}
    expected: dict[str, dict[str, Any]] = {}
    config: dict[str, dict[str, Any]] = {}
    empty = 0
    for column, cell in row.items():
        if not column.startswith("__"):
            test["vars"][column] = cell
            empty += cell == ""
        elif _EXPECTED_COLUMN.match(column) is not None:
            if cell.strip():
                expected[column] = expected_assertion(cell.strip())
        elif column == "__description":
            test["description"] = cell
        elif column == "__threshold":
            test["threshold"] = cell or None
        elif column.startswith("__metadata:"):
            test.setdefault("metadata", {})[column[len("__metadata:"):].removesuffix("[]")] = cell
        elif column.startswith("__config:") and column.endswith(":threshold") and \
                _EXPECTED_COLUMN.match(column[len("__config:"):-len(":threshold")]):
            if cell.strip():
                config[column[len("__config:"):-len(":threshold")]] = {"threshold": float(cell)}
        else:
            key = "__config:*" if column.startswith("__config:") else column
            entry = CSV_COLUMNS.get(key)
            if entry is None or entry[0] == "refuse":
                reason = f" ({entry[1]})" if entry else " (llmspace does not know this column)"
                raise UserFacingError(f"{path.name}: the column {column!r}{reason}; nothing was run.",
                                      hint="See docs/promptfoo-compat.md for the columns llmspace reads.")
    test["assert"] = [{**a, **config.get(c, {})} for c, a in sorted(expected.items(), key=lambda kv: (len(kv[0]), kv[0]))]
    unused = sorted(c for c in config if c not in row)
    if unused:
        test["__unused_config"] = unused
    return test, empty


def csv_cases(path: Path, rows: Iterable[dict[str, str]], reader: TestReader) -> Iterator[Case]:
    """The cases of promptfoo CSV rows (read one at a time)."""
    empty = 0
    for n, row in enumerate(rows, 1):
        test, blanks = csv_test(path, row, n)
        empty += blanks
        if "__metric" in row:
            reader.note("`__metric`: named metrics are not aggregated")
        for column in test.pop("__unused_config", []):
            reader.note(f"`__config:{column}:threshold` of {path.name} names no column {column!r}: as in promptfoo, it sets nothing")
        yield from reader.cases(test, f"row {n}", path.parent)
    if empty:
        reader.note(f"{empty} empty cell(s) of {path.name} were read as the empty string")
