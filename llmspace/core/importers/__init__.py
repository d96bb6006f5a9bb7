"""Importers: foreign and native thread exports -> threads in the workspace.

Public API (what other packages use):
- `import_files(paths, workspace, into="") -> ImportOutcomes` — write new thread files; a list
  of `ImportOutcome` (source, created paths, skip reason, problems) with `.created` (all paths).
- `parse_import(data, name) -> list[Thread] | str` — threads in some bytes, or a skip reason.
- `parse_import_detailed(...) -> ParseResult`. Tool arguments are read leniently by
  `core/tool_arguments.stored_arguments`.

Formats: native, OpenAI Chat Completions-style, Anthropic Messages-style, Aurora, a bare
array of messages, and `.jsonl` files with one export per line.
"""

from __future__ import annotations

from .detect import ParseResult, parse_import, parse_import_detailed, thread_from_value
from .files import ImportOutcome, ImportOutcomes, import_files, target_stem

__all__ = [
    "ImportOutcome",
    "ImportOutcomes",
    "ParseResult",
    "import_files",
    "parse_import",
    "parse_import_detailed",
    "target_stem",
    "thread_from_value",
]
