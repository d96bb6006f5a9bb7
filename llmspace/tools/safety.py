"""The risky-bash denylist: commands that make auto-run stop and ask first
(the original LLM Space app's `isDangerousBashCommand`).

Auto-run (and the ReAct loop) pauses before a `bash` call whose command matches; a manual
"Call this tool" still runs it.
Matching is case-insensitive and word based, never a parse of the shell language.
"""

from __future__ import annotations

import re

_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE | re.DOTALL)
    for p in (
        r"(?<![\w\-.])rm\s",  # any rm (rm -rf, git rm, /bin/rm …)
        r"(?<![\w\-.])mkfs\b",  # mkfs, mkfs.ext4
        r"(?<![\w\-.])dd\b.*\bof=",  # dd … of=
        r":\s*\(\s*\)\s*\{.*\}\s*;",  # fork bomb :(){ :|:& };:
        r"(?<![\w\-.])(shutdown|reboot|halt|poweroff)\b",
        r"(?<![\w\-.])(chmod|chown)\b[^;&|\n]*\s(-[a-z]*r[a-z]*|--recursive)\b",
        r">\s*/dev/(sd|nvme|disk)",  # redirect onto a disk device
        r"(?<![\w\-.])sudo\b",
        r"(?<![\w\-.])(curl|wget)\b.*\|\s*(sudo\s+)?(sh|bash|zsh)\b",  # pipe a download into a shell
    )
)


def is_dangerous_bash(command: str) -> bool:
    """True when `command` matches the denylist and must not run without a human click."""
    if not isinstance(command, str) or not command:
        return False
    return any(p.search(command) for p in _PATTERNS)
