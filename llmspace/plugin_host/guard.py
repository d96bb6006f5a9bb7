"""What a plugin host does to itself before any plugin code runs (Linux only; elsewhere
nothing): die with the app and, for the Python host, stay under its memory limit.

    guard(memory_mb=2048)                  # the Python host, first thing in `main()`
    python -I -S guard.py RUNTIME ARGS…    # the JavaScript host: guard, then exec Node/Bun
    llmspace --plugin-guard RUNTIME ARGS…  # the same from the frozen executable (__main__.py)

`PR_SET_PDEATHSIG` (SIGKILL) ends the host when the app ends, even by kill -9. It survives
`exec`, so the JavaScript host gets it from this file run as a tiny launcher (Node and Bun
cannot call prctl), which then replaces itself with the runtime. A host whose app ended
before the flag was set (`getppid()` is no longer `LLM_SPACE_APP_PID`) exits at once. The
one-file frozen app starts its hosts (itself again) with the bootloader's variables, so they
run in the folder the app unpacked as the app's own children and the flag ties them, and
the runtime the launcher execs, to the app. A host started without those variables gets a
bootloader of its own in between, whose parent must then be the app; there the flag ties it
to that bootloader, so a kill -9 of the app leaves it to the bootloader's own exit (the end of
its input, the app's tree kill).
`RLIMIT_AS` is set only for the Python host: Node and Bun reserve far more address space
than they use. Before the exec, the app's Landlock plan (landlock.py) and the seccomp filter
(seccomp.py) are applied, so the runtime starts confined. Standard library
only.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

TYPE_CHECKING = False  # not typing's: this file runs with `-I -S` at the JavaScript host's start
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PARENT_ENV = "LLM_SPACE_APP_PID"


def guard(memory_mb: int | None = None) -> None:
    """Die with the app (SIGKILL when it ends), stay the reaper of every process started
    under this one (orphans come back here, not to the app: the host's tree holds them even
    after `setsid`; seccomp.py keeps a plugin from undoing it) and cap the address space at
    `memory_mb`."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.environ.get(PARENT_ENV, "")
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL), 0, 0, 0)
        libc.prctl(PR_SET_CHILD_SUBREAPER, ctypes.c_ulong(1), 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if parent.isdigit() and not _child_of(int(parent)):
        os._exit(1)  # the app ended before the flag was set
    if memory_mb:
        import resource

        limit = int(memory_mb) * 1024 * 1024
        try:
            _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            resource.setrlimit(resource.RLIMIT_AS, (limit if hard < 0 or limit < hard else hard, hard))
        except (OSError, ValueError):
            pass


def _child_of(app_pid: int) -> bool:
    """Whether this host still belongs to the app: its parent is the app, or — in a one-file
    frozen build, where Python runs under the executable's bootloader — the bootloader's is."""
    parent = os.getppid()
    if parent == app_pid:
        return True
    if not getattr(sys, "frozen", False):
        return False
    try:
        with open(f"/proc/{parent}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[1]) == app_pid
    except (OSError, ValueError, IndexError):
        return True  # cannot tell: the app's group and tree kill still end the host


def confine_from_source() -> None:
    """Apply the app's Landlock plan and the seccomp filter (landlock.py
    and seccomp.py beside this file, run from their source: this file runs with `-I -S`,
    without the package on sys.path, and importlib costs start-up time)."""
    if not os.environ.get("LLM_SPACE_HOST_CONFINE"):
        return
    seccomp = _run_source("seccomp.py")
    _run_source("landlock.py")["apply_plan"](seccomp["install"])  # type: ignore[operator]


def _run_source(name: str) -> dict[str, object]:
    """The globals of our own module `name`, loaded by path."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    with open(path, encoding="utf-8") as f:
        code = compile(f.read(), path, "exec")
    namespace: dict[str, object] = {"__name__": "_llmspace_" + name[:-3]}
    exec(code, namespace)
    return namespace


def exec_guarded(argv: list[str], confine: Callable[[], None] = confine_from_source) -> NoReturn:
    """`guard()`, the Landlock plan (`confine`: the frozen executable passes landlock.py's
    `apply_plan`, having no source files; the runtime itself stays executable), then replace
    this process with `argv` (the JavaScript runtime)."""
    guard()
    confine()
    os.execv(argv[0], argv)


if __name__ == "__main__":
    exec_guarded(sys.argv[1:])
