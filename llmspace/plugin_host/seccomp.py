"""A seccomp filter that keeps a plugin host off the IP network beyond what Landlock covers
(Landlock's network rules cover TCP connect and bind only: without this a plugin declaring
no `network` could still send UDP, DNS included). Raw prctl/seccomp system calls with a
classic BPF program built with struct; standard library only (guard.py runs this file from
its source at the JavaScript host's start, like landlock.py).

    reason = deny_ip_sockets()   # "" when installed; else why not (the host then runs without it)

Once installed, `socket(AF_INET | AF_INET6, …)` fails with EACCES (`PermissionError`) in this
process and everything it execs (the filter survives `execve` under no_new_privs), so no
TCP, UDP or raw IP socket can be made; Unix sockets and `socketpair` keep working (the
runtimes use them). `io_uring_setup` is refused too (its rings can open sockets without the
`socket` call; the runtimes fall back to threads). x86-64 only: elsewhere nothing is
installed and the reason says so; 32-bit (i386) socket calls on x86-64 are refused the same
way, and x32 system calls altogether.
"""

from __future__ import annotations

import ctypes
import os
import struct

AUDIT_ARCH_X86_64, AUDIT_ARCH_I386 = 0xC000003E, 0x40000003
X32_BIT = 0x40000000
SYS_SOCKET, SYS_IO_URING_SETUP, SYS_SECCOMP = 41, 425, 317  # x86-64
I386_SOCKETCALL, I386_SOCKET = 102, 359
AF_INET, AF_INET6, EACCES = 2, 10, 13
PR_SET_NO_NEW_PRIVS, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC = 38, 1, 1
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
DENY = RET_ERRNO | EACCES
# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
NR, ARCH, ARG0 = 0, 4, 16
LD_W_ABS, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program() -> list[bytes]:
    """The filter, one BPF instruction each (jumps count the instructions they skip)."""
    return [
        _op(LD_W_ABS, ARCH),                           # 0
        _op(JEQ_K, AUDIT_ARCH_X86_64, 0, 8),           # 1  → 10 (i386) when not x86-64
        _op(LD_W_ABS, NR),                             # 2
        _op(JGE_K, X32_BIT, 14, 0),                    # 3  x32 → 18 deny
        _op(JEQ_K, SYS_IO_URING_SETUP, 13, 0),         # 4  → 18 deny
        _op(JEQ_K, SYS_SOCKET, 0, 11),                 # 5  → 17 allow when not socket
        _op(LD_W_ABS, ARG0),                           # 6  the address family (low half of args[0])
        _op(JEQ_K, AF_INET, 10, 0),                    # 7  → 18 deny
        _op(JEQ_K, AF_INET6, 9, 0),                    # 8  → 18 deny
        _op(RET_K, RET_ALLOW),                         # 9
        _op(JEQ_K, AUDIT_ARCH_I386, 0, 6),             # 10 → 17 allow (another architecture)
        _op(LD_W_ABS, NR),                             # 11
        _op(JEQ_K, I386_SOCKETCALL, 5, 0),             # 12 → 18 deny (every socket call of i386)
        _op(JEQ_K, I386_SOCKET, 0, 3),                 # 13 → 17 allow when not socket
        _op(LD_W_ABS, ARG0),                           # 14
        _op(JEQ_K, AF_INET, 2, 0),                     # 15 → 18 deny
        _op(JEQ_K, AF_INET6, 1, 0),                    # 16 → 18 deny
        _op(RET_K, RET_ALLOW),                         # 17
        _op(RET_K, DENY),                              # 18
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def unsupported() -> str:
    """Why the filter cannot be installed on this system ("" when it can)."""
    machine = os.uname().machine if hasattr(os, "uname") else ""
    if machine != "x86_64":
        return f"the seccomp filter is built for x86-64 only, not {machine or 'this system'}"
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            if "\nSeccomp:" not in f.read():
                return "this kernel has no seccomp"
    except OSError:
        return "this kernel has no seccomp"
    return ""


def deny_ip_sockets() -> str:
    """Install the filter on every thread of this process; "" when it is in place, else the
    reason it is not (the caller records it: the host runs without the filter, fail-open)."""
    why = unsupported()
    if why:
        return why
    code = b"".join(program())
    prog = _SockFprog(len(code) // 8, code)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}"
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(SYS_SECCOMP, ctypes.c_ulong(SECCOMP_SET_MODE_FILTER), ctypes.c_ulong(SECCOMP_FILTER_FLAG_TSYNC),
                    ctypes.byref(prog)) != 0:
        return f"seccomp(SET_MODE_FILTER) failed: {os.strerror(ctypes.get_errno())}"
    return ""
