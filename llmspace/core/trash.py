"""Moving workspace entries, and deleting them without ever deleting them for good.

`move_path` renames a file or folder, copying across file systems when it must. `Trash`
sends an entry to the operating system's trash (send2trash) or, when that is switched off,
missing or failing, moves it into a trash folder under a unique, time-stamped name.

No threads, no network.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import time
from pathlib import Path

from ..errors import UserFacingError
from .names import unique_path

log = logging.getLogger("llmspace.workspace")


def move_path(src: Path, dst: Path, action: str) -> None:
    """`os.rename`, falling back to copy-and-remove across file systems (e.g. a workspace on
    another disk than the trash); a failure is a clear error and leaves `src` where it was."""
    try:
        try:
            os.rename(src, dst)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            shutil.move(str(src), str(dst))
    except OSError as exc:
        raise UserFacingError(f"Could not {action} {src.name}: {exc.strerror or exc}.",
                              hint="Check the permissions of the folder and free disk space.") from None


class Trash:
    """Where deleted entries of the workspace at `root` go.

    The OS trash is used unless `use_os_trash` is False (None: on unless the environment
    sets LLM_SPACE_NO_OS_TRASH to 1, true or yes). The fallback folder is `trash_dir`, or
    `.trash` inside the workspace when none is given."""

    def __init__(self, root: Path, trash_dir: Path | None = None, use_os_trash: bool | None = None) -> None:
        self.root = root
        self.trash_dir = trash_dir
        if use_os_trash is None:
            use_os_trash = os.environ.get("LLM_SPACE_NO_OS_TRASH", "") not in ("1", "true", "yes")
        self.use_os_trash = use_os_trash

    @property
    def path(self) -> Path:
        """Where deleted entries go when the operating system's trash is not available."""
        return Path(self.trash_dir) if self.trash_dir is not None else self.root / ".trash"

    def send(self, path: Path, shown: str) -> str:
        """Send `path` (named `shown` in the log) to the trash; returns where it went
        ("os-trash" or the path inside the trash folder)."""
        if self.use_os_trash:
            try:
                from send2trash import send2trash

                send2trash(str(path))
                if not os.path.lexists(path):
                    return "os-trash"
            except Exception as exc:  # no OS trash here (headless, other mount, permissions)
                log.info("OS trash unavailable for %s (%s); using %s", shown, exc, self.path)
        trash = self.path
        trash.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        stem, suffix = (path.stem, path.suffix) if path.is_file() else (path.name, "")
        target = unique_path(trash, f"{stem}.{stamp}", suffix)
        move_path(path, target, "move to the trash")
        return str(target)
