"""The engine's watchdog: `python -m llmspace.local.supervisor`, one per data root.

Started (in its own session, so it outlives the command that started it) by `engine.py`,
which writes its configuration as one JSON object on stdin (the API key never appears on a
command line). In the frozen executable it is the executable itself, `llmspace
--local-supervisor` (llmspace/__main__.py), and runs the llama-server bundled in it from its
own unpack folder (`bundled_binary`; the configuration's `binary` is null): the one-file
executable deletes the folder it unpacked itself into when it exits, and this process lives
exactly as long as the engine, while the command that started it may be gone in a second
(docs/release.md). It:

1. takes `run/local-engine.lock` for its whole life (already taken: it exits, another
   supervisor serves this data root);
2. starts `llama-server` on 127.0.0.1 with a free port, the API key in its environment, and
   (Linux) a parent-death signal, so the server can never outlive its supervisor, not even
   when the supervisor is killed with SIGKILL;
3. waits for `GET /health` to answer 200, writes `run/local-engine.json` (0600) and prints
   `ready` on stdout (or `failed: …` and exits);
4. then watches: when llama-server exits on its own it records how in
   `run/local-engine-exit.json` and exits (the next call starts a new engine); on SIGTERM or
   SIGINT (`local stop`, the app closing) it stops the server; and it stops the server once
   nobody holds `run/local-engine.busy` and `run/local-engine.used` is older than the idle
   time — so nothing is left running past the idle time even when no process of ours is.

Standard library and `engine_files` only, so it starts fast.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from . import engine_files as ef

HEALTH_TIMEOUT = 300.0  # loading a big model from a slow disk
STOP_GRACE = 10.0
PR_SET_PDEATHSIG = 1


class _Stop(Exception):
    """Raised by the signal handler to leave a wait at once."""


def _on_signal(signum: int, frame: Any) -> None:
    raise _Stop()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _healthy(port: int, key: str) -> bool:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/health", headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(req, timeout=2.0) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _say(line: str) -> None:
    """Tell the starting process how the start went; it may be gone already."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        sys.stdout.close()


def _log(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} supervisor: {message}\n")
        sys.stderr.flush()


def bundled_binary() -> Path | None:
    """The llama-server inside this frozen executable's unpack folder (build/llmspace.spec puts
    it at the top, beside its libraries), or None when not frozen or not bundled."""
    folder = getattr(sys, "_MEIPASS", None)
    if not getattr(sys, "frozen", False) or not folder:
        return None
    path = Path(folder) / ("llama-server.exe" if sys.platform == "win32" else "llama-server")
    return path if path.is_file() else None


def _server_env(cfg: dict[str, Any]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_")}
    env["LLAMA_API_KEY"] = cfg["apiKey"]
    if sys.platform.startswith("linux") and getattr(sys, "frozen", False):
        # The bundled libraries beside it, whatever run path the llama.cpp build left in it (the
        # user's own LD_LIBRARY_PATH, restored by build/rthook_environment.py, comes after).
        folder = str(Path(cfg["binary"]).parent)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (folder, env.get("LD_LIBRARY_PATH", "")) if p)
    return env


def _start_server(cfg: dict[str, Any], port: int, log: Any) -> subprocess.Popen[bytes]:
    args = [cfg["binary"], "--model", cfg["modelPath"], "--host", "127.0.0.1", "--port", str(port),
            "--ctx-size", str(cfg["contextSize"]), "--parallel", "1", "--no-webui", "--jinja"]
    if cfg.get("threads"):
        args += ["--threads", str(cfg["threads"])]
    if cfg.get("chatTemplateFile"):
        args += ["--chat-template-file", cfg["chatTemplateFile"]]
    args += [str(a) for a in cfg.get("extraArgs") or ()]
    _log(f"starting {' '.join(args)}")
    return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=_server_env(cfg),
                            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)


def _stop_server(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _idle(run: Path, idle_seconds: float) -> bool:
    busy = ef.try_lock(run / ef.BUSY)
    if busy is None:
        return False  # a request is running
    busy.close()
    used = ef.last_used(run)
    return used is None or time.time() - used >= idle_seconds


def _wait_healthy(proc: subprocess.Popen[bytes], port: int, key: str) -> bool:
    deadline = time.monotonic() + HEALTH_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if _healthy(port, key):
            return True
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(0.1)
    return False


def serve(cfg: dict[str, Any]) -> int:
    run = Path(cfg["runDir"])
    life = ef.try_lock(run / ef.LIFE_LOCK)
    if life is None:
        _say("failed: another engine is running for this data root")
        return 2
    if not cfg.get("binary"):
        bundled = bundled_binary()
        if bundled is None:
            _say("failed: this executable has no llama-server bundled")
            life.close()
            return 2
        cfg = {**cfg, "binary": str(bundled)}
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    proc: subprocess.Popen[bytes] | None = None
    try:
        with open(cfg["serverLog"], "ab", buffering=0) as log:
            for _attempt in range(3):  # the free port may be taken before llama-server binds it
                port = free_port()
                proc = _start_server(cfg, port, log)
                if _wait_healthy(proc, port, cfg["apiKey"]):
                    break
                _stop_server(proc)
                _log(f"llama-server did not become healthy (exit code {proc.returncode})")
            else:
                _say(f"failed: llama-server did not start (exit code {proc.returncode if proc else '?'})")
                return 1
            assert proc is not None
            ef.remove(run, ef.EXIT)
            ef.write_record(run, {
                "supervisorPid": os.getpid(), "pid": proc.pid, "port": port, "apiKey": cfg["apiKey"],
                "model": cfg["model"], "modelPath": cfg["modelPath"], "contextSize": cfg["contextSize"],
                "threads": cfg.get("threads") or 0, "idleSeconds": cfg["idleSeconds"],
                "startedAt": time.time(), "serverLog": cfg["serverLog"], "binary": cfg["binary"],
            })
            ef.touch_used(run)
            _log(f"ready: pid {proc.pid}, port {port}, model {cfg['model']}")
            _say("ready")
            tick = max(0.05, min(1.0, float(cfg["idleSeconds"]) / 10))
            while True:
                try:
                    code = proc.wait(tick)
                except subprocess.TimeoutExpired:
                    if _idle(run, float(cfg["idleSeconds"])):
                        _log(f"idle for {cfg['idleSeconds']:g} s: stopping")
                        break
                    continue
                _log(f"llama-server exited on its own with code {code}")
                ef.write_record_file(run, ef.EXIT, {"code": code, "at": time.time(), "pid": proc.pid,
                                                    "model": cfg["model"], "serverLog": cfg["serverLog"]})
                return 1
    except _Stop:
        _log("asked to stop")
    finally:
        with contextlib.suppress(_Stop):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            if proc is not None:
                _stop_server(proc)
            rec = ef.read_record(run)
            if rec is not None and rec.get("supervisorPid") == os.getpid():
                ef.remove(run, ef.RECORD)
            life.close()
    _log("stopped")
    return 0


def main() -> int:
    cfg = json.loads(sys.stdin.read())
    sys.stdin.close()
    return serve(cfg)


if __name__ == "__main__":
    raise SystemExit(main())
