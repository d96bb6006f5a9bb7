"""The built-in engine's models: what is installed under `models/`, added, pulled or removed.

`$LLM_SPACE_HOME/models/` keeps the Hugging Face cache layout for downloads
(`models--ORG--NAME/blobs/<etag>`, `snapshots/<commit>/<file>` → the blob, `refs/<revision>`),
so other tools recognise the files; `copied/<name>.gguf` holds files added with `--copy`;
files added in place stay where they are. `llmspace-index.json` (written through jsonio,
under a lock shared by every process of the data root) records what we installed:
name, path, size, SHA-256, origin ("downloaded" | "copied" | "in-place") and the size and
modification time seen when the SHA-256 was computed, so `resolve` checks the file is
unchanged before the model is used (and hashes it again when it is not).
`remove` deletes only files we downloaded or copied. Downloads: llmspace/local/download.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from ..errors import NameConflict, UserFacingError
from ..jsonio import open_regular_file, read_json, write_json_atomic
from ..paths import DataRoot, expand_home
from . import catalog
from .gguf_meta import read_metadata

try:  # POSIX: one writer of the index at a time across processes
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

Origin = Literal["downloaded", "copied", "in-place"]
INDEX_NAME = "llmspace-index.json"
GGUF_MAGIC = b"GGUF"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_CHUNK = 1024 * 1024
_DISK_MARGIN = 64 * 1024 * 1024  # keep this much free after a copy or a download

# progress(done_bytes, total_bytes) while hashing or copying a file
ByteProgress = Callable[[int, int], None]


@dataclass(frozen=True)
class InstalledModel:
    """One model the engine can load. `path` is the file to give llama-server."""

    name: str
    path: Path
    size: int
    origin: Origin
    sha256: str
    mtime_ns: int = 0  # of the file when its SHA-256 was computed
    added_at: float = 0.0
    repo: str | None = None  # downloads: the Hub repository, file, revision asked and commit
    file: str | None = None
    revision: str | None = None
    commit: str | None = None

    @property
    def catalog_entry(self) -> catalog.CatalogEntry | None:
        return catalog.by_sha256(self.sha256)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["path"] = str(self.path)
        return {k: v for k, v in data.items() if v is not None}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> InstalledModel:
        return cls(name=str(data["name"]), path=Path(str(data["path"])), size=int(data["size"]),
                   origin=data["origin"], sha256=str(data["sha256"]), mtime_ns=int(data.get("mtime_ns", 0)),
                   added_at=float(data.get("added_at", 0.0)), repo=data.get("repo"), file=data.get("file"),
                   revision=data.get("revision"), commit=data.get("commit"))


def is_gguf(path: Path) -> bool:
    """True when the file starts with the GGUF magic and a version llama.cpp loads (2 or 3)."""
    with open_regular_file(path) as fh:
        head = fh.read(8)
    return len(head) == 8 and head[:4] == GGUF_MAGIC and int.from_bytes(head[4:8], "little") in (2, 3)


def sha256_of(path: Path, progress: ByteProgress | None = None) -> str:
    digest = hashlib.sha256()
    total = path.stat().st_size
    done = 0
    with open_regular_file(path) as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done, total)
    return digest.hexdigest()


def check_free_disk(folder: Path, needed: int, what: str) -> None:
    """Refuse before writing `needed` bytes into `folder` when the disk cannot hold them."""
    free = shutil.disk_usage(folder).free
    if free < needed + _DISK_MARGIN:
        raise UserFacingError(
            f"Not enough free disk for {what}: it needs {human_size(needed)}, {human_size(free)} is free in {folder}.",
            hint="Free some space (or point LLM_SPACE_HOME at a larger disk) and try again; nothing was written.")


def human_size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"  # pragma: no cover - the loop returns


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise UserFacingError(f"{name!r} cannot be a model name.",
                              hint="Use letters, digits, '.', '_' and '-' (up to 100, starting with a letter or digit).")
    return name


def default_name(file_name: str) -> str:
    """A model name from a file name: its stem, lower case, other characters as '-'."""
    stem = file_name.rsplit("/", 1)[-1]
    if stem.lower().endswith(".gguf"):
        stem = stem[:-5]
    cleaned = re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-._")[:100]
    return cleaned or "model"


class LocalModels:
    """The models of one data root (see the module docstring)."""

    def __init__(self, root: DataRoot) -> None:
        self.root = root

    @property
    def folder(self) -> Path:
        return self.root.models

    @property
    def index_path(self) -> Path:
        return self.folder / INDEX_NAME

    # ---- the index -------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the index lock (every process of this data root) while reading and changing it."""
        if fcntl is None:  # pragma: no cover - Windows
            yield
            return
        fd = os.open(self.folder / ".llmspace-index.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _load(self) -> list[InstalledModel]:
        if not self.index_path.exists():
            return []
        data = read_json(self.index_path)
        try:
            return [InstalledModel.from_json(item) for item in data.get("models", [])]
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise UserFacingError(f"{self.index_path} is not a model index ({exc}).",
                                  hint="Fix or delete that file; the model files themselves are untouched.") from None

    def _save(self, models: list[InstalledModel]) -> None:
        write_json_atomic(self.index_path, {"version": 1, "models": [m.to_json() for m in models]},
                          trailing_newline=True)

    def installed(self) -> list[InstalledModel]:
        """Every model we installed, in the order added."""
        return self._load()

    def partial_downloads(self) -> list[tuple[str, Path, int]]:
        """Downloads stopped before the end: (repository, file, bytes so far); `local pull` resumes them."""
        found = []
        for part in sorted(self.folder.glob("models--*/blobs/*.incomplete")):
            repo = part.parent.parent.name.removeprefix("models--").replace("--", "/", 1)
            with contextlib.suppress(OSError):
                found.append((repo, part, part.stat().st_size))
        return found

    def find(self, name: str) -> InstalledModel | None:
        wanted = name.strip().lower()
        return next((m for m in self._load() if m.name.lower() == wanted), None)

    def register(self, model: InstalledModel, *, replace_same: bool = False) -> InstalledModel:
        """Add `model` to the index (a name already used is a conflict unless `replace_same`)."""
        with self.locked():
            models = self._load()
            same = [m for m in models if m.name.lower() == model.name.lower()]
            if same and not replace_same:
                raise NameConflict(f"A model named {model.name!r} is already installed ({same[0].path}).",
                                   hint="Choose another name with --name, or remove it first with "
                                        f"`llmspace local remove {same[0].name}`.")
            self._save([m for m in models if m not in same] + [model])
        return model

    # ---- use ---------------------------------------------------------------------------------

    def resolve(self, name: str) -> InstalledModel:
        """The installed model called `name`, checked unchanged since its SHA-256 was taken."""
        model = self.find(name)
        if model is None:
            raise self._not_installed(name)
        try:
            st = model.path.stat()
        except OSError:
            hint = (f"Add it again with `llmspace local add PATH --name {model.name}` after "
                    f"`llmspace local remove {model.name}`." if model.origin == "in-place"
                    else f"Run `llmspace local remove {model.name}` and get it again.")
            raise UserFacingError(f"The file of model {model.name!r} is gone: {model.path}.", hint=hint) from None
        if st.st_size == model.size and st.st_mtime_ns == model.mtime_ns:
            return model
        digest = sha256_of(model.path) if st.st_size == model.size else None
        if digest != model.sha256:
            raise UserFacingError(
                f"The file of model {model.name!r} changed since it was installed ({model.path}): "
                "its SHA-256 no longer matches, so it is not used.",
                hint=f"Run `llmspace local remove {model.name}`, then add or pull it again.")
        fresh = replace(model, mtime_ns=st.st_mtime_ns)
        with contextlib.suppress(UserFacingError):
            self.register(fresh, replace_same=True)
        return fresh

    def _not_installed(self, name: str) -> UserFacingError:
        names = ", ".join(m.name for m in self._load())
        have = f" Installed: {names}." if names else " No model is installed yet."
        entry = catalog.find(name)
        if entry is not None:
            return UserFacingError(f"Model {name!r} is not installed.{have}",
                                   hint=f"Download it with `llmspace local pull {entry.name}`.")
        return UserFacingError(
            f"No model named {name!r} is installed.{have}",
            hint="Download one with `llmspace local pull NAME` (see `llmspace local models`) "
                 "or add a GGUF file you have with `llmspace local add PATH`.")

    # ---- add, remove -------------------------------------------------------------------------

    def add(self, path: str | Path, *, name: str | None = None, copy: bool = False,
            progress: ByteProgress | None = None) -> InstalledModel:
        """Add a GGUF file: in place (we never delete it) or, with `copy`, as our own copy."""
        source = expand_home(str(path)).absolute()
        if not source.is_file():
            raise UserFacingError(f"{source} is not a file.", hint="Give the path of a .gguf model file.")
        if not is_gguf(source):
            raise UserFacingError(f"{source} is not a GGUF model file (it does not start with a GGUF v2 or v3 header).",
                                  hint="The built-in engine loads GGUF files, e.g. from a Hugging Face repository "
                                       "whose name ends in -GGUF.")
        read_metadata(source, keys=set())  # the whole header: a header alone, cut short or corrupt is refused
        for m in self._load():
            if m.origin == "in-place" and not copy and m.path == source:
                raise NameConflict(f"{source} is already added as {m.name!r}.",
                                   hint=f"Use `--model {m.name}`, or `llmspace local remove {m.name}` first.")
        if name is not None:
            check_name(name)
            self.refuse_taken(name)
        digest = sha256_of(source, progress)
        if name is None:
            entry = catalog.by_sha256(digest)
            name = entry.name if entry is not None else default_name(source.name)
            self.refuse_taken(name)
        target, origin = source, "in-place"
        if copy:
            target, origin = self._copy_in(source, name, progress), "copied"
        st = target.stat()
        model = InstalledModel(name=name, path=target, size=st.st_size, origin=origin,  # type: ignore[arg-type]
                               sha256=digest, mtime_ns=st.st_mtime_ns, added_at=time.time())
        try:
            return self.register(model)
        except UserFacingError:
            if copy:
                target.unlink(missing_ok=True)
            raise

    def refuse_taken(self, name: str) -> None:
        taken = self.find(name)
        if taken is not None:
            raise NameConflict(f"A model named {taken.name!r} is already installed ({taken.path}).",
                               hint="Choose another name with --name, or remove it first with "
                                    f"`llmspace local remove {taken.name}`.")

    def _copy_in(self, source: Path, name: str, progress: ByteProgress | None) -> Path:
        folder = self.folder / "copied"
        folder.mkdir(parents=True, exist_ok=True)
        size = source.stat().st_size
        check_free_disk(folder, size, f"a copy of {source.name}")
        target = folder / f"{name}.gguf"
        partial = folder / f".{name}.gguf.partial"
        try:
            with open_regular_file(source) as src, open(partial, "wb") as dst:
                done = 0
                while chunk := src.read(_CHUNK):
                    dst.write(chunk)
                    done += len(chunk)
                    if progress is not None:
                        progress(done, size)
                dst.flush()
                os.fsync(dst.fileno())
            os.replace(partial, target)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise UserFacingError(f"Could not copy {source} into {folder}: {exc.strerror or exc}.",
                                  hint="Nothing was added; check the disk and try again.") from None
        return target

    def remove(self, name: str) -> tuple[InstalledModel, list[Path]]:
        """Forget the model; delete its file only when we downloaded or copied it.
        Returns the model and the paths deleted."""
        with self.locked():
            models = self._load()
            model = next((m for m in models if m.name.lower() == name.strip().lower()), None)
            if model is None:
                raise self._not_installed(name)
            rest = [m for m in models if m is not model]
            deleted: list[Path] = []
            if model.origin == "copied":
                if model.path.exists():
                    model.path.unlink()
                    deleted.append(model.path)
            elif model.origin == "downloaded":
                deleted = self._remove_download(model, rest)
            self._save(rest)
        return model, deleted

    def _remove_download(self, model: InstalledModel, rest: list[InstalledModel]) -> list[Path]:
        deleted: list[Path] = []
        link = model.path
        blob = link.resolve() if link.is_symlink() else None
        still_used = {m.path.resolve() for m in rest if m.origin == "downloaded"}
        if any(m.path == link for m in rest):  # the same file pulled under another name
            return deleted
        if link.is_symlink() or link.exists():
            link.unlink()
            deleted.append(link)
        if blob is not None and blob not in still_used and blob.exists() and self.folder.resolve() in blob.parents:
            blob.unlink()
            deleted.append(blob)
        repo_dir = self._repo_dir_of(link)
        if repo_dir is not None:
            for folder in sorted((p for p in (repo_dir / "snapshots").rglob("*") if p.is_dir()),
                                 key=lambda p: len(p.parts), reverse=True):
                with contextlib.suppress(OSError):
                    folder.rmdir()  # only empty ones
            with contextlib.suppress(OSError):
                (repo_dir / "snapshots").rmdir()
            if not (repo_dir / "snapshots").exists():  # nothing of this repository is left: drop refs too
                shutil.rmtree(repo_dir / "refs", ignore_errors=True)
                with contextlib.suppress(OSError):
                    (repo_dir / "blobs").rmdir()
                with contextlib.suppress(OSError):
                    repo_dir.rmdir()
        return deleted

    def _repo_dir_of(self, path: Path) -> Path | None:
        for parent in path.parents:
            if parent.parent == self.folder and parent.name.startswith("models--"):
                return parent
        return None
