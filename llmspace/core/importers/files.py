"""Import files into the workspace: each source becomes new thread files in one folder.

`import_files(paths, workspace, into)` reads each file, parses it (core/importers/detect.py)
and writes every thread found as a new file named after the source stem, de-duplicated
(`stem.json`, `stem-1.json`, …; bidi controls are removed from the stem and an invalid stem
becomes `untitled`). One bad file never stops the others; each gets an `ImportOutcome` with
what was created or why it was skipped, and a warning for each new thread whose templates
or file variables would read local files when run (`core/templating/file_reads.py`): an imported
thread is someone else's text.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InvalidName, UserFacingError
from ...jsonio import UnreadableFileError, read_file_bytes
from ..names import strip_bidi, validate_stem
from ..templating.file_reads import local_file_reads
from ..workspace import Workspace
from .detect import JSONL_SUFFIXES, parse_import_detailed
from .foreign import ModelResolver

log = logging.getLogger("llmspace.import")


@dataclass
class ImportOutcome:
    """What importing one source file did."""

    source: Path
    created: list[str] = field(default_factory=list)  # workspace paths of the new threads
    skipped: str | None = None  # why nothing was imported
    problems: list[str] = field(default_factory=list)  # parts left out (e.g. bad JSONL lines)
    # e.g. "thread a.json would read these local files when run: /etc/passwd, ~/.ssh/id_rsa"
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.created)


class ImportOutcomes(list[ImportOutcome]):
    """The outcomes of one import, in source order, plus totals for callers that only need those."""

    @property
    def created(self) -> list[str]:
        """Every workspace path created, across all sources."""
        return [rel for o in self for rel in o.created]

    @property
    def skipped(self) -> list[ImportOutcome]:
        """The sources from which nothing was imported."""
        return [o for o in self if not o.created]


def target_stem(source: Path) -> str:
    """The file stem for threads imported from `source`, without bidi controls (`untitled`
    when not a valid name)."""
    name = source.name
    for suffix in (".json", *JSONL_SUFFIXES):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            break
    else:
        name = source.stem or name
    name = strip_bidi(name)  # `invoice\u202egpj.json` must not pose as another name
    name = name.lstrip(".")  # `.hidden.json` becomes `hidden.json`: a dot-name would never be listed
    try:
        return validate_stem(name)
    except InvalidName:
        return "untitled"


def import_files(paths: list[Path], workspace: Workspace, into: str = "",
                 resolve_model: ModelResolver | None = None) -> ImportOutcomes:
    """Import each file into the folder `into` (created when missing); one outcome per file.

    The result is a list of `ImportOutcome`s; its `.created` lists every new path."""
    workspace.check_new_folder(into)  # refuse a target outside the workspace or a bad name before touching anything
    outcomes = ImportOutcomes()
    for path in paths:
        path = Path(path)
        outcome = ImportOutcome(source=path)
        outcomes.append(outcome)
        try:
            data = read_file_bytes(path)  # never blocks on a named pipe or device; size capped
        except UnreadableFileError as exc:
            outcome.skipped = exc.reason
            continue
        try:
            result = parse_import_detailed(data, path.name, resolve_model)
            outcome.problems.extend(result.problems)
            stem = target_stem(path)
            for thread in result.threads:
                try:
                    rel = workspace.create_thread(into, stem, thread)
                except UserFacingError as exc:
                    outcome.problems.append(f"could not write a thread: {exc}")
                    continue
                outcome.created.append(rel)
                reads = local_file_reads(thread)
                if reads:
                    outcome.warnings.append(reads.describe(rel))
            if not outcome.created:
                outcome.skipped = result.skip or "; ".join(outcome.problems) or "nothing to import"
        except Exception as exc:  # one bad file never stops the others
            log.exception("import of %s failed", path)
            outcome.skipped = f"internal error ({type(exc).__name__}); details in the log"
    return outcomes
