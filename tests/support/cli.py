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
becomes the return code, as from a subprocess.
Keep a real subprocess where the process is the point: Ctrl-C and signals, a terminal, special
files that could hang a read, what reaches stderr from logging, exit codes of the interpreter.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

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


def cli_in_process(args: list[str], *, env: Mapping[str, str | None] | None = None,
                   cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`llmspace ARGS` through `llmspace.cli.main`, its output captured."""
    out, err, stdin = io.StringIO(), io.StringIO(), sys.stdin
    logger = logging.getLogger("llmspace")
    level, known = logger.level, redact.KNOWN._redactor
    sys.stdin, redact.KNOWN._redactor = io.StringIO(), redact.Redactor()
    try:
        with (_environment(env or {}), contextlib.chdir(cwd or Path.cwd()),
              contextlib.redirect_stdout(out), contextlib.redirect_stderr(err)):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse: usage errors (2), --help and --version (0)
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if isinstance(exc.code, str):
                    print(exc.code, file=sys.stderr)
    finally:
        sys.stdin, redact.KNOWN._redactor = stdin, known
        logger.setLevel(level)
    return subprocess.CompletedProcess(["llmspace", *args], code, out.getvalue(), err.getvalue())
