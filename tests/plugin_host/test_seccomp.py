"""llmspace/plugin_host/seccomp.py: a process that installed the filter (a real child: a
filter cannot be removed) and every program it runs can make no socket of another family
than AF_UNIX without `network` (TCP, UDP, netlink, packet, vsock), no Unix socket that could
reach a local service by its path or name without `unix-sockets` (a stream `socketpair`
keeps working: the runtimes use it), and cannot stop being its descendants' reaper."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmspace.plugin_host.seccomp import unsupported

ROOT = Path(__file__).resolve().parents[2]

CHILD = r'''
import ctypes, json, socket, subprocess, sys
from llmspace.plugin_host.seccomp import install
network, unix_sockets, path = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER, as the host's guard sets it
out = {"installed": install(network=network, unix_sockets=unix_sockets)}
def attempt(key, fn):
    try:
        fn()
        out[key] = "ok"
    except OSError as exc:
        out[key] = f"{type(exc).__name__}:{exc.errno}"
def family(number, kind=socket.SOCK_DGRAM):
    return lambda: socket.socket(number, kind).close()
def prctl_reaper_off():
    if libc.prctl(36, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl")
def connect_path():
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(20)
        s.connect(path)
        out["heard"] = s.recv(16).decode()
def dgram_pair_sendto():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendto(b"x", path)
attempt("udp4", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", 9)))
attempt("udp6", family(socket.AF_INET6))
attempt("tcp", family(socket.AF_INET, socket.SOCK_STREAM))
attempt("netlink", family(socket.AF_NETLINK))
attempt("packet", family(17, socket.SOCK_RAW))
attempt("vsock", family(40, socket.SOCK_STREAM))
attempt("unix", family(socket.AF_UNIX, socket.SOCK_STREAM))
attempt("connect", connect_path)
attempt("socketpair", lambda: [s.close() for s in socket.socketpair()])
attempt("dgram_pair", dgram_pair_sendto)
attempt("reaper_off", prctl_reaper_off)
attempt("io_uring", lambda: (_ for _ in ()).throw(OSError(ctypes.get_errno(), "io_uring"))
        if libc.syscall(425, 1, ctypes.create_string_buffer(120)) < 0 else None)
child = subprocess.run([sys.executable, "-c", "import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM)"],
                       capture_output=True, text=True)
out["child"] = "PermissionError" if "PermissionError" in child.stderr else child.stderr or "ok"
print(json.dumps(out))
'''

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or bool(unsupported()),
                                reason="the filter is installed on x86-64 Linux only")


@pytest.fixture()
def unix_server(tmp_path: Path) -> Iterator[str]:
    """A Unix stream socket server on a path (as an X11 display or a D-Bus bus is) that greets
    each connection with "hello"."""
    path = str(tmp_path / "service.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"hello")

    threading.Thread(target=serve, daemon=True).start()
    yield path
    server.close()


def _run(network: bool, unix_sockets: bool, path: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps([network, unix_sockets, path])],
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    assert out["installed"] == ""
    return out


def test_without_network_no_socket_but_a_stream_socketpair_can_be_made_here_or_in_a_program_started_after(
        unix_server: str) -> None:
    out = _run(False, False, unix_server)
    refused = "PermissionError:13"
    for key in ("udp4", "udp6", "tcp", "netlink", "packet", "vsock", "unix", "connect"):
        assert out[key] == refused, (key, out)
    assert "heard" not in out
    assert out["socketpair"] == "ok"
    assert out["dgram_pair"] == refused  # a datagram pair could send to a path (journald, syslog)
    assert out["child"] == "PermissionError"


def test_the_filter_keeps_the_host_its_descendants_reaper_and_refuses_io_uring(unix_server: str) -> None:
    for network, unix_sockets in ((False, False), (True, True)):
        out = _run(network, unix_sockets, unix_server)
        assert out["reaper_off"] == "PermissionError:1", out
        assert out["io_uring"] == "PermissionError:13", out


def test_with_network_ip_and_netlink_sockets_work_but_unix_sockets_do_not(unix_server: str) -> None:
    out = _run(True, False, unix_server)
    assert out["tcp"] == out["udp6"] == out["netlink"] == "ok", out
    assert out["unix"] == out["connect"] == "PermissionError:13"
    assert out["socketpair"] == "ok"


def test_with_unix_sockets_a_path_socket_server_answers_and_ip_stays_refused(unix_server: str) -> None:
    out = _run(False, True, unix_server)
    assert out["connect"] == "ok" and out["heard"] == "hello", out
    assert out["tcp"] == out["udp4"] == out["netlink"] == "PermissionError:13"
