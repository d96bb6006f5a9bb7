"""promptfoo's remote test sources, fetched once into a snapshot and read from it afterwards:
`huggingface://datasets/OWNER/NAME?split=…&config=…&limit=…` (a Hugging Face dataset's rows) and
`langfuse://traces?limit=…&userId=…` (a Langfuse project's traces, `evals/langfuse_tests.py`).

    if is_remote(spec):
        for test, where in remote_tests(spec, "promptfooconfig.yaml"): …   # promptfoo test objects
        snapshot_note(spec)                                                # where they are kept

Hugging Face: `evals/remote_sources.py` (the datasets server's `/rows`); Langfuse: `evals/langfuse_tests.py`.

Snapshot: the tests of a source are written once (through `jsonio`) to
`cache/remote-tests/<sha256 of the URL>.json` under the data root and read from there by every
later `eval new` and `eval run`, so a resumed run is offline and sees the same cases. Delete that
file to fetch the source again (the note printed with the evaluation names it). A source is capped
at `MAX_ROWS` tests and `MAX_BYTES` of tests; a larger one is refused, never kept in part.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from ..jsonio import read_json, write_json_atomic
from ..paths import DataRoot
from .langfuse_tests import fetch_langfuse
from .remote_sources import HF_PREFIX, LANGFUSE_PREFIX, fetch_huggingface, redacted

SNAPSHOT_VERSION = 1

# what llmspace does with each remote source (docs/promptfoo-compat.md "Remote test sources" lists the same)
SOURCES = {
    "huggingface://datasets/…": ("run", "a dataset's rows through the datasets server's `/rows`, each row's fields the vars"),
    "langfuse://traces": ("run differently", ("traces as tests with `input`, `output` and `__langfuse_*` vars; the models "
                          "answer `input` (the stored output is a var, not the answer checked)")),
}


def is_remote(spec: str) -> bool:
    return spec.startswith((HF_PREFIX, LANGFUSE_PREFIX + "?")) or spec == LANGFUSE_PREFIX


def snapshot_path(spec: str) -> Path:
    """Where the tests of the source `spec` are kept (under the data root's cache)."""
    digest = hashlib.sha256(spec.encode("utf-8")).hexdigest()
    return DataRoot.from_env().cache / "remote-tests" / f"{digest}.json"


def snapshot_note(spec: str) -> str:
    note = (f"the tests of {redacted(spec)} are the snapshot {snapshot_path(spec)} (fetched once); "
            "delete that file to fetch them again")
    if spec.startswith(LANGFUSE_PREFIX):
        note += "; the models answer each trace's `input` (promptfoo checks the stored output, here the variable `output`)"
    return note


def remote_tests(spec: str, config_name: str) -> Iterator[tuple[Any, str]]:
    """The tests of a remote source with where each came from: the snapshot's, fetched first if there is none."""
    path = snapshot_path(spec)
    tests = _read_snapshot(path, spec)
    if tests is None:
        tests = fetch(spec, config_name)
        write_json_atomic(path, {"version": SNAPSHOT_VERSION, "url": spec, "fetchedAt": int(time.time() * 1000),
                                 "tests": tests})
    label = redacted(spec)
    for n, test in enumerate(tests, 1):
        yield test, f"{label} test {n}"


def _read_snapshot(path: Path, spec: str) -> list[Any] | None:
    if not path.is_file():
        return None
    data = read_json(path)
    if not isinstance(data, dict) or data.get("url") != spec or not isinstance(data.get("tests"), list):
        raise UserFacingError(f"The snapshot {path} of {redacted(spec)} is damaged.",
                              hint="Delete it; the next `eval new` or `eval run` fetches the tests again.")
    return list(data["tests"])


def fetch(spec: str, config_name: str) -> list[dict[str, Any]]:
    """The source's tests fetched now (no snapshot read or written)."""
    if spec.startswith(HF_PREFIX):
        return fetch_huggingface(spec, config_name)
    return fetch_langfuse(spec, config_name)


class RemoteNote:
    """A note for the evaluation's summary, yielded among a configuration's tests (where the snapshot is)."""

    def __init__(self, spec: str) -> None:
        self.text = snapshot_note(spec)
