"""Whether a process id still names a running process (POSIX `kill(pid, 0)`): used by the
records other processes leave under `<data root>/run/` — the engine's (`local/engine.py`) and
the dev plugins' (`plugins/dev.py`) — to drop what a dead process left behind."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True while `pid` exists (also when it belongs to another user and cannot be signalled)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
