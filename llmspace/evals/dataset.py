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

promptfoo test files (a list of `{vars, assert, description, threshold}`, or an object with
`tests:`) are recognised by their `vars` key. A `file://` value is replaced by the text of
that file, relative to the test file and kept inside its folder. Assertion types we do not
support are collected (`unsupported_promptfoo`) so the caller can list them before anything
runs. All files are read through `jsonio` (size cap, no devices).

CSV and JSON Lines are read row by row (`iter_rows`), so a run over a million rows holds one
row at a time, plus the set of ids the scan checks for duplicates; a JSON or YAML file is one
document and is read whole.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import UserFacingError
from ..jsonio import load_yaml, loads_located, open_regular_file, read_file_bytes
from .assertions import TYPES, Assertion, parse_assertion

RESERVED = ("id", "expected", "assert", "threshold", "description", "vars", "metadata", "options")
SUFFIXES = (".csv", ".jsonl", ".ndjson", ".json", ".yaml", ".yml")
CSV_CELL_MAX = 32 * 1024 * 1024  # characters in one CSV cell (the csv module's own limit is 131,072)


@dataclass
class Case:
    id: str
    values: dict[str, Any]  # variables and metadata, as read
    expected: str | None = None
    assertions: list[Assertion] = field(default_factory=list)
    threshold: float | None = None
    description: str = ""
    row: int = 0  # 1-based position in the file (for messages)

    def variables_for(self, names: set[str]) -> dict[str, str]:
        """The values that fill the thread's variables (`names`), as text."""
        return {k: _text(v) for k, v in self.values.items() if k in names}


@dataclass
class Dataset:
    path: Path
    cases: list[Case]
    unsupported: dict[str, list[str]] = field(default_factory=dict)  # promptfoo type -> case ids


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def content_id(row: dict[str, Any]) -> str:
    """A stable id for a row without one: a hash of its content (key order ignored)."""
    data = json.dumps(row, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return "h" + hashlib.sha256(data.encode("utf-8")).hexdigest()[:11]


@dataclass
class DatasetScan:
    """What one streaming pass over a dataset found (every row read and checked, ids unique);
    `cases()` reads the file again, one case at a time."""

    path: Path
    count: int
    has_expected: bool  # some case has an `expected`
    promptfoo: bool
    unsupported: dict[str, list[str]] = field(default_factory=dict)

    def cases(self) -> Iterator[Case]:
        return iter_cases(self.path, self.promptfoo)


def _suffix(path: Path) -> str:
    if not path.is_file():
        raise UserFacingError(f"The dataset {path} does not exist.", hint="Check the path (relative paths start at the evaluation file's folder).")
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise UserFacingError(f"{path.name}: datasets are CSV, JSON Lines, JSON or YAML files ({', '.join(SUFFIXES)}).")
    return suffix


def load_dataset(path: Path) -> Dataset:
    """Every case in memory (the app's preview and small files; a run streams: `scan_dataset`)."""
    rows = list(iter_rows(path))
    if rows and all(_is_promptfoo_row(r) for r in rows):
        return _promptfoo(path, rows)
    return Dataset(path, _cases(path, rows))


def _is_promptfoo_row(row: Any) -> bool:
    return isinstance(row, dict) and isinstance(row.get("vars"), dict)


def scan_dataset(path: Path) -> DatasetScan:
    """Read every case once, row by row, checking each and that ids are unique; keeps the ids only."""
    suffix = _suffix(path)
    promptfoo = suffix != ".csv" and all(_is_promptfoo_row(r) for r in iter_rows(path))  # stops at the first other row
    unsupported: dict[str, list[str]] = {}
    ids: set[str] = set()
    count = 0
    has_expected = False
    for case in iter_cases(path, promptfoo, unsupported):
        if case.id in ids:
            first = next(c.row for c in iter_cases(path, promptfoo) if c.id == case.id)
            _duplicate(path, case.id, first, case.row)
        ids.add(case.id)
        count += 1
        has_expected = has_expected or case.expected is not None
    return DatasetScan(path, count, has_expected, promptfoo and count > 0, unsupported)


def iter_cases(path: Path, promptfoo: bool, unsupported: dict[str, list[str]] | None = None) -> Iterator[Case]:
    """The cases of `path` as its rows are read (ids not checked for duplicates: `scan_dataset` does)."""
    for n, row in enumerate(iter_rows(path), 1):
        yield _promptfoo_case(path, row, n, {} if unsupported is None else unsupported) if promptfoo else _case(path, row, n)


def iter_rows(path: Path) -> Iterator[Any]:
    """The rows of a dataset file, one at a time: CSV and JSON Lines as they are read, a JSON
    or YAML document whole (through jsonio's size cap)."""
    suffix = _suffix(path)
    if suffix == ".csv":
        yield from _csv_rows(path)
    elif suffix in (".jsonl", ".ndjson"):
        yield from _jsonl_rows(path)
    else:
        try:
            raw = read_file_bytes(path)
        except OSError as exc:
            raise UserFacingError(f"Could not read the dataset {path}: {exc.strerror or exc}.") from None
        yield from _rows(path, raw, suffix)


def _open(path: Path) -> BinaryIO:
    try:
        return open_regular_file(path)
    except OSError as exc:
        raise UserFacingError(f"Could not read the dataset {path}: {exc.strerror or exc}.") from None


def _csv_rows(path: Path) -> Iterator[dict[str, Any]]:
    with _open(path) as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
        csv.field_size_limit(CSV_CELL_MAX)
        reader = csv.DictReader(text)
        try:
            for row in reader:
                if None in row:
                    raise UserFacingError(f"{path.name} row {reader.line_num - 1} has more cells than there are columns.")
                yield {k.strip(): v for k, v in row.items() if k is not None and k.strip()}
        except UnicodeDecodeError:
            raise UserFacingError(f"{path.name} is not UTF-8 text.") from None
        except csv.Error as exc:
            if "field larger than field limit" in str(exc):
                raise UserFacingError(f"{path.name} line {reader.line_num + 1}: a cell is larger than {CSV_CELL_MAX:,} characters, "
                                      "the most a dataset cell may hold.", hint="Shorten that cell, or keep long texts "
                                      "in a JSON Lines dataset.") from None
            raise UserFacingError(f"{path.name} line {reader.line_num + 1} is not valid CSV ({exc}).") from None


def _jsonl_rows(path: Path) -> Iterator[Any]:
    with _open(path) as raw:
        for n, line in enumerate(raw, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except ValueError as exc:
                raise UserFacingError(f"{path.name} line {n} is not JSON ({exc}).") from None


def _rows(path: Path, raw: bytes, suffix: str) -> list[Any]:
    """The rows of a JSON or YAML document (a list, or an object with `tests:`)."""
    if suffix == ".json":
        data = loads_located(raw, path)
    else:
        import yaml

        try:
            data = load_yaml(raw.decode("utf-8-sig"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise UserFacingError(f"{path.name} is not valid YAML ({exc}).") from None
    if isinstance(data, dict) and isinstance(data.get("tests"), list):
        data = data["tests"]
    if not isinstance(data, list):
        raise UserFacingError(f"{path.name} must hold a list of cases (or an object with `tests:`).")
    return data


def _parse_asserts(value: Any, where: str) -> list[Assertion]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        import yaml

        try:
            value = load_yaml(value)
        except yaml.YAMLError as exc:
            raise UserFacingError(f"{where}: the `assert` cell is not JSON or YAML ({exc}).") from None
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise UserFacingError(f"{where}: `assert` must be a list of assertions.")
    return [parse_assertion(a, where) for a in value]


def _threshold(value: Any, where: str) -> float | None:
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UserFacingError(f"{where}: threshold must be a number from 0 to 1, not {value!r}.") from None
    if not 0 <= number <= 1:
        raise UserFacingError(f"{where}: threshold must be from 0 to 1, not {value!r}.")
    return number


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


def _cases(path: Path, rows: list[Any]) -> list[Case]:
    return _finish(path, [_case(path, row, n) for n, row in enumerate(rows, 1)])


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
    return Case(case_id, values, None if expected in (None, "") else _text(expected),
                _parse_asserts(row.get("assert"), where), _threshold(row.get("threshold"), where),
                _text(row.get("description") or ""), n)


# -- promptfoo -----------------------------------------------------------------------------


def inside_folder(path: Path, folder: Path) -> bool:
    """True when `path`, symbolic links resolved, is `folder` or lies in it (the rule for the
    files a dataset or an evaluation file may name: `file://` values, `dataset:`)."""
    target = Path(os.path.realpath(path))
    root = Path(os.path.realpath(folder))
    return target == root or root in target.parents


def _file_value(base: Path, value: Any, where: str) -> Any:
    if not isinstance(value, str) or not value.startswith("file://"):
        return value
    rel = value[len("file://"):]
    target = Path(os.path.realpath(base / rel))
    if not inside_folder(target, base):
        raise UserFacingError(f"{where}: {value} points outside the test file's folder ({os.path.realpath(base)}).",
                              hint="Keep the files a test file uses in its folder.")
    try:
        return read_file_bytes(target).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserFacingError(f"{where}: could not read {value} ({getattr(exc, 'strerror', None) or exc}).") from None


def _promptfoo(path: Path, tests: list[Any]) -> Dataset:
    unsupported: dict[str, list[str]] = {}
    cases = [_promptfoo_case(path, test, n, unsupported) for n, test in enumerate(tests, 1)]
    return Dataset(path, _finish(path, cases), unsupported)


def _promptfoo_case(path: Path, test: Any, n: int, unsupported: dict[str, list[str]]) -> Case:
    base = path.parent
    where = f"{path.name} test {n}"
    values = {str(k): _file_value(base, v, where) for k, v in test["vars"].items()}
    meta = test.get("metadata") if isinstance(test.get("metadata"), dict) else {}
    rid = test.get("id") or meta.get("id")
    case_id = str(rid) if rid else content_id({"vars": values, "assert": test.get("assert"), "description": test.get("description")})
    raw_asserts = test.get("assert") or []
    if not isinstance(raw_asserts, list):
        raise UserFacingError(f"{where}: `assert` must be a list.")
    supported = []
    for a in raw_asserts:
        kind = a.get("type") if isinstance(a, dict) else None
        base_kind = kind[4:] if isinstance(kind, str) and kind.startswith("not-") else kind
        if base_kind not in TYPES:
            unsupported.setdefault(str(kind), []).append(case_id)
            continue
        code = base_kind in ("javascript", "python")  # file://x.py:fn names code the assertion runs: kept as written
        a = {k: _file_value(base, v, where) if k == "value" and not code else v for k, v in a.items()
             if k in ("type", "value", "weight", "threshold")}
        supported.append(a)
    expected = values.pop("expected", None) if "expected" in values else None
    return Case(case_id, values, None if expected is None else _text(expected), _parse_asserts(supported, where),
                _threshold(test.get("threshold"), where), _text(test.get("description") or ""), n)


def unsupported_message(dataset: Dataset | DatasetScan) -> str | None:
    """The promptfoo assertion types of `dataset` we do not run, with their cases; None if none."""
    if not dataset.unsupported:
        return None
    parts = [f"{kind} (cases {', '.join(ids[:5])}{'…' if len(ids) > 5 else ''})" for kind, ids in sorted(dataset.unsupported.items())]
    return f"{dataset.path.name} uses assertion types llmspace does not run: " + "; ".join(parts) + "."
