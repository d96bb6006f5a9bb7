"""The rows of CSV and JSON Lines datasets, read one at a time (a million-row file holds one
row in memory): `csv_rows(path)` gives each row as a dict of column: text, `jsonl_rows(path)`
each line's JSON value. Files are opened through `jsonio` (regular files only).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import UserFacingError
from ..jsonio import open_regular_file

CSV_CELL_MAX = 32 * 1024 * 1024  # characters in one CSV cell (the csv module's own limit is 131,072)


def _open(path: Path) -> BinaryIO:
    try:
        return open_regular_file(path)
    except OSError as exc:
        raise UserFacingError(f"Could not read the dataset {path}: {exc.strerror or exc}.") from None


def csv_rows(path: Path) -> Iterator[dict[str, Any]]:
    with _open(path) as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
        csv.field_size_limit(CSV_CELL_MAX)
        reader = csv.DictReader(text)
        try:
            for row in reader:
                if None in row:
                    extra = ", ".join(repr(c) for c in row[None])
                    raise UserFacingError(f"{path.name} row {reader.line_num - 1} has more cells than there are columns "
                                          f"(the extra: {extra:.80}); nothing was run.",
                                          hint="Quote a cell that holds a comma (\"Petra, Jordan\"), or add the missing "
                                               "column; promptfoo's CSV reader refuses such a row too.")
                yield {k.strip(): v for k, v in row.items() if k is not None and k.strip()}
        except UnicodeDecodeError:
            raise UserFacingError(f"{path.name} is not UTF-8 text.") from None
        except csv.Error as exc:
            if "field larger than field limit" in str(exc):
                raise UserFacingError(f"{path.name} line {reader.line_num + 1}: a cell is larger than {CSV_CELL_MAX:,} characters, "
                                      "the most a dataset cell may hold.", hint="Shorten that cell, or keep long texts "
                                      "in a JSON Lines dataset.") from None
            raise UserFacingError(f"{path.name} line {reader.line_num + 1} is not valid CSV ({exc}).") from None


def jsonl_rows(path: Path) -> Iterator[Any]:
    with _open(path) as raw:
        for n, line in enumerate(raw, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except ValueError as exc:
                raise UserFacingError(f"{path.name} line {n} is not JSON ({exc}).") from None


