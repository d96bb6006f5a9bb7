"""The "Stamp thread title" palette command (alias: stamp-title): prefixes the active
thread's title, as a staged write the app commits only when the command succeeds.

    Stamp thread title Draft              → "[Draft] <title>"
    stamp-title "In review" --dry-run     → says what it would do, writes nothing

Shows palette arguments, `context.report(...)` progress, `context.active_tab`, and
`active_tab.write_thread(...)` on a `copy.deepcopy` of the read-only snapshot. Expected
mistakes (no arguments, an unknown option, a prefix with characters a file name cannot
hold, no thread open) return a warning result. The app keeps a thread's title and file
name in step, so the new title must be a valid file name: hence `[Draft] plan`, not the
guide's `Draft: plan` (':' is not allowed in file names).
"""

from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING

from _atlas_shared import plain

if TYPE_CHECKING:  # the contract, for editors and type checkers only
    from llmspace.plugin_api import CommandContext, PluginResult

USAGE = "Usage: stamp-title <prefix> [--dry-run]"
NOT_IN_NAMES = re.compile(r'[<>:"/\\|?*\x00-\x1f]')


class StampTitleCommand:
    display_name = "Stamp thread title"
    description = "Prefix the active thread's title, for example '[Draft] …' (use --dry-run to preview)."

    def execute(self, context: CommandContext, args: tuple[str, ...] = ()) -> PluginResult:
        options = [a for a in args if a.startswith("--")]
        words = [a for a in args if not a.startswith("--")]
        unknown = [o for o in options if o != "--dry-run"]
        if unknown:
            return context.create_result({"level": "warning", "message": f"Unknown option {unknown[0]}. {USAGE}"})
        prefix = " ".join(w.strip() for w in words if w.strip())
        if not prefix:
            return context.create_result({"level": "warning", "message": USAGE})
        if len(prefix) > 60:
            return context.create_result({"level": "warning", "message": "The prefix may be at most 60 characters."})
        if NOT_IN_NAMES.search(prefix):
            return context.create_result({"level": "warning", "message":
                                          "The prefix may not contain < > : \" / \\ | ? * (titles are file names)."})
        dry_run = "--dry-run" in options
        tab = context.active_tab
        if tab is None:
            return context.create_result({"level": "warning", "message": "Open a thread before running this command."})

        context.report({"phase": "validated", "message": "Dry run: nothing will be written." if dry_run
                        else f"Stamping {tab.filename}…"})
        thread = plain(copy.deepcopy(tab.thread))  # a mutable copy; the snapshot itself is read-only
        old = str(thread.get("title") or tab.filename)
        stamp = f"[{prefix}] "
        if old.startswith(stamp):
            return context.create_result({"level": "success", "message": f"{tab.filename} is already stamped {prefix!r}."})
        thread["title"] = stamp + old
        if dry_run:
            context.report({"phase": "previewed", "message": f"Would rename to {thread['title']!r}."})
            return context.create_result({"level": "success",
                                          "message": f"Dry run: {tab.filename} would be titled {thread['title']!r}."})
        context.report({"phase": "staging", "message": "Staging the new title…"})
        tab.write_thread(thread)
        return context.create_result({"level": "success", "message": f"Titled {tab.filename} {thread['title']!r}."})
