"""Measures how many tests of a folder of promptfoo configurations llmspace runs unchanged:
each configuration (a YAML or JSON file with `tests:`) is read as `llmspace eval new` reads
it (`evals.dataset.scan_dataset`, no model needed), and each of its tests is counted as

- unchanged: its file is read, no assertion of the file has a type llmspace does not run, and
  so the test runs as written (notes aside: keys llmspace runs differently, such as `prompts:`
  and `providers:`, are counted by key separately); with `--skip-unsupported`, a test of such
  a file whose own assertions are all run counts too (the second figure);
- an unsupported type: the test has an assertion of a type llmspace does not run;
- refused: the file is refused, or the test's own keys are (the key each refused test holds,
  and the key its file was refused for, are counted);
- remote, not fetched here: an entry of `tests:` naming a remote source (huggingface://,
  langfuse://) that cannot be fetched on this machine (one test per entry); it is not counted
  as refused, and the other tests of its file count as if it had been fetched. The figures are
  printed twice: with these tests left out of "unchanged", and counted as loaded (unchanged).

A test of a source (a tests file, or a configuration's own list) of 100 tests or more is in a
bulk dataset; the figures are given for all tests and for the tests outside bulk datasets.
Files are counted as promptfoo counts tests: one per entry of `tests:` (and one per CSV row),
before list variables are expanded.

    .venv/bin/python scripts/promptfoo_examples.py /tmp/pf_examples [--json out.json] [--list]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from llmspace.errors import UserFacingError
from llmspace.evals import promptfoo_config as pc
from llmspace.evals.dataset import scan_dataset
from llmspace.evals.promptfoo_keys import CONFIG_KEYS, refuse_unknown
from llmspace.evals.promptfoo_tests import TestReader
from llmspace.jsonio import load_yaml, write_json_atomic

BULK = 100
_KEY_PATTERNS = (r"uses `([^`]+)`", r"has the key '([^']+)'", r"the column '([^']+)'", r"(`[a-zA-Z$-]+`)")


@dataclass
class Tally:
    tests: int = 0
    unchanged: int = 0  # the file runs as it is, and the test with it
    unchanged_skipping: int = 0  # the test runs whole when the file is run with --skip-unsupported
    unsupported: int = 0
    refused: int = 0
    remote: int = 0  # entries of remote sources that cannot be fetched here


@dataclass
class Figures:
    all: Tally = field(default_factory=Tally)
    outside_bulk: Tally = field(default_factory=Tally)
    configs: int = 0
    configs_loaded: int = 0  # scan_dataset read the file without an error
    configs_clean: int = 0  # … and with no unsupported assertion type
    refused_by: Counter[str] = field(default_factory=Counter)  # key -> tests that hold it
    refused_with_file: Counter[str] = field(default_factory=Counter)  # key -> tests refused with their file
    unsupported_by: Counter[str] = field(default_factory=Counter)  # assertion type -> tests
    noted_by: Counter[str] = field(default_factory=Counter)  # key -> tests
    remote_by: Counter[str] = field(default_factory=Counter)  # remote source (no query) -> entries not fetched
    per_file: list[dict[str, Any]] = field(default_factory=list)


def reason_key(message: str) -> str:
    """The key, column or type a refusal names (else the message's start)."""
    for pattern in _KEY_PATTERNS:
        m = re.search(pattern, message)
        if m:
            return m.group(1).strip("`")
    text = re.sub(r"^[^:]+: ", "", message)
    return text[:70]


def not_fetched(message: str) -> bool:
    """A remote source this machine cannot fetch: no network to it, or no Langfuse keys."""
    return message.startswith("Could not fetch") or "needs Langfuse keys" in message


def _document(path: Path) -> Any:
    try:
        if path.suffix.lower() == ".json":
            return json.loads(path.read_text(encoding="utf-8"))
        return load_yaml(path.read_text(encoding="utf-8"))
    except Exception:  # not ours to judge: a file that is no configuration is skipped
        return None


def configurations(folder: Path) -> list[Path]:
    out = []
    for path in sorted(folder.rglob("*")):
        if path.suffix.lower() in (".yaml", ".yml", ".json") and path.is_file():
            data = _document(path)
            if isinstance(data, dict) and "tests" in data and data["tests"]:
                out.append(path)
    return out


def _sources(path: Path, tests: Any) -> list[tuple[str, list[tuple[Any, str]] | None, str]]:
    """(source name, its tests with where, or None when the source itself is refused, reason)."""
    out: list[tuple[str, list[tuple[Any, str]] | None, str]] = []
    inline: list[tuple[Any, str]] = []
    for n, item in enumerate(tests if isinstance(tests, list) else [tests], 1):
        if isinstance(item, str):
            try:
                out.append((item, list(pc._test_files(path, item)), ""))
            except UserFacingError as exc:
                out.append((item, None, exc.message))
        else:
            inline.append((item, f"test {n}"))
    if inline:
        out.insert(0, (path.name, inline, ""))
    return out


def _count(source_tests: list[tuple[Any, str]]) -> int:
    return sum(len(t.rows) if isinstance(t, pc._CsvRows) else 1 for t, _ in source_tests)


def measure_file(path: Path, figures: Figures) -> None:
    data = _document(path)
    figures.configs += 1
    record: dict[str, Any] = {"file": str(path), "tests": 0}
    try:
        scan = scan_dataset(path)
        figures.configs_loaded += 1
        figures.configs_clean += not scan.unsupported
        record["loaded"] = True
    except UserFacingError as exc:
        record["loaded"] = False
        record["error"] = exc.message
    config_refusal = ""
    default, templates = data.get("defaultTest") or {}, data.get("assertionTemplates") or {}
    try:
        refuse_unknown(data, CONFIG_KEYS, "the configuration", path, "a configuration")
        if isinstance(default, str):
            default = pc.read_document(pc.confined(path.parent, default.removeprefix("file://"), path.name), path.name)
    except UserFacingError as exc:
        config_refusal = exc.message
    config_notes = [k for k in data if k in CONFIG_KEYS and CONFIG_KEYS[k][0] == "different"]
    reader = TestReader(path, default if isinstance(default, dict) else {}, templates if isinstance(templates, dict) else {})
    outcomes: list[tuple[bool, str, str]] = []  # (in bulk, outcome, key) per test
    for _name, source_tests, why in _sources(path, data["tests"]):
        size = 1 if source_tests is None else _count(source_tests)
        bulk = size >= BULK
        record["tests"] += size
        if source_tests is None and not config_refusal and pc.is_remote(_name) and not_fetched(why):
            outcomes += [(bulk, "remote", _name)]
            continue
        if source_tests is None or config_refusal:
            outcomes += [(bulk, "refused", reason_key(config_refusal or why))] * size
            continue
        for test, where in source_tests:
            rows = [(row, f"{where} row {n}") for n, row in enumerate(test.rows, 1)] if isinstance(test, pc._CsvRows) \
                else [(test, where)]
            for item, at in rows:
                outcomes.append((bulk, *_one(reader, path, test if isinstance(test, pc._CsvRows) else None, item, at)))
    file_refused = not record["loaded"] and not not_fetched(str(record.get("error", "")))
    file_unsupported = any(o == "unsupported" for _, o, _ in outcomes)
    for bulk, outcome, key in outcomes:
        tallies = [figures.all] + ([] if bulk else [figures.outside_bulk])
        for t in tallies:
            t.tests += 1
            if outcome == "remote":
                t.remote += 1
            elif file_refused or outcome == "refused":
                t.refused += 1
            elif outcome == "unsupported":
                t.unsupported += 1
            else:
                t.unchanged_skipping += 1
                t.unchanged += not file_unsupported
        if outcome == "remote":
            figures.remote_by[key.split("?")[0]] += 1
        elif outcome == "refused":
            figures.refused_by[key] += 1
        elif outcome == "unsupported":
            figures.unsupported_by[key] += 1
        elif file_refused:
            figures.refused_with_file[reason_key(record["error"])] += 1
        else:
            for note in set(key.split("\n")) - {""}:
                figures.noted_by[note] += 1
            for note in config_notes:
                figures.noted_by[note] += 1
    figures.per_file.append(record)


def _one(reader: TestReader, path: Path, csv: Any, item: Any, where: str) -> tuple[str, str]:
    """('unchanged' | 'unsupported' | 'refused', the key: refusal, type, or notes one a line)."""
    before_unsupported = {k: len(v) for k, v in reader.unsupported.items()}
    before_notes = dict(reader.notes)
    try:
        if csv is not None:
            test, _ = pc.csv_test(csv.path, item, 0)
            test.pop("__unused_config", None)
            reader.cases(test, where, csv.path.parent)
        else:
            reader.cases(item, where, path.parent)
    except UserFacingError as exc:
        return "refused", reason_key(exc.message)
    grown = [k for k, v in reader.unsupported.items() if len(v) > before_unsupported.get(k, 0)]
    if grown:
        return "unsupported", sorted(grown)[0]
    noted = [text for text, n in reader.notes.items() if n > before_notes.get(text, 0)]
    return "unchanged", "\n".join(re.split(r"[:(]", text, maxsplit=1)[0].strip() for text in noted)


def measure(folder: Path) -> Figures:
    figures = Figures()
    for path in configurations(folder):
        measure_file(path, figures)
    return figures


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f} %" if d else "-"


def report(f: Figures) -> str:
    lines = [(f"configurations with tests: {f.configs}; read by `eval new`: {f.configs_loaded}; "
             f"read with every assertion type run: {f.configs_clean}")]
    for label, t in (("all tests", f.all), ("outside bulk datasets (<100 tests)", f.outside_bulk)):
        lines.append(f"{label}: {t.tests}; unchanged {t.unchanged} ({_pct(t.unchanged, t.tests)}); with --skip-unsupported "
                     f"{t.unchanged_skipping} ({_pct(t.unchanged_skipping, t.tests)}); an unsupported type {t.unsupported}, "
                     f"refused {t.refused}, remote, not fetched here {t.remote}")
    for label, t in (("all tests", f.all), ("outside bulk datasets (<100 tests)", f.outside_bulk)):
        loaded = t.unchanged + t.remote
        lines.append(f"{label}, counting the {t.remote} remote test(s) not fetched here as loaded: unchanged {loaded} "
                     f"({_pct(loaded, t.tests)}); with --skip-unsupported {t.unchanged_skipping + t.remote} "
                     f"({_pct(t.unchanged_skipping + t.remote, t.tests)})")
    for title, counter in (("refused tests, by the key they hold", f.refused_by),
                           ("tests refused with their file, by the file's key", f.refused_with_file),
                           ("tests with an unsupported type, by type", f.unsupported_by),
                           ("remote sources not fetched here (one test per entry), by source", f.remote_by),
                           ("run with a note, by key", f.noted_by)):
        lines.append(f"{title}:")
        lines += [f"  {n:6d}  {key}" for key, n in counter.most_common(25)]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--json", type=Path, help="write the figures and each file's outcome here")
    parser.add_argument("--list", action="store_true", help="print each configuration's outcome")
    args = parser.parse_args(argv)
    figures = measure(args.folder)
    if args.list:
        for r in figures.per_file:
            print(("ok   " if r["loaded"] else "REFUSED ") + f"{r['tests']:5d} {r['file']}" + (f"\n      {r['error']}" if not r["loaded"] else ""))
    print(report(figures))
    if args.json:
        data = {"all": vars(figures.all), "outside_bulk": vars(figures.outside_bulk), "configs": figures.configs,
                "refused_by": dict(figures.refused_by), "refused_with_file": dict(figures.refused_with_file), "unsupported_by": dict(figures.unsupported_by),
                "noted_by": dict(figures.noted_by), "remote_by": dict(figures.remote_by), "files": figures.per_file}
        write_json_atomic(args.json, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
