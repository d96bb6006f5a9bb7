"""The `llmspace` command line run in the test's own process, for tests about what a command
does rather than about its process (a subprocess re-imports the app: about a second of CPU on
a loaded two-core machine, for each call).

    done = cli_in_process(["threads", "list"], env={"LLM_SPACE_HOME": str(home)}, cwd=ROOT)
    done.returncode, done.stdout, done.stderr      # as subprocess.run(..., capture_output=True, text=True)

`main` gets an empty, non-terminal stdin (as `stdin=subprocess.DEVNULL`); `env` entries are set
(a value of None removes the variable) and `cwd` entered for the call only, then restored. What
a command leaves in the process is put back as a new process would have it: the `llmspace`
logger's level (the log file sets it to INFO; `main` removes the handlers it added) and the
secrets the process knows of (`redact.KNOWN` only grows: each call starts with none, as a
subprocess does, and the caller's are restored after, so a key one test configured is neither
redacted from nor hidden in another test's output). argparse's exit (usage errors, --help)
becomes the return code, as from a subprocess. A call still running after `timeout` seconds
(300; called from the main thread) is interrupted with SIGALRM and raises
`subprocess.TimeoutExpired`, as `subprocess.run(..., timeout=)` would, instead of hanging the
whole test session.
Keep a real subprocess where the process is the point: Ctrl-C and signals, a terminal, special
files that could hang a read, what reaches stderr from logging, exit codes of the interpreter.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import FrameType

from llmspace import redact
from llmspace.cli import main


@contextlib.contextmanager
def _environment(env: Mapping[str, str | None]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in env}
    try:
        for name, value in env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


TIMEOUT = 300.0


class _Expired(BaseException):
    """Raised by SIGALRM in the command's frame; a BaseException, so that `main`'s error
    boundary (`except Exception`) does not report it as the command's own error."""


@contextlib.contextmanager
def _bounded(seconds: float) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return

    def expire(_signum: int, _frame: FrameType | None) -> None:
        raise _Expired

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def cli_in_process(args: list[str], *, env: Mapping[str, str | None] | None = None,
                   cwd: Path | None = None, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """`llmspace ARGS` through `llmspace.cli.main`, its output captured."""
    out, err, stdin = io.StringIO(), io.StringIO(), sys.stdin
    logger = logging.getLogger("llmspace")
    level, known = logger.level, redact.KNOWN._redactor
    sys.stdin, redact.KNOWN._redactor = io.StringIO(), redact.Redactor()
    try:
        with (_environment(env or {}), contextlib.chdir(cwd or Path.cwd()),
              contextlib.redirect_stdout(out), contextlib.redirect_stderr(err)):
            try:
                with _bounded(timeout):
                    code = main(list(args))
            except _Expired:
                raise subprocess.TimeoutExpired(["llmspace", *args], timeout, out.getvalue(), err.getvalue()) from None
            except SystemExit as exc:  # argparse: usage errors (2), --help and --version (0)
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if isinstance(exc.code, str):
                    print(exc.code, file=sys.stderr)
    finally:
        sys.stdin, redact.KNOWN._redactor = stdin, known
        logger.setLevel(level)
    return subprocess.CompletedProcess(["llmspace", *args], code, out.getvalue(), err.getvalue())
