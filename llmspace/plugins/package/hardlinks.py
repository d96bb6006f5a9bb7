"""Hard links out of a plugin folder: refused at install and at load.

    hard_link_problem(folder)    # None, or which file is a hard link to a file outside `folder`

Landlock's rules follow paths, not files: a hard link in a plugin's folder to a file
elsewhere (`$LLM_SPACE_HOME/settings/models.json`, say), made before the host confined itself,
is read (and written) through the plugin folder's rule. A regular file whose link count is
above 1 is refused unless every one of its names is inside `folder` (two names of one file
within the package give nothing the folder's rule does not already give). Symbolic links
are not counted here: Landlock follows them to their real path, and the extension checks
refuse them where they matter.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path


def hard_link_problem(folder: Path) -> str | None:
    """Why `folder` cannot be a plugin folder because of a hard link, or None. A folder that
    cannot be read is left to the checks that read it."""
    many: dict[tuple[int, int], tuple[int, list[str]]] = {}  # (dev, ino) → (link count, names inside)
    for dirpath, filenames in _walk(folder):  # links to folders are not followed
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                many.setdefault((st.st_dev, st.st_ino), (st.st_nlink, []))[1].append(path)
    for count, names in many.values():
        if len(names) < count:
            shown = Path(sorted(names)[0]).relative_to(folder).as_posix()
            return (f"{shown} is a hard link to a file outside the plugin's folder ({count} names, {len(names)} "
                    "inside), which would let the plugin's code reach that file whatever it declares")
    return None


HINT = "Replace the hard link with a copy of the file (cp --remove-destination SOURCE LINK), then try again."


def _walk(folder: Path) -> Iterator[tuple[str, list[str]]]:
    """(folder, names of what is not a folder in it) for `folder` and every folder below it,
    without following links to folders. Iterative: os.walk recurses in Python 3.11, and a
    1,500-deep plugin folder ended in RecursionError (issue 35, item 17)."""
    stack = [os.fspath(folder)]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as entries:
                listed = list(entries)
        except OSError:
            continue
        names = []
        for entry in listed:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    names.append(entry.name)
            except OSError:
                continue
        yield top, names
