"""The `grep` built-in: ripgrep (`rg`) when on PATH, else a pure-Python fallback that prints
the same format (`path:line:text`, context lines `path-line-text`, `--` between groups,
files in path order, hidden and binary files skipped, noise names excluded).

Force the fallback with router setting `grep_fallback=True` or `LLMSPACE_GREP_FALLBACK=1`.
The fallback does not read `.gitignore`/`.ignore` files.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...jsonio import UnreadableFileError, read_file_bytes
from ..base import CallEnv, ToolError
from .fs import NOISE_NAMES
from .globmatch import compile_glob

GREP_MAX_BYTES = 64 * 1024 * 1024  # the fallback search skips larger files

NO_MATCHES = "No matches found."


def use_fallback(env: CallEnv) -> bool:
    if env.settings.get("grep_fallback") or os.environ.get("LLMSPACE_GREP_FALLBACK", "") not in ("", "0"):
        return True
    return shutil.which("rg") is None


def _context(args: dict[str, Any]) -> int:
    value = args.get("context_lines")
    if value is None or isinstance(value, bool):
        return 0
    if not isinstance(value, (int, float)) or value < 0:
        raise ToolError("context_lines must be a non-negative number.")
    return int(value)


def grep(args: dict[str, Any], env: CallEnv) -> str:
    pattern = str(args["pattern"])
    path = env.resolve(str(args["path"]))
    glob_arg = args.get("glob") or None
    ignore_case = bool(args.get("case_insensitive"))
    context = _context(args)
    if use_fallback(env):
        out = _python_grep(pattern, path, glob_arg, ignore_case, context)
    else:
        out = _ripgrep(pattern, path, glob_arg, ignore_case, context, env)
    out = out.rstrip()
    return out if out else NO_MATCHES


# -- ripgrep -------------------------------------------------------------------------------------


def _ripgrep(pattern: str, path: Path, glob_arg: str | None, ignore_case: bool, context: int, env: CallEnv) -> str:
    cmd = ["rg", "--line-number", "--with-filename", "--no-heading", "--color", "never", "--sort", "path"]
    for name in sorted(NOISE_NAMES):
        cmd += ["--glob", f"!{name}"]
    if ignore_case:
        cmd.append("--ignore-case")
    if glob_arg:
        cmd += ["--glob", str(glob_arg)]
    if context:
        cmd += ["--context", str(context)]
    cmd += ["--regexp", pattern, "--", str(path)]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(env.cwd()) if env.cwd().is_dir() else None)
    env.cancel.on_cancel(proc.kill)
    try:
        stdout, stderr = proc.communicate(timeout=env.timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise ToolError("grep timed out.") from None
    if env.cancel.cancelled:
        raise ToolError("Cancelled")
    if proc.returncode == 1:
        return ""
    if proc.returncode != 0:
        raise ToolError(stderr.decode("utf-8", errors="replace").strip() or f"rg exited with code {proc.returncode}")
    return stdout.decode("utf-8", errors="replace")


# -- pure-Python fallback -----------------------------------------------------------------------------


def _walk(root: Path) -> Iterator[Path]:
    """Files under `root` in ripgrep's `--sort path` order, hidden and noise names skipped."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.name in NOISE_NAMES:
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                yield from _walk(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                yield Path(entry.path)
        except OSError:
            continue


def _python_grep(pattern: str, path: Path, glob_arg: str | None, ignore_case: bool, context: int) -> str:
    try:
        regex = re.compile(pattern.encode("utf-8"), re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"regex parse error: {exc}") from None
    if not path.exists():
        raise ToolError(f"rg: {path}: No such file or directory (os error 2)")
    if path.is_dir():
        files = list(_walk(path))
        if glob_arg:
            matcher, _ = compile_glob(glob_arg.lstrip("!"))
            negate = glob_arg.startswith("!")
            with_dir = "/" in glob_arg.lstrip("!").rstrip("/")

            def keep(f: Path) -> bool:
                rel = f.relative_to(path).as_posix()
                hit = matcher(rel) if with_dir else (matcher(f.name) or matcher(rel))
                return hit != negate

            files = [f for f in files if keep(f)]
    else:
        files = [path]
    chunks: list[str] = []
    for f in files:
        block = _grep_file(regex, f, context, explicit=not path.is_dir())
        if block:
            chunks.append(block)
    return ("\n--\n" if context else "\n").join(chunks)


def _grep_file(regex: re.Pattern[bytes], f: Path, context: int, explicit: bool) -> str:
    try:
        data = read_file_bytes(f, max_bytes=GREP_MAX_BYTES)  # FIFOs, devices and huge files are skipped
    except (OSError, UnreadableFileError):
        return ""
    if b"\0" in data:
        return ""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    hits = [i for i, line in enumerate(lines) if regex.search(line)]
    if not hits:
        return ""
    name = str(f)
    if not context:
        return "\n".join(f"{name}:{i + 1}:{lines[i].decode('utf-8', errors='replace')}" for i in hits)
    hit_set = set(hits)
    shown: list[int] = []
    for i in hits:
        for j in range(max(0, i - context), min(len(lines), i + context + 1)):
            if not shown or j > shown[-1]:
                shown.append(j)
    out: list[str] = []
    prev = -2
    for j in shown:
        if prev >= 0 and j != prev + 1:
            out.append("--")
        sep = ":" if j in hit_set else "-"
        out.append(f"{name}{sep}{j + 1}{sep}{lines[j].decode('utf-8', errors='replace')}")
        prev = j
    return "\n".join(out)
