"""Datasets of evaluations: test cases read from CSV, JSON Lines, a JSON array, YAML, or a
promptfoo test file.

    cases = load_dataset(Path("cases.csv"))      # -> list[Case], ids unique
    scan = scan_dataset(Path("cases.csv"))       # one streaming pass: count, ids checked, …
    for case in scan.cases(): …                  # the cases again, read as they are reached

A row is an object (a CSV row: its columns). Keys with a meaning: `id`, `expected`,
`assert` (a list of assertions; in CSV a JSON or YAML text), `threshold` (the case's pass
threshold), `description`; every other key is a variable value when the thread uses a
variable of that name (`Case.variables_for`) and metadata otherwise. A row without `id`
gets a hash of its content (so inserting a row shifts no other key); two identical rows
without ids are refused.

promptfoo files — a configuration (`tests`, `defaultTest`, …), a list of tests recognised by
their `vars` key, or a CSV with `__expected`-style columns — are read with promptfoo's
semantics by `evals/promptfoo_config.py`; Inspect AI samples (`input` with `target` or
`choices`) by `evals/inspect_data.py` (`scorer`: includes, match or model). Assertion types
we do not support are collected (`unsupported`) so the caller can list them before anything
runs; what runs differently from promptfoo is in `notes`. All files are read through `jsonio`
(size cap, no devices).

CSV and JSON Lines are read row by row (`iter_rows`), so a run over a million rows holds one
row at a time, plus the set of ids the scan checks for duplicates; a JSON or YAML file is one
document and is read whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from ..jsonio import load_yaml, loads_located, read_file_bytes
from .case import Case, content_id, inside_folder, parse_asserts, threshold_value, value_text
from .dataset_rows import CSV_CELL_MAX, csv_rows, jsonl_rows
from .inspect_data import inspect_case, is_inspect_row
from .promptfoo_config import PromptfooSource, csv_cases, is_config, is_promptfoo_csv, is_test_list, read_promptfoo
from .promptfoo_tests import TestReader

__all__ = ["CSV_CELL_MAX", "Case", "Dataset", "DatasetScan", "content_id", "inside_folder", "load_dataset", "scan_dataset"]
RESERVED = ("id", "expected", "assert", "threshold", "description", "vars", "metadata", "options")
SUFFIXES = (".csv", ".jsonl", ".ndjson", ".json", ".yaml", ".yml")
PLAIN, PROMPTFOO, PROMPTFOO_CSV, INSPECT = "plain", "promptfoo", "promptfoo-csv", "inspect"


@dataclass
class Dataset:
    path: Path
    cases: list[Case]
    unsupported: dict[str, list[str]] = field(default_factory=dict)  # promptfoo type -> case ids
    notes: list[str] = field(default_factory=list)  # what runs differently from the file's own tool
    conversation: bool = False  # promptfoo:simulated-user tests: scenarios of a conversation evaluation


@dataclass
class DatasetScan:
    """What one streaming pass over a dataset found (every row read and checked, ids unique);
    `cases()` reads the file again, one case at a time."""

    path: Path
    count: int
    has_expected: bool  # some case has an `expected`
    promptfoo: bool
    unsupported: dict[str, list[str]] = field(default_factory=dict)
    kind: str = PLAIN  # plain, promptfoo, promptfoo-csv or inspect
    notes: list[str] = field(default_factory=list)
    scorer: str = "includes"  # Inspect samples: how `target` is checked
    conversation: bool = False  # promptfoo:simulated-user tests: scenarios of a conversation evaluation

    def cases(self) -> Iterator[Case]:
        return iter_cases(self.path, self.kind, scorer=self.scorer)


def _suffix(path: Path) -> str:
    if not path.is_file():
        raise UserFacingError(f"The dataset {path} does not exist.", hint="Check the path (relative paths start at the evaluation file's folder).")
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise UserFacingError(f"{path.name}: datasets are CSV, JSON Lines, JSON or YAML files ({', '.join(SUFFIXES)}).")
    return suffix


def load_dataset(path: Path, scorer: str = "includes") -> Dataset:
    """Every case in memory (the app's preview and small files; a run streams: `scan_dataset`)."""
    kind = dataset_kind(path)
    if kind == PROMPTFOO:
        source = read_promptfoo(path, _document(path))
        return Dataset(path, source.cases, source.unsupported, source.notes, source.conversation)
    reader = TestReader(path)
    cases = _finish(path, list(iter_cases(path, kind, reader, scorer)))
    return Dataset(path, cases, reader.unsupported, _notes(reader))


def _notes(reader: TestReader) -> list[str]:
    return [text + (f" ({n}×)" if n > 1 else "") for text, n in reader.notes.items()]


def scan_dataset(path: Path, scorer: str = "includes") -> DatasetScan:
    """Read every case once, row by row, checking each and that ids are unique; keeps the ids only."""
    kind = dataset_kind(path)
    reader = TestReader(path)
    source: PromptfooSource | None = read_promptfoo(path, _document(path)) if kind == PROMPTFOO else None
    ids: set[str] = set()
    count = 0
    has_expected = False
    for case in source.cases if source is not None else iter_cases(path, kind, reader, scorer):
        if case.id in ids:
            first = next(c.row for c in iter_cases(path, kind, TestReader(path), scorer) if c.id == case.id)
            _duplicate(path, case.id, first, case.row)
        ids.add(case.id)
        count += 1
        has_expected = has_expected or case.expected is not None
    unsupported, notes = (source.unsupported, source.notes) if source is not None else (reader.unsupported, _notes(reader))
    return DatasetScan(path, count, has_expected, kind in (PROMPTFOO, PROMPTFOO_CSV) and count > 0, unsupported, kind, notes, scorer,
                       source is not None and source.conversation)


def dataset_kind(path: Path) -> str:
    """plain, promptfoo (a configuration or a list of tests), promptfoo-csv or inspect."""
    suffix = _suffix(path)
    if suffix == ".csv":
        first = next(csv_rows(path), None)
        if first is not None and is_promptfoo_csv(first):
            return PROMPTFOO_CSV
        return INSPECT if is_inspect_row(first) else PLAIN
    if suffix in (".jsonl", ".ndjson"):
        first = next(jsonl_rows(path), None)
        if is_inspect_row(first):
            return INSPECT
        promptfoo = first is not None and all(is_test_list([r]) for r in jsonl_rows(path))  # stops at the first other row
        return PROMPTFOO if promptfoo else PLAIN
    data = _document(path)
    if is_config(data) or is_test_list(data):
        return PROMPTFOO
    return INSPECT if isinstance(data, list) and data and is_inspect_row(data[0]) else PLAIN


def iter_cases(path: Path, kind: str, reader: TestReader | None = None, scorer: str = "includes") -> Iterator[Case]:
    """The cases of `path` as its rows are read (ids not checked for duplicates: `scan_dataset` does)."""
    reader = reader or TestReader(path)
    if kind == PROMPTFOO:
        yield from read_promptfoo(path, _document(path)).cases
    elif kind == PROMPTFOO_CSV:
        yield from csv_cases(path, csv_rows(path), reader)
    elif kind == INSPECT:
        seen: dict[str, int] = {}
        for n, row in enumerate(iter_rows(path), 1):
            if not is_inspect_row(row):
                raise UserFacingError(f"{path.name} row {n} is not an Inspect sample (`input` with `target` or `choices`), "
                                      "as the first row is.")
            case = inspect_case(path, row, n, scorer, reader.note)
            seen[case.id] = seen.get(case.id, 0) + 1
            if seen[case.id] > 1 and row.get("id") in (None, ""):  # identical samples stay separate cases
                case.id = f"{case.id} ({seen[case.id]})"
            yield case
    else:
        for n, row in enumerate(iter_rows(path), 1):
            yield _case(path, row, n)


def iter_rows(path: Path) -> Iterator[Any]:
    """The rows of a dataset file, one at a time: CSV and JSON Lines as they are read, a JSON
    or YAML document whole (through jsonio's size cap)."""
    suffix = _suffix(path)
    if suffix == ".csv":
        yield from csv_rows(path)
    elif suffix in (".jsonl", ".ndjson"):
        yield from jsonl_rows(path)
    else:
        data = _document(path)
        if isinstance(data, dict) and isinstance(data.get("tests"), list):
            data = data["tests"]
        if not isinstance(data, list):
            raise UserFacingError(f"{path.name} must hold a list of cases (or an object with `tests:`).")
        yield from data


def _document(path: Path) -> Any:
    """A JSON or YAML dataset file's data (a JSON Lines file's rows as a list)."""
    suffix = _suffix(path)
    if suffix in (".jsonl", ".ndjson"):
        return list(jsonl_rows(path))
    try:
        raw = read_file_bytes(path)
    except OSError as exc:
        raise UserFacingError(f"Could not read the dataset {path}: {exc.strerror or exc}.") from None
    if suffix == ".json":
        return loads_located(raw, path)
    import yaml

    try:
        return load_yaml(raw.decode("utf-8-sig"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise UserFacingError(f"{path.name} is not valid YAML ({exc}).") from None


def _duplicate(path: Path, case_id: str, first: int, row: int) -> None:
    raise UserFacingError(f"{path.name}: rows {first} and {row} have the same id {case_id!r}.",
                          hint="Give every row a unique `id` (identical rows without ids get the same one).")


def _finish(path: Path, cases: list[Case]) -> list[Case]:
    seen: dict[str, int] = {}
    for case in cases:
        if case.id in seen:
            _duplicate(path, case.id, seen[case.id], case.row)
        seen[case.id] = case.row
    return cases


def _case(path: Path, row: Any, n: int) -> Case:
    where = f"{path.name} row {n}"
    if not isinstance(row, dict):
        raise UserFacingError(f"{where} is not an object of column: value.")
    rid = row.get("id")
    case_id = str(rid).strip() if rid not in (None, "") else content_id(row)
    expected = row.get("expected")
    values = {k: v for k, v in row.items() if k not in RESERVED}
    if isinstance(row.get("metadata"), dict):
        values.update({k: v for k, v in row["metadata"].items() if k not in values})
    return Case(case_id, values, None if expected in (None, "") else value_text(expected),
                parse_asserts(row.get("assert"), where), threshold_value(row.get("threshold"), where),
                value_text(row.get("description") or ""), n)


def notes_message(dataset: Dataset | DatasetScan) -> str | None:
    """What of `dataset` runs differently from the tool it was written for (one line each); None if nothing."""
    if not dataset.notes:
        return None
    return f"Notes on {dataset.path.name}:\n" + "\n".join(f"  - {n}" for n in dataset.notes)


def unsupported_message(dataset: Dataset | DatasetScan) -> str | None:
    """The promptfoo assertion types of `dataset` we do not run, with their cases; None if none."""
    if not dataset.unsupported:
        return None
    parts = [f"{kind} (cases {', '.join(ids[:5])}{'…' if len(ids) > 5 else ''})" for kind, ids in sorted(dataset.unsupported.items())]
    return f"{dataset.path.name} uses assertion types llmspace does not run: " + "; ".join(parts) + "."
