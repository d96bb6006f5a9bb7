"""`llmspace local pull` as a real subprocess against a loopback Hub (`HF_ENDPOINT`) and CDN."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from llmspace.errors import UserFacingError
from llmspace.jsonio import read_json
from llmspace.local import catalog
from llmspace.local.download import parse_spec
from tests.local.gguf import gguf_bytes
from tests.support.hf_hub import COMMIT, FakeHub

ROOT = Path(__file__).resolve().parents[2]
REPO = "acme/Tiny-GGUF"
FILE = "tiny.Q4_K_M.gguf"
MB = 1000 * 1000


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    server = FakeHub()
    yield server
    server.close()


def _env(home: Path, endpoint: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(LLM_SPACE_HOME=str(home), HF_ENDPOINT=endpoint, HF_HOME=str(home.parent / "hf-home"),
               HF_HUB_DISABLE_TELEMETRY="1", PYTHONUNBUFFERED="1", **extra)
    return env


def _pull(home: Path, endpoint: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "llmspace", "local", "pull", *args], cwd=ROOT,
                          env=_env(home, endpoint, **env), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=300)


def _wait_for(condition: Callable[[], Any], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _repo_dir(home: Path, repo: str = REPO) -> Path:
    return home / "models" / ("models--" + repo.replace("/", "--"))


def _index(home: Path) -> list[dict[str, Any]]:
    path = home / "models" / "llmspace-index.json"
    return list(read_json(path)["models"]) if path.exists() else []


def test_pull_shows_progress_and_installs_in_the_hub_cache_layout(home: Path, hub: FakeHub) -> None:
    data = gguf_bytes(padding=6 * MB)
    sha = hub.add(REPO, FILE, data).etag
    done = _pull(home, hub.endpoint, f"{REPO}/{FILE}")
    assert done.returncode == 0, done.stderr
    assert "checking only the Hub's own checksum" in done.stderr
    assert "100.0%  6.0 MB / 6.0 MB" in done.stderr and "MB/s" in done.stderr
    assert "Installed tiny.q4_k_m" in done.stdout and sha in done.stdout

    snapshot = _repo_dir(home) / "snapshots" / COMMIT / FILE
    assert snapshot.is_symlink() and os.readlink(snapshot) == f"../../blobs/{sha}"
    assert snapshot.read_bytes() == data
    assert (_repo_dir(home) / "refs" / "main").read_text() == COMMIT
    [entry] = _index(home)
    assert entry["origin"] == "downloaded" and entry["sha256"] == sha and entry["commit"] == COMMIT
    assert [(r.method, r.path) for r in hub.log if r.server == "hub"] == [("HEAD", f"/{REPO}/resolve/main/{FILE}"),
                                                                          ("GET", f"/{REPO}/resolve/{COMMIT}/{FILE}")]

    again = _pull(home, hub.endpoint, f"{REPO}/{FILE}")
    assert again.returncode == 0 and "already installed" in again.stdout
    assert len(hub.gets()) == 1  # nothing downloaded twice

    twice = _pull(home, hub.endpoint, f"{REPO}/{FILE}", "--name", "tiny-too")
    assert twice.returncode == 0 and "already in the cache" in twice.stderr and len(hub.gets()) == 1
    removed = subprocess.run([sys.executable, "-m", "llmspace", "local", "remove", "tiny-too"], cwd=ROOT,
                             env=_env(home, hub.endpoint), capture_output=True, text=True, timeout=300)
    assert removed.returncode == 0 and "no file deleted (another installed model uses" in removed.stdout
    assert snapshot.read_bytes() == data  # still there for tiny.q4_k_m
    removed = subprocess.run([sys.executable, "-m", "llmspace", "local", "remove", "tiny.q4_k_m"], cwd=ROOT,
                             env=_env(home, hub.endpoint), capture_output=True, text=True, timeout=300)
    assert removed.returncode == 0 and "deleted 2 file(s) we downloaded" in removed.stdout
    assert not _repo_dir(home).exists() and _index(home) == []  # blob, snapshot, refs and folders gone


def test_a_download_killed_with_kill_9_resumes_with_a_range_request(home: Path, hub: FakeHub) -> None:
    data = gguf_bytes(padding=8 * MB)
    sha = hub.add(REPO, FILE, data).etag
    hub.stall_after = 3 * MB
    partial = _repo_dir(home) / "blobs" / f"{sha}.incomplete"
    err = home.parent / "first-pull.err"
    with open(err, "w") as err_file:
        proc = subprocess.Popen([sys.executable, "-m", "llmspace", "local", "pull", f"{REPO}/{FILE}"], cwd=ROOT,
                                env=_env(home, hub.endpoint), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err_file)
        try:
            assert hub.stalled.wait(120), "the client never fetched the file"
            _wait_for(lambda: partial.exists() and partial.stat().st_size >= 2 * MB, "the partial file to grow")
            _wait_for(lambda: "left" in err.read_text(), "a progress line with the time left")
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(60)
    assert proc.returncode == -signal.SIGKILL
    kept = partial.stat().st_size
    assert 0 < kept < len(data)
    assert _index(home) == []
    listing = subprocess.run([sys.executable, "-m", "llmspace", "local", "models"], cwd=ROOT, env=_env(home, hub.endpoint),
                             capture_output=True, text=True, timeout=300)
    assert f"{REPO}: {kept / MB:.1f} MB in {partial}" in listing.stdout
    hub.release.set()
    hub.stall_after = None

    done = _pull(home, hub.endpoint, f"{REPO}/{FILE}")
    assert done.returncode == 0, done.stderr
    assert "Resuming at" in done.stderr and "100.0%" in done.stderr
    resumed = hub.gets()[-1]
    assert resumed.headers.get("range") == f"bytes={kept}-"  # the server saw the resume, not a restart
    blob = _repo_dir(home) / "blobs" / sha
    assert hashlib.sha256(blob.read_bytes()).hexdigest() == sha and not partial.exists()
    assert [m["name"] for m in _index(home)] == ["tiny.q4_k_m"]


def test_a_server_that_ignores_range_gets_the_file_again_from_the_start(home: Path, hub: FakeHub) -> None:
    data = gguf_bytes(padding=1 * MB)
    sha = hub.add(REPO, FILE, data).etag
    partial = _repo_dir(home) / "blobs" / f"{sha}.incomplete"
    partial.parent.mkdir(parents=True)
    partial.write_bytes(data[:4000])
    hub.ranges = False
    done = _pull(home, hub.endpoint, f"{REPO}/{FILE}")
    assert done.returncode == 0, done.stderr
    assert "starting again from the beginning" in done.stderr
    assert (_repo_dir(home) / "blobs" / sha).read_bytes() == data


def test_a_wrong_sha256_is_refused_before_downloading_and_nothing_is_installed(home: Path, hub: FakeHub) -> None:
    hub.add(REPO, FILE, gguf_bytes(padding=MB))
    done = _pull(home, hub.endpoint, f"{REPO}/{FILE}", "--sha256", "ab" * 32)
    assert done.returncode == 1
    assert f"is {hashlib.sha256(gguf_bytes(padding=MB)).hexdigest()}, not {'ab' * 32}" in done.stderr
    assert "nothing was downloaded or installed" in done.stderr
    assert hub.gets() == [] and _index(home) == [] and not (_repo_dir(home) / "snapshots").exists()


def test_a_file_whose_bytes_do_not_match_is_deleted_and_nothing_is_installed(home: Path, hub: FakeHub) -> None:
    data = gguf_bytes(padding=2 * MB)
    corrupt = data[:-10] + b"0123456789"
    sha = hub.add(REPO, FILE, data, served=corrupt).etag
    done = _pull(home, hub.endpoint, f"{REPO}/{FILE}", "--sha256", sha)
    assert done.returncode == 1, done.stdout
    assert f"has SHA-256 {hashlib.sha256(corrupt).hexdigest()}, not {sha} (from --sha256)" in done.stderr
    assert "it was deleted and nothing was installed" in done.stderr
    assert list((_repo_dir(home) / "blobs").iterdir()) == []
    assert _index(home) == [] and not (_repo_dir(home) / "snapshots").exists()


def test_a_catalog_model_whose_hub_checksum_differs_from_the_catalog_is_refused(home: Path, hub: FakeHub) -> None:
    entry = catalog.default_entry()
    hub.add(entry.repo, entry.file, gguf_bytes(padding=1000))
    done = _pull(home, hub.endpoint, entry.name)
    assert done.returncode == 1
    assert f"not {entry.sha256} (from the catalog)" in done.stderr and hub.gets() == []


def test_offline_says_so_and_what_to_do_instead(home: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    done = _pull(home, closed, f"{REPO}/{FILE}")
    assert done.returncode == 1
    assert f"Cannot reach the Hugging Face Hub at {closed}" in done.stderr
    assert "Nothing was downloaded" in done.stderr and "llmspace local add PATH" in done.stderr
    offline = _pull(home, closed, f"{REPO}/{FILE}", HF_HUB_OFFLINE="1")
    assert offline.returncode == 1 and "HF_HUB_OFFLINE is set" in offline.stderr
    assert _index(home) == []


def test_a_gated_file_says_to_accept_the_licence_and_set_hf_token(home: Path, hub: FakeHub) -> None:
    hub.add(REPO, FILE, gguf_bytes(padding=1000))
    hub.require_token = "hf_loopbackTokenForTests"
    refused = _pull(home, hub.endpoint, f"{REPO}/{FILE}")
    assert refused.returncode == 1
    assert "(HTTP 403)" in refused.stderr and "Accept its licence" in refused.stderr and "HF_TOKEN" in refused.stderr

    done = _pull(home, hub.endpoint, f"{REPO}/{FILE}", HF_TOKEN="hf_loopbackTokenForTests")
    assert done.returncode == 0, done.stderr
    assert hub.log[-2].headers.get("authorization") == "Bearer hf_loopbackTokenForTests"
    assert "authorization" not in hub.gets("cdn")[-1].headers  # the token never leaves the Hub's origin
    assert "hf_loopbackTokenForTests" not in done.stdout + done.stderr


def test_a_download_that_would_not_fit_on_the_disk_is_refused_before_fetching(home: Path, hub: FakeHub) -> None:
    hub.add(REPO, FILE, gguf_bytes(padding=3 * MB))
    small_disk = ("import shutil, sys\n"
                  "real = shutil.disk_usage\n"
                  "shutil.disk_usage = lambda path: real(path)._replace(free=1_000_000)\n"
                  "from llmspace.cli import main\n"
                  f"sys.exit(main(['local', 'pull', '{REPO}/{FILE}']))\n")
    done = subprocess.run([sys.executable, "-c", small_disk], cwd=ROOT, env=_env(home, hub.endpoint),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert "Not enough free disk for tiny.Q4_K_M.gguf: it needs 3.0 MB, 1.0 MB is free" in done.stderr
    assert hub.gets() == [] and _index(home) == []


def test_ctrl_c_stops_a_download_keeps_the_part_and_says_how_to_resume(home: Path, hub: FakeHub) -> None:
    data = gguf_bytes(padding=4 * MB)
    sha = hub.add(REPO, FILE, data).etag
    hub.stall_after = 2 * MB
    partial = _repo_dir(home) / "blobs" / f"{sha}.incomplete"
    proc = subprocess.Popen([sys.executable, "-m", "llmspace", "local", "pull", f"{REPO}/{FILE}"], cwd=ROOT,
                            env=_env(home, hub.endpoint), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert hub.stalled.wait(120), "the client never fetched the file"
        _wait_for(lambda: partial.exists() and partial.stat().st_size > 0, "the partial file")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        hub.release.set()
    assert proc.returncode == 130
    assert "Stopped. Run the same command again to resume" in err
    assert partial.stat().st_size > 0 and _index(home) == []


def test_a_second_pull_of_a_file_being_downloaded_is_refused_and_leaves_the_first_alone(home: Path, hub: FakeHub) -> None:
    data = gguf_bytes(padding=3 * MB)
    sha = hub.add(REPO, FILE, data).etag
    hub.stall_after = MB
    partial = _repo_dir(home) / "blobs" / f"{sha}.incomplete"
    first = subprocess.Popen([sys.executable, "-m", "llmspace", "local", "pull", f"{REPO}/{FILE}"], cwd=ROOT,
                             env=_env(home, hub.endpoint), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        assert hub.stalled.wait(120), "the client never fetched the file"
        _wait_for(lambda: partial.exists() and partial.stat().st_size > 0, "the partial file")
        second = _pull(home, hub.endpoint, f"{REPO}/{FILE}")
        assert second.returncode == 1 and "Another download of acme/Tiny-GGUF/tiny.Q4_K_M.gguf is running" in second.stderr
        assert len(hub.gets()) == 1 and partial.exists()
    finally:
        first.kill()
        first.wait(60)
        hub.release.set()


def test_a_connection_lost_mid_download_says_so_and_the_next_pull_resumes(home: Path, hub: FakeHub) -> None:
    data = gguf_bytes(padding=3 * MB)
    hub.add(REPO, FILE, data)
    hub.stall_after = MB
    hub.release.set()  # the CDN sends 1 MB, then drops the connection
    broken = _pull(home, hub.endpoint, f"{REPO}/{FILE}")
    assert broken.returncode == 1
    kept = (_repo_dir(home) / "blobs" / f"{hashlib.sha256(data).hexdigest()}.incomplete").stat().st_size
    assert 0 < kept <= MB
    assert f"The download of tiny.Q4_K_M.gguf stopped at {kept / 1000:.1f} KB of 3.0 MB: the connection was lost" in broken.stderr
    assert "Run the same command again to resume" in broken.stderr
    hub.stall_after = None
    done = _pull(home, hub.endpoint, f"{REPO}/{FILE}")
    assert done.returncode == 0, done.stderr
    assert hub.gets()[-1].headers.get("range") == f"bytes={kept}-"


def test_a_file_the_hub_does_not_have_is_reported_with_where_to_look(home: Path, hub: FakeHub) -> None:
    done = _pull(home, hub.endpoint, f"{REPO}/missing.gguf@main")
    assert done.returncode == 1
    assert "The Hub has no file missing.gguf in acme/Tiny-GGUF at revision main (HTTP 404)" in done.stderr
    assert f"{hub.endpoint}/{REPO}" in done.stderr
    bad_spec = _pull(home, hub.endpoint, "just-a-name")
    assert bad_spec.returncode == 1 and "neither a catalog model" in bad_spec.stderr


def _outside(tmp_path: Path) -> set[str]:
    return {p.name for p in tmp_path.iterdir()} - {"hf-home"}


@pytest.mark.parametrize(("header", "value"), [
    ("X-Linked-Etag", "{victim}"),  # an absolute path: the file the mirror wants replaced
    ("X-Linked-Etag", "../../../../victim.sh"),
    ("X-Linked-Etag", ".."),
    ("X-Linked-Etag", "not-a-checksum"),
    ("X-Repo-Commit", "../../../../escaped"),
    ("X-Repo-Commit", "{victim}"),
])
def test_a_mirror_whose_etag_or_commit_is_not_hex_is_refused_and_nothing_is_written_outside_models(
        home: Path, hub: FakeHub, tmp_path: Path, header: str, value: str) -> None:
    victim = tmp_path / "victim.sh"
    victim.write_text("echo mine\n")
    before = _outside(tmp_path)
    hub.add(REPO, FILE, gguf_bytes(padding=1000))
    shown = value.format(victim=victim)
    hub.resolve_headers = {header: f'"{shown}"' if header == "X-Linked-Etag" else shown}
    done = _pull(home, hub.endpoint, f"{REPO}/{FILE}")
    assert done.returncode == 1, done.stdout + done.stderr
    what = "ETag" if header == "X-Linked-Etag" else "commit"
    assert f"gave the {what} {shown!r} for {REPO}/{FILE}" in done.stderr and "nothing was downloaded" in done.stderr
    assert "Internal error" not in done.stderr
    assert victim.read_text() == "echo mine\n" and _outside(tmp_path) == before
    assert hub.gets() == [] and _index(home) == []


def test_a_typed_repository_file_or_revision_that_leaves_its_folder_is_refused() -> None:
    for spec in ("acme/Tiny-GGUF/../../x.gguf", "acme/../x.gguf", "../../acme/x.gguf", "acme/Tiny-GGUF/./x.gguf",
                 "acme/Tiny-GGUF/a\\..\\..\\x.gguf", "acme/Tiny-GGUF/x.gguf@../../../x", "acme/Tiny--GGUF/x.gguf",
                 "acme/Tiny-GGUF/x\x00.gguf", "/acme/Tiny-GGUF/x.gguf"):
        with pytest.raises(UserFacingError) as caught:
            parse_spec(spec)
        assert "ORG/REPO/FILE[@REVISION]" in caught.value.message or "cannot be" in caught.value.message, spec
    ok = parse_spec("acme/Tiny-GGUF/sub/x.Q4_K_M.gguf@refs/pr/1")
    assert (ok.repo, ok.file, ok.revision) == ("acme/Tiny-GGUF", "sub/x.Q4_K_M.gguf", "refs/pr/1")


def test_a_repository_folder_that_leads_outside_models_is_refused(home: Path, hub: FakeHub, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / "models").mkdir(parents=True)
    _repo_dir(home).symlink_to(elsewhere)
    hub.add(REPO, FILE, gguf_bytes(padding=1000))
    done = _pull(home, hub.endpoint, f"{REPO}/{FILE}")
    assert done.returncode == 1
    assert "is outside" in done.stderr and "nothing was downloaded" in done.stderr
    assert list(elsewhere.iterdir()) == [] and hub.gets() == [] and _index(home) == []


def test_a_file_the_hub_gives_no_sha256_for_needs_one_given_with_sha256(home: Path, hub: FakeHub) -> None:
    data = gguf_bytes(padding=1000)
    git_hash = "0123456789abcdef0123456789abcdef01234567"  # a file outside Git LFS: its ETag is its git hash
    hub.add(REPO, FILE, data, etag=git_hash)
    refused = _pull(home, hub.endpoint, f"{REPO}/{FILE}")
    assert refused.returncode == 1, refused.stdout
    assert "gives no SHA-256 for acme/Tiny-GGUF/tiny.Q4_K_M.gguf" in refused.stderr and "--sha256" in refused.stderr
    assert hub.gets() == [] and _index(home) == []
    sha = hashlib.sha256(data).hexdigest()
    done = _pull(home, hub.endpoint, f"{REPO}/{FILE}", "--sha256", sha)
    assert done.returncode == 0, done.stderr
    assert (_repo_dir(home) / "blobs" / git_hash).read_bytes() == data


@pytest.mark.parametrize("chunked", [True, False])
def test_a_body_longer_than_the_hub_announced_is_stopped_and_not_kept(home: Path, hub: FakeHub, chunked: bool) -> None:
    data = gguf_bytes(padding=1000)
    sha = hub.add(REPO, FILE, data, served=data + bytes(8 * MB)).etag
    hub.chunked = chunked  # without a Content-Length, or with one longer than the Hub's size
    done = _pull(home, hub.endpoint, f"{REPO}/{FILE}")
    assert done.returncode == 1
    assert f"more than the {len(data) / 1000:.1f} KB the Hub announced for {FILE}" in done.stderr
    assert "nothing was installed" in done.stderr and "100.1%" not in done.stderr
    assert not (_repo_dir(home) / "blobs" / f"{sha}.incomplete").exists() and _index(home) == []


def test_a_partial_download_larger_than_its_file_is_deleted_before_the_disk_is_checked(
        home: Path, hub: FakeHub) -> None:
    data = gguf_bytes(padding=1000)
    sha = hub.add(REPO, FILE, data).etag
    partial = _repo_dir(home) / "blobs" / f"{sha}.incomplete"
    partial.parent.mkdir(parents=True)
    partial.write_bytes(bytes(3 * MB))  # left by a mirror that sent more than it announced
    capacity = 64 * 1024 * 1024 + 2 * MB  # the pull's margin, the file, and less than the partial's 3 MB
    small_disk = ("import shutil, sys\n"
                  "from pathlib import Path\n"
                  "real = shutil.disk_usage\n"
                  f"models = Path({str(home / 'models')!r})\n"
                  "used = lambda: sum(p.stat().st_size for p in models.rglob('*') if p.is_file() and not p.is_symlink())\n"
                  f"shutil.disk_usage = lambda path: real(path)._replace(free={capacity} - used())\n"
                  "from llmspace.cli import main\n"
                  f"sys.exit(main(['local', 'pull', '{REPO}/{FILE}']))\n")
    done = subprocess.run([sys.executable, "-c", small_disk], cwd=ROOT, env=_env(home, hub.endpoint),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (_repo_dir(home) / "blobs" / sha).read_bytes() == data and not partial.exists()
