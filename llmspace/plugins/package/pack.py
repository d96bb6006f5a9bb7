"""Release ZIPs of a plugin folder (docs/plugins.md, "ZIP packaging"): `pack(folder, out=None)`.

The ZIP has `package.json` at its root, as `zip -r ../name-1.2.3.zip . -x "data/*" ".git/*"
".DS_Store" "__MACOSX/*"` makes it: the top-level `data/` and `.git/` folders, macOS metadata
anywhere (`.DS_Store`, `__MACOSX/`, `._*`) and the output file itself are left out;
everything else ships, `node_modules/` included (LLM Space runs no package manager after
install). Symbolic links, special files and hard links to files outside the folder are
refused, as the installer and the loader would refuse them. Entries are sorted by path, with a fixed time stamp and modes (0644, or 0755 for
executables), so packing the same files twice gives the same bytes. The archive is checked
against the installer's limits and written atomically (a temp file beside the output,
renamed over it).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ...errors import UserFacingError
from ...jsonio import read_file_bytes
from ..errors import PluginError
from .archive import DEFAULT_LIMITS, MANIFEST, MANIFEST_MAX_BYTES, Limits, is_ignored
from .hardlinks import HINT as HARD_LINK_HINT
from .hardlinks import hard_link_problem
from .manifest import Manifest, parse_manifest

EXCLUDED_TOP = ("data", ".git")
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class PackResult:
    path: Path
    name: str
    version: str
    files: int
    size: int

    @property
    def message(self) -> str:
        return f"Packed {self.name} {self.version}: {self.files} files, {self.size} bytes → {self.path}"


def read_manifest(folder: Path) -> Manifest:
    """The parsed `package.json` of a plugin folder; `PluginError` naming the problem."""
    path = folder / MANIFEST
    try:
        data = read_file_bytes(path, max_bytes=MANIFEST_MAX_BYTES)
    except UserFacingError as exc:  # the safe reader's message names the file and the reason
        raise PluginError(exc.message, hint="A plugin folder needs a package.json (plugin guide §3).") from None
    return parse_manifest(data, where=str(path))


def zip_name(name: str, version: str) -> str:
    """`weather-kit-1.2.3.zip`; a scope joins the name as npm pack does (`example-team-tools-1.0.0.zip`)."""
    return f"{name.lstrip('@').replace('/', '-')}-{version}.zip"


def release_files(folder: Path, skip: Path | None = None) -> list[tuple[str, Path]]:
    """(ZIP path, file) for every file that ships, sorted by ZIP path. `skip` (the output
    file) is left out. `PluginError` names a symbolic link or special file."""
    out: list[tuple[str, Path]] = []
    skip_real = os.path.realpath(skip) if skip is not None else None

    def walk(directory: Path, prefix: str) -> None:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            raise PluginError(f"Cannot read {directory}: {exc.strerror or exc}.") from None
        for entry in entries:
            rel = prefix + entry.name
            if (not prefix and entry.name in EXCLUDED_TOP) or is_ignored(rel):
                continue
            path = Path(entry.path)
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                raise PluginError(f"{rel} is a symbolic link; plugins may not contain links.",
                                  hint="Replace it with a copy of the file or folder it points at.")
            if stat.S_ISDIR(mode):
                walk(path, rel + "/")
            elif not stat.S_ISREG(mode):
                raise PluginError(f"{rel} is not a regular file (a device, FIFO or socket).", hint="Remove it and pack again.")
            elif os.path.realpath(path) != skip_real:
                out.append((rel, path))

    walk(folder, "")
    return sorted(out)


def pack(folder: Path, out: Path | None = None, *, limits: Limits = DEFAULT_LIMITS) -> PackResult:
    """Write the release ZIP of the plugin at `folder` to `out` (default: beside the
    folder, named by `zip_name`); an existing file there is replaced."""
    folder = Path(folder)
    if not folder.is_dir():
        raise PluginError(f"{folder} is not a folder.", hint="Give the plugin folder (the one holding package.json).")
    manifest = read_manifest(folder)
    out = Path(out) if out is not None else folder.absolute().parent / zip_name(manifest.name, manifest.version)
    if out.is_dir():
        out = out / zip_name(manifest.name, manifest.version)
    files = release_files(folder, skip=out)
    problem = hard_link_problem(folder)
    if problem:  # the ZIP would carry the other file's bytes, and the installer refuses the folder
        raise PluginError(f"{folder}: {problem}.", hint=HARD_LINK_HINT)
    if len(files) > limits.entries:
        raise PluginError(f"{folder} has {len(files)} files to pack, over the installer's limit of {limits.entries} entries.")
    total = sum(p.stat().st_size for _, p in files)
    if total > limits.extracted:
        raise PluginError(f"{folder} holds {total} bytes to pack, over the installer's limit of {limits.extracted} bytes extracted.")
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
            for rel, path in files:
                _add(zf, rel, path)
        size = os.path.getsize(tmp)
        if size > limits.compressed:
            raise PluginError(f"The packed ZIP is {size} bytes, over the installer's limit of {limits.compressed} bytes.",
                              hint="Leave large data out of the plugin; download it into data/plugins/<name>/ at run time.")
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return PackResult(out, manifest.name, manifest.version, len(files), size)


def _add(zf: zipfile.ZipFile, rel: str, path: Path) -> None:
    st = os.stat(path)
    info = zipfile.ZipInfo(rel, date_time=FIXED_TIME)
    info.create_system = 3
    info.external_attr = (stat.S_IFREG | (0o755 if st.st_mode & 0o111 else 0o644)) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    info.file_size = st.st_size
    with open(path, "rb") as src, zf.open(info, "w") as dst:
        while chunk := src.read(_CHUNK):
            dst.write(chunk)
