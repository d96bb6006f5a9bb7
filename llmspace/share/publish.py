"""What Share… sends, and the record of what this data root shared.

    summary = summarize(thread)        # title, message and image counts, size, runs left out, warnings
    ledger = ShareLedger(root.settings); ledger.add(entry); ledger.entries(); ledger.remove(gist_id)

`summarize` is shown before anything is sent. Its warnings name variables whose value looks
like a secret (a value the app knows as a key, `redact.KNOWN`, or a long random-looking token)
and the local files the thread's templates would read when run (`core/templating/file_reads`),
since whoever opens the link runs it. Nothing in the summary quotes a secret.

The ledger is `settings/shares.json` (`{"shares": [{gistId, title, description, fileName,
thread, url, createdAt}]}`): ids, titles and dates only, no token. `llmspace share list` reads
it; `share revoke ID` deletes the gist and its entry.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..core.model import Thread
from ..core.templating.file_reads import local_file_reads
from ..errors import UserFacingError
from ..jsonio import UnreadableFileError, read_json, write_json_atomic
from ..redact import KNOWN
from .gist import gist_payload

LEDGER_FILE = "shares.json"
_WORD = re.compile(r"[A-Za-z0-9_\-+/=.~]{24,}")
_SECRET_PREFIXES = ("sk-", "ghp_", "gho_", "github_pat_", "xox", "AKIA", "AIza", "hf_", "glpat-")


@dataclass
class ShareSummary:
    """What a share would send (the dialog's and the terminal's confirmation)."""

    title: str
    file_name: str
    description: str
    messages: int
    images: int
    size: int  # bytes of the gist file
    runs_left_out: int
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        size = f"{self.size / 1024:.1f} KB" if self.size < 1024 * 1024 else f"{self.size / (1024 * 1024):.1f} MB"
        out = [f"Title: {self.title}", f"Gist file: {self.file_name} (a secret gist: anyone with the link can read it)",
               f"Messages: {self.messages}, images: {self.images}, size: {size}"]
        if self.runs_left_out:
            out.append(f"Run history: {self.runs_left_out} run(s) left out, as the original app does")
        out.extend(f"Warning: {w}" for w in self.warnings)
        return out


def _entropy(word: str) -> float:
    counts = Counter(word)
    return -sum(n / len(word) * math.log2(n / len(word)) for n in counts.values())


def looks_secret(value: str) -> bool:
    """A known key's value, or a long random-looking token (letters and digits, high entropy)."""
    known = KNOWN.redactor.values
    if any(k in value for k in known if len(k) >= 8):
        return True
    for word in _WORD.findall(value):
        if word.startswith(_SECRET_PREFIXES):
            return True
        if any(c.isdigit() for c in word) and any(c.isalpha() for c in word) and _entropy(word) >= 4.0:
            return True
    return False


def _variable_values(thread: Thread) -> list[tuple[str, str]]:
    ctx = thread.context
    out: list[tuple[str, str]] = []
    if ctx is None:
        return out
    if ctx.variableVariants is not None:
        for bucket in (ctx.variableVariants.variants or {}).values():
            if isinstance(bucket, dict):
                out.extend((str(k), v) for k, v in bucket.items() if isinstance(v, str))
    for name, var in (ctx.variables or {}).items():
        if isinstance(var.value, str):
            out.append((str(name), var.value))
    return out


def _image_count(thread: Thread) -> int:
    n = 0
    for msg in thread.messages:
        content = getattr(msg, "content", None)
        for part in content if isinstance(content, list) else ():
            if getattr(part, "type", None) == "image_data":
                n += 1
        for call in getattr(msg, "toolCalls", None) or ():
            output = getattr(call, "output", None)
            for part in getattr(output, "content", None) or ():
                if getattr(part, "type", None) == "image" or (isinstance(part, dict) and part.get("type") == "image"):
                    n += 1
    return n


def summarize(thread: Thread, title: str | None = None, description: str | None = None) -> ShareSummary:
    """What sharing `thread` would send (nothing is sent)."""
    payload = gist_payload(thread, title, description)
    (file_name, file), = payload["files"].items()
    shown_title = title.strip() if title and title.strip() else (thread.title or "")
    summary = ShareSummary(shown_title, file_name, payload["description"], len(thread.messages), _image_count(thread),
                           len(file["content"].encode("utf-8", "surrogatepass")), len(thread.runHistory or []))
    secret_names = sorted({name for name, value in _variable_values(thread) if looks_secret(value)})
    if secret_names:
        summary.warnings.append("these variables hold what looks like a secret (a key or token), and the gist would "
                                "carry it: " + ", ".join(secret_names))
    reads = local_file_reads(thread)
    if reads:
        summary.warnings.append(reads.describe(shown_title or file_name)
                                + " (whoever opens the link runs it on their computer)")
    return summary


@dataclass
class ShareEntry:
    gistId: str
    title: str
    description: str
    fileName: str
    thread: str
    url: str
    createdAt: str


class ShareLedger:
    """`settings/shares.json`: what was shared from this data root."""

    def __init__(self, settings_dir: Path) -> None:
        self.file = Path(settings_dir) / LEDGER_FILE
        self._lock = threading.Lock()

    def entries(self) -> list[ShareEntry]:
        try:
            data = read_json(self.file, max_bytes=8 * 1024 * 1024)
        except UnreadableFileError as exc:
            if exc.missing:
                return []
            raise
        shares = data.get("shares") if isinstance(data, dict) else None
        if not isinstance(shares, list):
            raise UserFacingError(f"settings/{LEDGER_FILE} is not a list of shares.",
                                  hint="Move it away; the gists themselves are unchanged on GitHub.")
        out = []
        for s in shares:
            if isinstance(s, dict) and isinstance(s.get("gistId"), str):
                out.append(ShareEntry(**{k: str(s.get(k) or "") for k in ShareEntry.__dataclass_fields__}))
        return out

    def _write(self, entries: list[ShareEntry]) -> None:
        value: dict[str, Any] = {"shares": [asdict(e) for e in entries]}
        write_json_atomic(self.file, value, mode=0o600)

    def add(self, entry: ShareEntry) -> None:
        with self._lock:
            self._write([*self.entries(), entry])

    def remove(self, gist_id: str) -> bool:
        with self._lock:
            entries = self.entries()
            kept = [e for e in entries if e.gistId != gist_id]
            if len(kept) == len(entries):
                return False
            self._write(kept)
            return True
