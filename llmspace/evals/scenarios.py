"""The scenarios of a conversation dataset checked row by row before an evaluation file names it,
each problem naming the row's line in the file; and whether a dataset looks like scenarios.

    found = read_scenarios(Path("scenarios.yaml"), default_turns=10)   # [(case id, Scenario), …]
    looks_like_scenarios(Path("scenarios.yaml"), {"question"})           # True: rows with user:/opening:

A scenario row is an object with `user` ({persona, goal, known, unknown, style}, or a goal as
text) or `opening`; it is read by `conversation_setup.scenario_of`, the reader `eval run` uses.
Lines are those of YAML list items, JSON Lines lines and CSV records; a JSON array's rows are
named by their position (JSON gives no line).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Iterator
from pathlib import Path

from ..errors import UserFacingError
from ..jsonio import open_regular_file, read_file_bytes
from .conversation_setup import Scenario, scenario_of
from .dataset import INSPECT, PLAIN, RESERVED, content_id, dataset_kind, iter_rows

SCENARIO_HINT = ("A scenario is an object with `user` (persona, goal, known, unknown, style) or `opening` "
                 "(docs/conversations.md).")
SNIFF_ROWS = 20  # rows read to tell a scenarios file from test cases


def row_lines(path: Path) -> Iterator[int | None]:
    """The line each row of `path` starts on, in row order (None where the format gives none)."""
    suffix = path.suffix.lower()
    try:
        if suffix in (".jsonl", ".ndjson"):
            with open_regular_file(path) as raw:
                yield from (n for n, line in enumerate(raw, 1) if line.strip())
            return
        if suffix == ".csv":
            with open_regular_file(path) as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
                reader = csv.reader(text)
                next(reader, None)  # the header
                start = reader.line_num + 1
                for _row in reader:
                    yield start
                    start = reader.line_num + 1
            return
        if suffix in (".yaml", ".yml"):
            yield from _yaml_lines(read_file_bytes(path).decode("utf-8-sig"))
            return
    except (OSError, UnicodeDecodeError, csv.Error):
        pass
    yield from itertools.repeat(None)


def _yaml_lines(text: str) -> Iterator[int | None]:
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)  # nodes only: aliases are not expanded
    except yaml.YAMLError:
        node = None
    if isinstance(node, yaml.MappingNode):
        node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == "tests"), None)
    if isinstance(node, yaml.SequenceNode):
        yield from (item.start_mark.line + 1 for item in node.value)
    yield from itertools.repeat(None)


def _where(path: Path, n: int, line: int | None) -> str:
    return f"{path.name} line {line}" if line is not None else f"{path.name} row {n}"


def read_scenarios(path: Path, default_turns: int) -> list[tuple[str, Scenario]]:
    """Every row of `path` read as a scenario (case id, scenario); UserFacingError naming the
    line of the first row that is not one."""
    kind = dataset_kind(path)
    if kind not in (PLAIN,):
        raise UserFacingError(f"{path.name} holds {'Inspect samples' if kind == INSPECT else 'promptfoo tests'}, not "
                              "conversation scenarios.", hint=SCENARIO_HINT)
    found: list[tuple[str, Scenario]] = []
    for n, (row, line) in enumerate(zip(iter_rows(path), row_lines(path), strict=False), 1):
        where = _where(path, n, line)
        if not isinstance(row, dict):
            raise UserFacingError(f"{where} is not a scenario: it is not an object.", hint=SCENARIO_HINT)
        if row.get("user") in (None, "") and row.get("opening") in (None, ""):
            raise UserFacingError(f"{where} is not a scenario: it has neither `user` nor `opening`.", hint=SCENARIO_HINT)
        values = {k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for k, v in row.items()
                  if k not in RESERVED}
        scenario = scenario_of(values, default_turns, where)
        rid = row.get("id")
        found.append((str(rid).strip() if rid not in (None, "") else content_id(row), scenario))
    return found


def looks_like_scenarios(path: Path, variables: set[str]) -> bool:
    """True when the first rows of `path` all have `user` or `opening` and the thread (which
    uses `variables`) fills no variable of those names: a scenarios file given as test cases."""
    if {"user", "opening"} & variables:
        return False
    try:
        rows = list(itertools.islice(iter_rows(path), SNIFF_ROWS))
    except UserFacingError:
        return False
    return bool(rows) and all(isinstance(r, dict) and (r.get("user") not in (None, "") or r.get("opening") not in (None, ""))
                              for r in rows)

