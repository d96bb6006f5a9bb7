"""llmspace/plugin_host/seccomp.py: a process that installed the filter (a real child: a
filter cannot be removed) and every program it runs can make no IP socket, UDP included,
while Unix sockets and socketpair keep working."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from llmspace.plugin_host.seccomp import unsupported

ROOT = Path(__file__).resolve().parents[2]

CHILD = r'''
import json, socket, subprocess, sys
from llmspace.plugin_host.seccomp import deny_ip_sockets
out = {"installed": deny_ip_sockets()}
def attempt(key, fn):
    try:
        fn()
        out[key] = "ok"
    except OSError as exc:
        out[key] = f"{type(exc).__name__}:{exc.errno}"
attempt("udp4", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", 9)))
attempt("udp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close())
attempt("tcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
attempt("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
attempt("socketpair", lambda: [s.close() for s in socket.socketpair()])
child = subprocess.run([sys.executable, "-c", "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"],
                       capture_output=True, text=True)
out["child"] = "PermissionError" if "PermissionError" in child.stderr else child.stderr or "ok"
print(json.dumps(out))
'''

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or bool(unsupported()),
                                reason="the filter is installed on x86-64 Linux only")


def test_after_the_filter_no_ip_socket_can_be_made_here_or_in_a_program_started_after() -> None:
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["installed"] == ""
    assert out["udp4"] == out["udp6"] == out["tcp"] == "PermissionError:13"
    assert out["unix"] == out["socketpair"] == "ok"
    assert out["child"] == "PermissionError"
