"""One test case of a dataset evaluation (`Case`) and the helpers every dataset reader
shares: value text, content ids, thresholds, `file://` values and documents kept inside a
folder (symbolic links resolved), and `assert` cells.

    case = Case("q1", {"question": "2 + 2?"}, expected="4")
    text = file_value(folder, "file://context.txt", "tests.yaml test 3")   # the file's text
    data = read_document(folder / "vars.yaml", "tests.yaml test 3")        # a YAML or JSON file

All files are read through `jsonio` (size cap, no devices).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from ..jsonio import load_yaml, loads_located, read_file_bytes
from .assertions import Assertion, parse_assertion


@dataclass
class Case:
    id: str
    values: dict[str, Any]  # variables and metadata, as read
    expected: str | None = None
    assertions: list[Assertion] = field(default_factory=list)
    threshold: float | None = None
    description: str = ""
    row: int = 0  # 1-based position in the file (for messages)
    lenient: bool = False  # a variable the case leaves undefined is the empty string (promptfoo, Inspect)
    messages: list[dict[str, str]] = field(default_factory=list)  # sent after the thread's: {"role", "text"}
    messages_unless: str | None = None  # the messages are not sent when the thread uses this variable (it carries them)

    def variables_for(self, names: set[str]) -> dict[str, str]:
        """The values that fill the thread's variables (`names`), as text."""
        return {k: value_text(v) for k, v in self.values.items() if k in names}


def value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def content_id(row: dict[str, Any]) -> str:
    """A stable id for a row without one: a hash of its content (key order ignored)."""
    data = json.dumps(row, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return "h" + hashlib.sha256(data.encode("utf-8")).hexdigest()[:11]


def threshold_value(value: Any, where: str) -> float | None:
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UserFacingError(f"{where}: threshold must be a number from 0 to 1, not {value!r}.") from None
    if not 0 <= number <= 1:
        raise UserFacingError(f"{where}: threshold must be from 0 to 1, not {value!r}.")
    return number


def parse_asserts(value: Any, where: str) -> list[Assertion]:
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


def inside_folder(path: Path, folder: Path) -> bool:
    """True when `path`, symbolic links resolved, is `folder` or lies in it (the rule for the
    files a dataset or an evaluation file may name: `file://` values, `dataset:`)."""
    target = Path(os.path.realpath(path))
    root = Path(os.path.realpath(folder))
    return target == root or root in target.parents


def confined(base: Path, rel: str, where: str) -> Path:
    """`base / rel`, refused unless it lies inside `base` (symbolic links resolved)."""
    target = Path(os.path.realpath(base / rel))
    if not inside_folder(target, base):
        raise UserFacingError(f"{where}: {rel} points outside the test file's folder ({os.path.realpath(base)}).",
                              hint="Keep the files a test file uses in its folder.")
    return target


def read_text(target: Path, where: str, shown: str) -> str:
    try:
        return read_file_bytes(target).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserFacingError(f"{where}: could not read {shown} ({getattr(exc, 'strerror', None) or exc}).") from None


def file_value(base: Path, value: Any, where: str) -> Any:
    """A `file://` value replaced by the text of that file (inside `base`); others unchanged."""
    if not isinstance(value, str) or not value.startswith("file://"):
        return value
    rel = value[len("file://"):]
    return read_text(confined(base, rel, where), where, value)


def read_document(path: Path, where: str) -> Any:
    """A JSON or YAML file's data (YAML unless it ends in .json)."""
    text = read_text(path, where, path.name)
    if path.suffix.lower() == ".json":
        return loads_located(text.encode("utf-8"), path)
    import yaml

    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        raise UserFacingError(f"{path.name} is not valid YAML ({exc}).") from None
