"""Downloads of GGUF files from the Hugging Face Hub into `models/` (the HF cache layout).

Only when asked (`llmspace local pull`), never at start. `huggingface_hub`, imported
lazily, gives the URLs, the file's metadata (commit, ETag, size) and the auth headers; it
honours `HF_ENDPOINT` (a mirror), `HF_TOKEN` and `HF_HUB_OFFLINE`. The transfer itself is
ours, because huggingface_hub 1.x and 2.x restart a download killed with kill -9 from byte 0
(and leave the partial file behind): bytes go to `blobs/<etag>.incomplete`, and the next pull
of the same file resumes it with a `Range: bytes=N-` request, hashing the part already there
first. Before writing, the free disk is checked; the SHA-256 is checked against the catalog's
or `--sha256` and against the Hub's own checksum (an LFS file's ETag is its SHA-256) before
anything is installed: a wrong file is deleted and never registered, and a file with neither
(a git hash as ETag, no `--sha256`) is not downloaded. The blob, the
`snapshots/<commit>/<file>` link and `refs/<revision>` are laid out as huggingface_hub does.

What the server says is not trusted to choose a path or a size (HF_ENDPOINT may name any
mirror): the ETag and the commit name files and folders, so only the Hub's hexadecimal forms
are taken (commit: 40 digits; ETag: a SHA-256, 64, or a git hash, 40); a typed repository,
file and revision must be names, not `..` or absolute; every path is checked to lead under
`models/` before it is created; and no more than the announced size is written (a longer
body or Content-Length stops the download and deletes the part; a part larger than its file,
left by an older version, is deleted before the disk check).
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import importlib
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import requests

from ..errors import UserFacingError
from ..jsonio import write_bytes_atomic
from . import catalog
from .models import InstalledModel, LocalModels, check_free_disk, check_name, default_name, human_size

try:  # POSIX: one download of a file at a time across processes
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_GIT_HASH = re.compile(r"^[0-9a-f]{40}$")  # a commit; the ETag of a file outside Git LFS
# The Hub's repository names: letters, digits, '_', '.', '-', no '--' or '..', 96 at most.
_REPO_PART = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?$")
_CHUNK = 256 * 1024
_CONNECT_TIMEOUT = 15.0
_READ_TIMEOUT = 60.0
_SPEED_WINDOW = 5.0  # seconds


class DownloadFailed(UserFacingError):
    """A download that failed where a GGUF file the user already has is a way out. `hint` says
    what to do on the command line (`llmspace local add PATH`); `retry` says the rest of it in
    words that fit a window too, where the front end names its own GGUF button instead."""

    def __init__(self, message: str, *, retry: str, cli: str) -> None:
        super().__init__(message, hint=f"{cli}, or add a GGUF file you already have with `llmspace local add PATH`.")
        self.retry = retry


@dataclass(frozen=True)
class HubFile:
    """What to pull: a file of a Hub repository at a revision, and the checksum we expect."""

    repo: str
    file: str
    revision: str
    sha256: str | None
    sha256_source: str  # "the catalog", "--sha256" or ""
    name: str
    entry: catalog.CatalogEntry | None = None


@dataclass(frozen=True)
class Progress:
    done: int  # bytes of the file on disk
    total: int
    speed: float  # bytes per second over the last few seconds
    eta: float | None  # seconds left
    resumed_from: int  # bytes already there when this session started


class PullListener(Protocol):
    """What a pull reports; the CLI prints it (llmspace/commands/local.py `ProgressBar`)."""

    def note(self, text: str) -> None:
        """A line for the user (what is checked, where from, resumed from where)."""

    def progress(self, p: Progress) -> None:
        """Called after every chunk written."""


class _Silent:
    def note(self, text: str) -> None:
        pass

    def progress(self, p: Progress) -> None:
        pass


def parse_spec(spec: str, *, sha256: str | None = None, name: str | None = None) -> HubFile:
    """`NAME` (a catalog entry) or `ORG/REPO/FILE[@REVISION]`."""
    expected = None
    if sha256 is not None:
        expected = sha256.strip().lower()
        if not _SHA256.match(expected):
            raise UserFacingError(f"--sha256 {sha256!r} is not a SHA-256.", hint="Give the 64 hexadecimal digits.")
    entry = catalog.find(spec)
    if entry is not None:
        if expected is not None and entry.sha256 is not None and expected != entry.sha256:
            raise UserFacingError(f"--sha256 differs from the catalog's SHA-256 of {entry.name} ({entry.sha256}).",
                                  hint="Leave --sha256 out to use the catalog's, or pull the file by REPO/FILE.")
        source = "--sha256" if expected is not None else ("the catalog" if entry.sha256 else "")
        return HubFile(repo=entry.repo, file=entry.file, revision=entry.revision, sha256=expected or entry.sha256,
                       sha256_source=source, name=check_name(name or entry.name), entry=entry)
    path, at, revision = spec.strip().rpartition("@")
    if not at or "/" not in path:
        path, revision = spec.strip(), "main"
    parts = path.split("/")
    if len(parts) < 3 or not all(parts) or not revision:
        names = ", ".join(e.name for e in catalog.CATALOG)
        raise UserFacingError(f"{spec!r} is neither a catalog model ({names}) nor ORG/REPO/FILE[@REVISION].",
                              hint="See `llmspace local models`; e.g. "
                                   f"`llmspace local pull {catalog.default_entry().repo}/{catalog.default_entry().file}`.")
    problem = _spec_problem(parts, revision)
    if problem:
        raise UserFacingError(f"{spec!r} is not ORG/REPO/FILE[@REVISION]: {problem}.",
                              hint="Copy the repository, file and revision from the file's page on the Hub.")
    return HubFile(repo="/".join(parts[:2]), file="/".join(parts[2:]), revision=revision, sha256=expected,
                   sha256_source="--sha256" if expected else "", name=check_name(name or default_name(parts[-1])))


def _spec_problem(parts: list[str], revision: str) -> str:
    """Why the repository, file or revision of a typed spec cannot be a folder of ours ("" when fine):
    each becomes part of a path under `models/`."""
    for part in parts[:2]:
        if not _REPO_PART.match(part) or "--" in part or ".." in part:
            return (f"{'/'.join(parts[:2])!r} is not a Hub repository name (letters, digits, '_', '.' and '-', "
                    "no '--' or '..')")
    for what, value in (("file path", "/".join(parts[2:])), ("revision", revision)):
        for part in value.split("/"):
            if part in ("", ".", "..") or len(part.encode()) > 255 or any(c in part for c in "\\:") \
                    or not part.isprintable():
                return f"the {what} {value!r} has a part {part!r} that cannot be a file name"
    return ""


def _hub() -> Any:
    try:
        return importlib.import_module("huggingface_hub")
    except ImportError:
        raise UserFacingError("Downloading models needs the huggingface_hub package, which is not installed.",
                              hint="Install it with `pip install huggingface_hub`, or add a GGUF file you have with "
                                   "`llmspace local add PATH`.") from None


def _network_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [OSError, requests.RequestException]
    for module in ("httpx2", "httpx"):  # huggingface_hub 2.x / 1.x transports
        with contextlib.suppress(ImportError, AttributeError):
            errors.append(importlib.import_module(module).TransportError)
    return tuple(errors)


def _endpoint() -> str:
    """`HF_ENDPOINT` read now (huggingface_hub reads it once, at import: the app may have
    imported it before the variable was set), else the library's endpoint."""
    return os.environ.get("HF_ENDPOINT", "").strip().rstrip("/") or str(_hub().constants.ENDPOINT)


def _offline(hub_file: HubFile, reason: object) -> DownloadFailed:
    return DownloadFailed(
        f"Cannot reach the Hugging Face Hub at {_endpoint()} to download {hub_file.repo}/{hub_file.file}: {reason}. "
        "Nothing was downloaded.",
        cli="Check the connection (and HF_HUB_OFFLINE) and run the same command again, set HF_ENDPOINT to a "
            "mirror you can reach",
        retry="Check the connection (and HF_HUB_OFFLINE) and try again, or set HF_ENDPOINT to a mirror you can reach")


def _refused(hub_file: HubFile, status: int) -> UserFacingError:
    page = f"{_endpoint()}/{hub_file.repo}"
    if status in (401, 403):
        return UserFacingError(
            f"The Hub refused {hub_file.repo}/{hub_file.file} (HTTP {status}): the repository is gated or private "
            "(or does not exist).",
            hint=f"Accept its licence on {page} while signed in, then set HF_TOKEN to an access token with read "
                 "permission and run the same command again.")
    if status == 404:
        return UserFacingError(
            f"The Hub has no file {hub_file.file} in {hub_file.repo} at revision {hub_file.revision} (HTTP 404).",
            hint=f"Check the repository, file and revision on {page}, or see `llmspace local models`.")
    return UserFacingError(f"The Hub answered HTTP {status} for {hub_file.repo}/{hub_file.file}; nothing was installed.",
                           hint="Try again later (a partial download resumes), or set HF_ENDPOINT to a mirror.")


@dataclass(frozen=True)
class _Remote:
    url: str  # the resolve URL pinned to the commit
    commit: str
    etag: str
    size: int
    hub_sha256: str | None


def _metadata(hub_file: HubFile) -> _Remote:
    hub = _hub()
    errors = importlib.import_module("huggingface_hub.errors")
    url = hub.hf_hub_url(hub_file.repo, hub_file.file, revision=hub_file.revision, endpoint=_endpoint())
    try:
        meta = hub.get_hf_file_metadata(url, timeout=_CONNECT_TIMEOUT)
    except errors.OfflineModeIsEnabled:
        raise _offline(hub_file, "HF_HUB_OFFLINE is set") from None
    except errors.HfHubHTTPError as exc:
        status = getattr(exc.response, "status_code", 0) if exc.response is not None else 0
        raise _refused(hub_file, int(status or 0)) from None
    except _network_errors() as exc:
        raise _offline(hub_file, exc) from None
    if not meta.commit_hash or not meta.etag or meta.size is None or int(meta.size) < 0:
        raise UserFacingError(f"{_endpoint()} did not describe {hub_file.repo}/{hub_file.file} as the Hub does "
                              "(no commit, ETag or size); nothing was downloaded.",
                              hint="Check HF_ENDPOINT: it must point at the Hub or a mirror of its resolve URLs.")
    # Both name files and folders under models/: only the Hub's hexadecimal forms are taken.
    commit, etag = str(meta.commit_hash).lower(), str(meta.etag).lower()
    if not _GIT_HASH.match(commit):
        raise _not_hub(hub_file, "commit", str(meta.commit_hash), "40 hexadecimal digits")
    if not (_SHA256.match(etag) or _GIT_HASH.match(etag)):
        raise _not_hub(hub_file, "ETag", str(meta.etag), "a SHA-256 (64 hexadecimal digits) or a git hash (40)")
    return _Remote(url=hub.hf_hub_url(hub_file.repo, hub_file.file, revision=commit, endpoint=_endpoint()),
                   commit=commit, etag=etag, size=int(meta.size), hub_sha256=etag if _SHA256.match(etag) else None)


def _not_hub(hub_file: HubFile, what: str, value: str, wanted: str) -> UserFacingError:
    shown = value if len(value) <= 200 else value[:200] + "…"
    return UserFacingError(f"{_endpoint()} gave the {what} {shown!r} for {hub_file.repo}/{hub_file.file}, which is "
                           f"not {wanted} as the Hub gives: nothing was downloaded.",
                           hint="Check HF_ENDPOINT: it must point at the Hub or a faithful mirror of it.")


def _inside(models: LocalModels, *paths: Path) -> None:
    """Refuse when a path we are about to create leads outside `models/` (through a symbolic
    link planted in it, or a name that is not what the checks above let through)."""
    top = models.folder.resolve()
    for path in paths:
        real = path.resolve()
        if top not in real.parents:
            raise UserFacingError(f"{path} is outside {models.folder} (it leads to {real}): nothing was downloaded.",
                                  hint=f"Remove that link or folder from {models.folder} and run the same command "
                                       "again.")


def _repo_folder(models: LocalModels, repo: str) -> Path:
    return models.folder / ("models--" + repo.replace("/", "--"))


@contextlib.contextmanager
def _file_lock(path: Path, what: str) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserFacingError(f"Another download of {what} is running.",
                                  hint="Wait for it to finish (or stop it); this one did nothing.") from None
        yield
    finally:
        os.close(fd)


def pull(models: LocalModels, hub_file: HubFile, listener: PullListener | None = None) -> tuple[InstalledModel, bool]:
    """Download `hub_file` (resuming a partial download) and install it.
    Returns the model and whether it was already installed."""
    out: PullListener = listener or _Silent()
    existing = models.find(hub_file.name)
    if existing is not None:
        same_file = existing.repo == hub_file.repo and existing.file == hub_file.file
        if same_file and (hub_file.sha256 is None or existing.sha256 == hub_file.sha256):
            return models.resolve(existing.name), True
        models.refuse_taken(hub_file.name)
    remote = _metadata(hub_file)
    expected = hub_file.sha256
    if expected is not None and remote.hub_sha256 is not None and expected != remote.hub_sha256:
        raise UserFacingError(
            f"The Hub's SHA-256 of {hub_file.repo}/{hub_file.file} is {remote.hub_sha256}, not {expected} "
            f"(from {hub_file.sha256_source}): nothing was downloaded or installed.",
            hint="Check --sha256, or the repository and revision; with HF_ENDPOINT set, check the mirror.")
    if expected is not None:
        out.note(f"Checking SHA-256 {expected} (from {hub_file.sha256_source}).")
    elif remote.hub_sha256 is not None:
        out.note("No SHA-256 known for this file: checking only the Hub's own checksum "
                 f"({remote.hub_sha256}); give --sha256 HEX to check your own.")
    else:
        raise UserFacingError(
            f"{_endpoint()} gives no SHA-256 for {hub_file.repo}/{hub_file.file} (its ETag {remote.etag} is a git "
            "hash: the file is not stored with Git LFS) and none was given, so the download could not be checked: "
            "nothing was downloaded.",
            hint="Give the file's SHA-256 with --sha256 HEX (the Hub shows it on the file's page), or download the "
                 "file yourself and add it with `llmspace local add PATH`.")
    repo_dir = _repo_folder(models, hub_file.repo)
    blobs = repo_dir / "blobs"
    blob = blobs / remote.etag
    partial = blobs / f"{remote.etag}.incomplete"
    lock = models.folder / ".locks" / repo_dir.name / f"{remote.etag}.lock"
    snapshot = repo_dir / "snapshots" / remote.commit / hub_file.file
    ref = repo_dir / "refs" / hub_file.revision
    _inside(models, blob, partial, lock, snapshot, ref)
    blobs.mkdir(parents=True, exist_ok=True)
    with _file_lock(lock, f"{hub_file.repo}/{hub_file.file}"):
        if blob.is_file() and blob.stat().st_size == remote.size:
            out.note("The file is already in the cache; checking it.")
            digest = _hash_file(blob)
            _verify(digest, expected, remote, hub_file, blob)
        else:
            digest = _download(remote, partial, hub_file, out)
            _verify(digest, expected, remote, hub_file, partial)
            os.replace(partial, blob)
        link = _link_snapshot(repo_dir, remote, hub_file, blob)
    st = link.stat()
    model = InstalledModel(name=hub_file.name, path=link, size=st.st_size, origin="downloaded", sha256=digest,
                           mtime_ns=st.st_mtime_ns, added_at=time.time(), repo=hub_file.repo, file=hub_file.file,
                           revision=hub_file.revision, commit=remote.commit)
    return models.register(model), False


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def _verify(digest: str, expected: str | None, remote: _Remote, hub_file: HubFile, path: Path) -> None:
    wanted = expected or remote.hub_sha256
    if wanted is None or digest == wanted:
        return
    path.unlink(missing_ok=True)
    source = hub_file.sha256_source if expected else "the Hub's checksum"
    raise UserFacingError(
        f"The downloaded {hub_file.file} has SHA-256 {digest}, not {wanted} (from {source}): it was deleted and "
        "nothing was installed.",
        hint="Run the same command again to download it afresh; if it fails again, check the mirror (HF_ENDPOINT) "
             "or the expected SHA-256.")


def _download(remote: _Remote, partial: Path, hub_file: HubFile, out: PullListener) -> str:
    """Fill `partial` up to `remote.size`, resuming what is there; returns the SHA-256."""
    start = partial.stat().st_size if partial.exists() else 0
    if start > remote.size:  # left by a server that sent more than it announced: its bytes are wrong
        partial.unlink()
        start = 0
    check_free_disk(partial.parent, remote.size - start, f"{hub_file.file}")
    digest = hashlib.sha256()
    if start:
        out.note(f"Resuming at {human_size(start)} of {human_size(remote.size)} (checking the part already here).")
        with open(partial, "rb") as fh:
            remaining = start
            while remaining and (chunk := fh.read(min(1024 * 1024, remaining))):
                digest.update(chunk)
                remaining -= len(chunk)
    else:
        out.note(f"Downloading {human_size(remote.size)} from {_endpoint()}/{hub_file.repo}.")
    headers = dict(importlib.import_module("huggingface_hub.utils").build_hf_headers())
    headers["Accept-Encoding"] = "identity"
    if start:
        headers["Range"] = f"bytes={start}-"
    errors = _network_errors()
    done = start
    window = collections.deque([(time.monotonic(), start)])  # speed over the last few seconds
    try:
        with requests.get(remote.url, headers=headers, stream=True, allow_redirects=True,
                          timeout=(_CONNECT_TIMEOUT, _READ_TIMEOUT)) as response:
            if response.status_code == 416 and start == remote.size:
                return digest.hexdigest()
            if response.status_code == 416:
                partial.unlink(missing_ok=True)
                raise UserFacingError(f"The partial download of {hub_file.file} does not fit the file on the server; "
                                      "it was deleted.", hint="Run the same command again to download it afresh.")
            if response.status_code in (200, 206) and start and (
                    response.status_code == 200 or not str(response.headers.get("Content-Range", "")).startswith(
                        f"bytes {start}-")):
                out.note("The server does not resume downloads: starting again from the beginning.")
                start = done = 0
                digest = hashlib.sha256()
            if response.status_code not in (200, 206):
                raise _refused(hub_file, response.status_code)
            announced = str(response.headers.get("Content-Length", "")).strip()
            if announced and (not announced.isdigit() or start + int(announced) > remote.size):
                raise _too_long(hub_file, partial, remote)
            with open(partial, "r+b" if start else "wb") as fh:
                fh.seek(start)
                fh.truncate()
                for chunk in response.iter_content(_CHUNK):
                    if len(chunk) > remote.size - done:  # never more than the Hub announced on the disk
                        raise _too_long(hub_file, partial, remote)
                    fh.write(chunk)
                    digest.update(chunk)
                    done += len(chunk)
                    now = time.monotonic()
                    window.append((now, done))
                    while len(window) > 2 and now - window[0][0] > _SPEED_WINDOW:
                        window.popleft()
                    speed = (done - window[0][1]) / max(now - window[0][0], 1e-6)
                    eta = (remote.size - done) / speed if speed > 0 else None
                    out.progress(Progress(done=done, total=remote.size, speed=speed, eta=eta, resumed_from=start))
                fh.flush()
                os.fsync(fh.fileno())
    except UserFacingError:
        raise
    except requests.Timeout:
        raise _stopped(hub_file, partial, remote, f"the server sent nothing for {_READ_TIMEOUT:.0f} s") from None
    except requests.RequestException:
        raise _stopped(hub_file, partial, remote, "the connection was lost") from None
    except OSError as exc:  # writing the file: disk full, permissions
        raise _stopped(hub_file, partial, remote, f"could not write {partial}: {exc.strerror or exc}") from None
    except errors as exc:
        raise _stopped(hub_file, partial, remote, str(exc)) from None
    if done != remote.size:
        raise UserFacingError(
            f"The download of {hub_file.file} ended at {human_size(done)} of {human_size(remote.size)}.",
            hint="Run the same command again to resume from there.")
    return digest.hexdigest()


def _too_long(hub_file: HubFile, partial: Path, remote: _Remote) -> UserFacingError:
    partial.unlink(missing_ok=True)
    return UserFacingError(
        f"The server sent more than the {human_size(remote.size)} the Hub announced for {hub_file.file}: the "
        "download was stopped and deleted, and nothing was installed.",
        hint="Run the same command again; if it happens again, check the mirror (HF_ENDPOINT).")


def _stopped(hub_file: HubFile, partial: Path, remote: _Remote, reason: str) -> UserFacingError:
    kept = partial.stat().st_size if partial.exists() else 0
    return UserFacingError(
        f"The download of {hub_file.file} stopped at {human_size(kept)} of {human_size(remote.size)}: {reason}.",
        hint="Run the same command again to resume from there.")


def _link_snapshot(repo_dir: Path, remote: _Remote, hub_file: HubFile, blob: Path) -> Path:
    """`snapshots/<commit>/<file>` → the blob (a relative symlink, or the blob moved there where
    symlinks are not allowed), and `refs/<revision>` → the commit, as huggingface_hub lays them out."""
    link = repo_dir / "snapshots" / remote.commit / hub_file.file  # checked by `_inside` with the others
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    try:
        link.symlink_to(os.path.relpath(blob, link.parent))
    except OSError:  # pragma: no cover - Windows without developer mode
        os.replace(blob, link)
    if hub_file.revision != remote.commit:
        ref = repo_dir / "refs" / hub_file.revision
        ref.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(ref, remote.commit.encode())
    return link

