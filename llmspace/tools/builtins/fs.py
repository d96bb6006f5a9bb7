"""File-system built-ins: read, write, edit, ls, tree, glob, present_files.

Relative paths resolve against the thread's working directory (`CallEnv.resolve`). Noise
names (node_modules, .git, …) are skipped by ls/tree/glob and excluded from grep
(`NOISE_NAMES`). Writes go through `jsonio.write_bytes_atomic`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...jsonio import UnreadableFileError, open_regular_file, read_file_bytes, write_bytes_atomic
from ..base import CallEnv, ToolError
from .globmatch import compile_glob, literal_root

NOISE_NAMES: frozenset[str] = frozenset(
    {
        "node_modules", ".git", ".svn", ".hg", ".DS_Store", "Thumbs.db", ".cache", ".next", ".nuxt",
        ".turbo", ".parcel-cache", "dist", "build", "out", "coverage", "__pycache__", ".pytest_cache",
        ".mypy_cache", ".venv", "venv",
    }
)
IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".svg", ".ico"})
READ_CAP_BYTES = 256 * 1024
TREE_DEFAULT_DEPTH = 5
TREE_MAX_DEPTH = 20


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        try:
            return p.lstat().st_mtime
        except OSError:
            return 0.0


def _int_arg(args: dict[str, Any], key: str) -> int | None:
    value = args.get(key)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value)
    raise ToolError(f"{key} must be a number.")


# -- read / write / edit ------------------------------------------------------------------


def read(args: dict[str, Any], env: CallEnv) -> str:
    path = env.resolve(args["path"])
    if path.is_dir():
        raise ToolError(f"{path} is a directory, not a file.")
    if not path.exists():
        raise ToolError(f"{path} does not exist.")
    if path.suffix.lower() in IMAGE_EXTENSIONS:
        return f"[image file: {path} ({path.stat().st_size} bytes)]"
    offset = _int_arg(args, "offset")
    limit = _int_arg(args, "limit")
    start = max((offset or 1) - 1, 0)
    stop = None if limit is None else start + max(limit, 0)
    out: list[str] = []
    used = 0
    truncated = False

    def take(index: int, raw: bytes) -> bool:
        """Add line `index` (0-based); False once the cap is reached."""
        nonlocal used, truncated
        line = f"{index + 1}\t{raw.decode('utf-8', errors='replace')}"
        size = len(line.encode("utf-8")) + 1
        if out and used + size > READ_CAP_BYTES:
            truncated = True
            return False
        out.append(line)
        used += size
        return True

    # Stream the file (split on "\n" like JS `split`, so a final newline gives an empty last line).
    try:
        with open_regular_file(path) as f:  # a FIFO or device is refused, never waited on
            index = -1
            ended_with_newline = True
            for index, raw in enumerate(f):
                ended_with_newline = raw.endswith(b"\n")
                if stop is not None and index >= stop:
                    break
                if index >= start and not take(index, raw[:-1] if ended_with_newline else raw):
                    break
            else:
                last = index + 1
                if ended_with_newline and last >= start and (stop is None or last < stop):
                    take(last, b"")
    except UnreadableFileError as exc:
        raise ToolError(str(exc)) from None
    except OSError as exc:
        raise ToolError(f"Could not read {path}: {exc.strerror or exc}") from None
    result = "\n".join(out)
    if truncated:
        result += f"\n... [truncated at {READ_CAP_BYTES} bytes; pass offset/limit to read a specific range]"
    return result


def write(args: dict[str, Any], env: CallEnv) -> str:
    path = env.resolve(args["path"])
    if path.is_dir():
        raise ToolError(f"{path} is a directory, not a file.")
    data = str(args.get("contents", "")).encode("utf-8")
    write_bytes_atomic(path, data)
    return f"Wrote {len(data)} bytes to {path}"


def edit(args: dict[str, Any], env: CallEnv) -> str:
    path = env.resolve(args["path"])
    old = str(args.get("old_string", ""))
    new = str(args.get("new_string", ""))
    if old == new:
        raise ToolError("new_string must differ from old_string.")
    if path.is_dir():
        raise ToolError(f"{path} is a directory, not a file.")
    try:
        content = read_file_bytes(path).decode("utf-8")
    except UnreadableFileError as exc:
        raise ToolError(f"{path} does not exist." if exc.missing else str(exc)) from None
    except UnicodeDecodeError:
        raise ToolError(f"{path} is not a UTF-8 text file.") from None
    if old == "":
        raise ToolError("old_string was not found in the file.")
    count = content.count(old)
    if count == 0:
        raise ToolError("old_string was not found in the file.")
    if count > 1 and not args.get("replace_all"):
        raise ToolError(f"old_string is not unique ({count} matches). Provide a larger unique string or set replace_all.")
    updated = content.replace(old, new) if args.get("replace_all") else content.replace(old, new, 1)
    write_bytes_atomic(path, updated.encode("utf-8"))
    return f"Replaced {count if args.get('replace_all') else 1} occurrence(s) in {path}"


# -- ls / tree ----------------------------------------------------------------------------------


def _require_dir(path: Path) -> None:
    if not path.exists():
        raise ToolError(f"{path} does not exist.")
    if not path.is_dir():
        raise ToolError(f"{path} is not a directory.")


def ls(args: dict[str, Any], env: CallEnv) -> str:
    path = env.resolve(args["path"])
    _require_dir(path)
    try:
        entries = [e for e in path.iterdir() if e.name not in NOISE_NAMES]
    except OSError as exc:
        raise ToolError(f"Could not list {path}: {exc.strerror or exc}") from None
    if not entries:
        return f"{path} is empty."
    entries.sort(key=lambda e: (-_mtime(e), e.name))
    return "\n".join(e.name + ("/" if e.is_dir() else "") for e in entries)


def _tree_lines(directory: Path, prefix: str, depth: int, max_depth: int, out: list[str]) -> None:
    try:
        children = [c for c in directory.iterdir() if c.name not in NOISE_NAMES]
    except OSError:
        return
    children.sort(key=lambda c: (0 if c.is_dir() else 1, c.name))
    for i, child in enumerate(children):
        last = i == len(children) - 1
        out.append(f"{prefix}{'└── ' if last else '├── '}{child.name}")
        if depth < max_depth and child.is_dir() and not child.is_symlink():
            _tree_lines(child, prefix + ("    " if last else "│   "), depth + 1, max_depth, out)


def tree(args: dict[str, Any], env: CallEnv) -> str:
    path = env.resolve(args["path"])
    _require_dir(path)
    depth = _int_arg(args, "max_depth")
    max_depth = TREE_DEFAULT_DEPTH if depth is None or depth <= 0 else min(depth, TREE_MAX_DEPTH)
    out: list[str] = [str(path)]
    _tree_lines(path, "", 1, max_depth, out)
    if len(out) == 1:
        return f"{path} is empty."
    return "\n".join(out)


# -- glob ------------------------------------------------------------------------------------------


def glob(args: dict[str, Any], env: CallEnv) -> str:
    pattern = str(args["glob_pattern"]).strip()
    if not pattern:
        raise ToolError("glob_pattern must not be empty.")
    target = args.get("target_directory")
    if target:
        root = env.resolve(str(target))
    elif env.ctx.working_directory:
        root = env.cwd()
    elif env.ctx.workspace_root is not None:
        root = Path(env.ctx.workspace_root)
    else:
        root = Path(os.getcwd())
    if os.path.isabs(os.path.expanduser(pattern)):
        base, rest = literal_root(os.path.expanduser(pattern))
        root, pattern = Path(base), rest
    _require_dir(root)
    matcher, max_depth = compile_glob(pattern)
    found: list[Path] = []
    root_str = str(root)
    for dirpath, dirnames, filenames in os.walk(root_str):
        rel_dir = os.path.relpath(dirpath, root_str)
        depth = 0 if rel_dir == "." else rel_dir.count(os.sep) + 1
        dirnames[:] = [d for d in dirnames if d not in NOISE_NAMES]
        if max_depth is not None and depth + 1 >= max_depth:
            dirnames[:] = []
        if max_depth is not None and depth + 1 > max_depth:
            continue
        for name in filenames:
            if name in NOISE_NAMES:
                continue
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            if matcher(rel):
                found.append(Path(dirpath) / name)
    if not found:
        return "No files matched."
    found.sort(key=lambda p: (-_mtime(p), str(p)))
    return "\n".join(str(p.absolute()) for p in found)


# -- present_files ----------------------------------------------------------------------------------

Opener = Callable[[str, str], None]  # (action "open" | "reveal", absolute path)


def system_opener(action: str, path: str) -> None:
    """Open `path` with the OS default handler, or reveal it in the file manager."""
    if sys.platform == "darwin":
        cmd = ["open", path] if action == "open" else ["open", "-R", path]
    elif sys.platform.startswith("win"):
        if action == "open":
            os.startfile(path)  # type: ignore[attr-defined]
            return
        cmd = ["explorer", f"/select,{path}"]
    else:
        target = path if action == "open" or os.path.isdir(path) else os.path.dirname(path)
        cmd = ["xdg-open", target]
    try:
        subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError as exc:
        raise ToolError(f"Could not open {path}: {exc.strerror or exc}") from None


def present_files(args: dict[str, Any], env: CallEnv) -> str:
    paths = args.get("paths")
    if not isinstance(paths, list) or not paths:
        raise ToolError("paths must be a non-empty array of file paths.")
    opener: Opener = env.settings.get("opener") or system_opener
    resolved = [env.resolve(str(p)) for p in paths]
    for p in resolved:
        if not p.exists():
            raise ToolError(f"{p} does not exist.")
    for p in resolved:
        opener("open" if p.suffix.lower() in (".html", ".htm") else "reveal", str(p))
    return "OK"
