"""Plugin ZIP archives read safely: zip-slip (path traversal) and zip-bomb (size) checks,
the package layout, limits, extraction.

`open_archive` refuses a file over the compressed limit; `scan` checks every entry name
and type against zip-slip (no absolute paths, `..`, backslashes, drive letters, control characters,
symbolic links or other special entries, no encrypted or duplicate entries), drops macOS
metadata (`__MACOSX/`, `.DS_Store`, `._*`) and finds the package root: `package.json` at
the ZIP root, or inside exactly one top-level folder. `extract` writes
the package into an empty folder, counting the bytes it really writes against the
extracted limit, so a zip bomb stops at `MAX_EXTRACTED_BYTES` (sizes in the headers are
never trusted; `MAX_ENTRIES` bounds the entry count). Every refusal is an
`ArchiveError` naming the archive, the entry and the problem.

Knows nothing of manifests or the plugins folder: llmspace/plugins/package/install.py composes it.
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import PluginError

MiB = 1024 * 1024
MAX_COMPRESSED_BYTES = 50 * MiB
MAX_EXTRACTED_BYTES = 200 * MiB
MAX_ENTRIES = 10_000
MANIFEST_MAX_BYTES = 1 * MiB
MANIFEST = "package.json"

_CHUNK = 64 * 1024
_DRIVE = re.compile(r"[A-Za-z]:")
_HINT = "Rebuild the ZIP from the plugin folder (llmspace plugins pack DIR); nothing was installed."


@dataclass(frozen=True)
class Limits:
    """Archive limits; the defaults are the ones docs/plugins.md ("ZIP packaging") promises."""

    compressed: int = MAX_COMPRESSED_BYTES
    extracted: int = MAX_EXTRACTED_BYTES
    entries: int = MAX_ENTRIES


DEFAULT_LIMITS = Limits()

class ArchiveError(PluginError):
    """A ZIP refused by the installer; the message names the archive and the entry."""

    def __init__(self, archive: str, problem: str, entry: str | None = None, *, hint: str | None = _HINT) -> None:
        self.archive = archive
        self.entry = entry
        self.problem = problem
        where = f"{archive}: entry {entry!r}" if entry is not None else archive
        super().__init__(f"{where}: {problem}.", hint=hint)


@dataclass
class Package:
    """The package inside an archive: `root` is `""` or the wrapper folder with its `/`."""

    root: str
    manifest: zipfile.ZipInfo
    entries: list[zipfile.ZipInfo] = field(default_factory=list)

    def relative(self, info: zipfile.ZipInfo) -> str:
        """The entry's path inside the package (without the wrapper folder)."""
        return info.filename[len(self.root):]


def is_ignored(name: str) -> bool:
    """macOS metadata the installer skips: `__MACOSX/…`, `.DS_Store`, `._*` files."""
    parts = name.rstrip("/").split("/")
    return parts[0] == "__MACOSX" or parts[-1] == ".DS_Store" or parts[-1].startswith("._")


def entry_problem(info: zipfile.ZipInfo) -> str | None:
    """Why the entry may not be extracted, or None. Checks the name as stored in the
    archive (`orig_filename`: zipfile cuts names at a NUL byte) and the Unix type bits."""
    name = info.orig_filename
    if not name:
        return "has an empty name"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "has a control character in its name"
    if "\\" in name:
        return "uses a backslash in its path (ZIP paths use '/')"
    if name.startswith("/"):
        return "is an absolute path"
    if _DRIVE.match(name):
        return "starts with a drive letter"
    if ":" in name:
        return "contains ':' (a drive letter or Windows stream name)"
    parts = name[:-1].split("/") if name.endswith("/") else name.split("/")
    if ".." in parts:
        return "climbs out of the package with '..'"
    if any(p in ("", ".") for p in parts):
        return "has an empty or '.' path component"
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        return "is a symbolic link"
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "is a special file (device, FIFO or socket)"
    if kind == stat.S_IFDIR and not info.is_dir():
        return "is a folder whose name does not end with '/'"
    if info.flag_bits & 0x1:
        return "is encrypted"
    return None


@contextmanager
def open_archive(path: Path, limits: Limits = DEFAULT_LIMITS) -> Iterator[zipfile.ZipFile]:
    """The ZIP at `path`, refused when it is not a regular file, is over the compressed
    limit, or is not a ZIP."""
    shown = path.name
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ArchiveError(shown, f"cannot be read: {exc.strerror or exc}", hint="Check the path.") from None
    if not stat.S_ISREG(st.st_mode):
        raise ArchiveError(shown, "is not a regular file", hint="Choose a .zip file.")
    if st.st_size > limits.compressed:
        raise ArchiveError(shown, f"is {_mib(st.st_size)}, over the {_mib(limits.compressed)} limit for plugin ZIPs")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ArchiveError(shown, f"is not a valid ZIP file ({exc})", hint="Choose a .zip file built with zip or llmspace plugins pack.") from None
    with zf:
        yield zf


def scan(zf: zipfile.ZipFile, shown: str, limits: Limits = DEFAULT_LIMITS) -> Package:
    """Check every entry and find the package root; raises `ArchiveError` on the first problem."""
    infos = zf.infolist()
    if len(infos) > limits.entries:
        raise ArchiveError(shown, f"the archive has {len(infos)} entries, over the limit of {limits.entries}",
                           infos[limits.entries].orig_filename)
    seen: set[str] = set()
    kept: list[zipfile.ZipInfo] = []
    for info in infos:
        problem = entry_problem(info)
        if problem is not None:
            raise ArchiveError(shown, problem, info.orig_filename)
        key = info.filename.rstrip("/")
        if key in seen:
            raise ArchiveError(shown, "appears twice in the archive", info.filename)
        seen.add(key)
        if not is_ignored(info.filename):
            kept.append(info)
    return _layout(kept, shown)


def _layout(kept: list[zipfile.ZipInfo], shown: str) -> Package:
    files = {i.filename: i for i in kept if not i.is_dir()}
    if MANIFEST in files:
        return Package("", files[MANIFEST], kept)
    tops = sorted({i.filename.split("/", 1)[0] for i in kept})
    roots = [t for t in tops if f"{t}/{MANIFEST}" in files]
    if len(roots) > 1:
        raise ArchiveError(shown, f"several package roots ({', '.join(f'{r}/{MANIFEST}' for r in roots)}); "
                           f"a plugin ZIP holds one package", f"{roots[1]}/{MANIFEST}")
    if not roots:
        raise ArchiveError(shown, f"no {MANIFEST} at the root of the ZIP or inside one top-level folder",
                           hint="Add package.json to the plugin folder and pack it again; nothing was installed.")
    root = roots[0] + "/"
    for info in kept:
        if not info.filename.startswith(root):
            raise ArchiveError(shown, f"lies outside the package folder {root!r} (package.json must be at the root "
                               "of the ZIP or inside exactly one top-level folder)", info.filename)
    entries = [i for i in kept if i.filename != root]
    return Package(root, files[f"{root}{MANIFEST}"], entries)


def read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, shown: str, max_bytes: int = MANIFEST_MAX_BYTES) -> bytes:
    """The bytes of one entry, refused past `max_bytes` (counted while reading)."""
    out = bytearray()
    with _reading(shown, info.filename):
        with zf.open(info) as src:
            while chunk := src.read(_CHUNK):
                out += chunk
                if len(out) > max_bytes:
                    raise ArchiveError(shown, f"is larger than {_mib(max_bytes)}", info.filename)
    return bytes(out)


def extract(zf: zipfile.ZipFile, package: Package, dest: Path, shown: str, limits: Limits = DEFAULT_LIMITS) -> int:
    """Write the package's entries into the empty folder `dest`; returns the bytes written.

    Files are created exclusively and never through a link; the extracted total is counted
    from the bytes really decompressed, and passing `limits.extracted` stops at once."""
    total = 0
    for info in package.entries:
        rel = package.relative(info)
        target = dest.joinpath(*rel.rstrip("/").split("/"))
        try:
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            mode = 0o755 if (info.external_attr >> 16) & 0o111 else 0o644
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
        except FileExistsError:
            raise ArchiveError(shown, "collides with another entry of the same path", info.filename) from None
        except OSError as exc:
            raise ArchiveError(shown, f"cannot be written: {exc.strerror or exc}", info.filename,
                               hint="Check free disk space and permissions; nothing was installed.") from None
        with os.fdopen(fd, "wb") as out, _reading(shown, info.filename):
            with zf.open(info) as src:
                while chunk := src.read(_CHUNK):
                    total += len(chunk)
                    if total > limits.extracted:
                        raise ArchiveError(shown, f"extracting it passes the {_mib(limits.extracted)} limit "
                                           "for an extracted plugin", info.filename)
                    out.write(chunk)
    return total


@contextmanager
def _reading(shown: str, entry: str) -> Iterator[None]:
    """Turns decompression failures (bad CRC, truncated data, unsupported method) into `ArchiveError`."""
    try:
        yield
    except ArchiveError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError) as exc:
        raise ArchiveError(shown, f"cannot be decompressed ({exc})", entry) from None
    except OSError as exc:
        raise ArchiveError(shown, f"cannot be written: {exc.strerror or exc}", entry,
                           hint="Check free disk space and permissions; nothing was installed.") from None


def _mib(n: int) -> str:
    return f"{n / MiB:.0f} MiB" if n >= MiB else f"{n} bytes"
