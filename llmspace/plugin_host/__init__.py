"""The Python plugin host: the process `python -m llmspace --plugin-host` (or the frozen
executable with the flag) that runs one plugin's Python code files for the app, speaking
`docs/plugin-protocol.md` over its stdin and stdout.

Standard library and `llmspace.plugin_api` only, so it starts fast. `main()` first takes
the protocol's streams for itself (private duplicates of file descriptors 0 and 1), points
file descriptor 1 and `sys.stdout` at stderr and stdin at the null device, so whatever
plugin code prints lands in the plugin's log and never in the protocol; then it serves
until `shutdown` or the end of its input, and exits at once (running calls are not waited
for). Modules: `rpc` (the connection), `server` (the router), `loading` (imports and the
contract), `calls` (running calls), `context` and `signals` (what plugin code gets),
`plainjson` (read-only views and the strict JSON check), `guard` (dies with the app, memory
limit), `landlock` and `seccomp` (the plugin's confinement, docs/plugins.md "Capabilities").
"""

from __future__ import annotations

import os
import signal
import sys
from typing import NoReturn

__all__ = ["main"]


def main() -> int:
    """Run the host; never returns (the process exits with 0 after `shutdown` or end of input)."""
    from .guard import guard

    memory = os.environ.get("LLM_SPACE_HOST_MEMORY_MB", "")
    guard(int(memory) if memory.isdigit() else None)  # die with the app; stay under the memory limit
    from .landlock import apply_plan
    from .seccomp import install

    apply_plan(install)  # Landlock and seccomp, as the plugin's capabilities say (before any plugin code)
    proto_in, proto_out = _take_stdio()
    # The app ends the host (end of input, shutdown, kill); a Ctrl-C that reaches the whole
    # process group must not. A handler, not SIG_IGN, so plugins' child processes get the default.
    signal.signal(signal.SIGINT, lambda _sig, _frame: None)
    from .rpc import Connection
    from .server import Host

    conn = Connection(os.fdopen(proto_in, "rb"), proto_out)
    conn.serve(Host(conn).dispatch)
    _exit(0)


def _take_stdio() -> tuple[int, int]:
    proto_in, proto_out = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    return proto_in, proto_out


def _exit(code: int) -> NoReturn:
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
