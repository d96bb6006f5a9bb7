"""The order test files go to pytest-xdist's workers in (tests/support/file_order.py): longest
first by the snapshot, unknown files by their number of tests, a file's tests kept together and
in their order; and the committed snapshot is one it can read, naming files that exist."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support import file_order

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Item:
    nodeid: str


def _files(items: list[Item]) -> list[str]:
    seen: list[str] = []
    for item in items:
        name = file_order.file_of(item.nodeid)
        if name not in seen:
            seen.append(name)
    return seen


def test_the_longest_file_goes_first_and_each_files_tests_stay_together_in_their_order() -> None:
    items = [Item("tests/a.py::one"), Item("tests/b.py::one"), Item("tests/a.py::two"),
             Item("tests/c.py::one"), Item("tests/c.py::two"), Item("tests/c.py::three"), Item("tests/d.py::one")]
    ordered = file_order.longest_first(items, {"tests/b.py": 250.0, "tests/d.py": 40.0})
    assert _files(ordered) == ["tests/b.py", "tests/d.py", "tests/c.py", "tests/a.py"]  # c: 3 unknown tests, a: 2
    assert [i.nodeid for i in ordered if i.nodeid.startswith("tests/c.py")] == [
        "tests/c.py::one", "tests/c.py::two", "tests/c.py::three"]
    assert sorted(i.nodeid for i in ordered) == sorted(i.nodeid for i in items)  # every test still runs


def test_files_of_equal_weight_keep_their_collection_order() -> None:
    items = [Item("tests/x.py::t"), Item("tests/y.py::t"), Item("tests/z.py::t")]
    assert _files(file_order.longest_first(items, {})) == ["tests/x.py", "tests/y.py", "tests/z.py"]


def test_a_missing_or_malformed_snapshot_orders_by_number_of_tests(tmp_path: Path) -> None:
    assert file_order.snapshot(tmp_path / "none.json") == {}
    (tmp_path / "bad.json").write_text("[1, 2", encoding="utf-8")
    assert file_order.snapshot(tmp_path / "bad.json") == {}
    (tmp_path / "odd.json").write_text('{"tests/a.py": "slow", "tests/b.py": 3}', encoding="utf-8")
    assert file_order.snapshot(tmp_path / "odd.json") == {"tests/b.py": 3.0}


def test_the_committed_snapshot_names_test_files_that_exist() -> None:
    seconds = file_order.snapshot()
    assert len(seconds) >= 10
    missing = [name for name in seconds if not (ROOT / name).is_file()]
    assert missing == [], f"remove or refresh (LLMSPACE_TEST_DURATIONS_OUT=FILE make test): {missing}"
