"""A seccomp filter that keeps a confined plugin host off the network and off local services
beyond what Landlock covers (Landlock's network rules cover TCP connect and bind only, and no
Landlock ABI before 9 covers connecting to a Unix socket by its path: without this a plugin
declaring nothing could still send UDP, open netlink or packet sockets, or talk to an X11
display or a D-Bus bus). Raw prctl/seccomp system calls with a classic BPF program built
with struct; standard library only (guard.py runs this file from its source at the
JavaScript host's start, like landlock.py).

    reason = install(network=False, unix_sockets=False)   # "" when installed; else why not

Once installed, in this process and everything it execs (the filter survives `execve`
under no_new_privs):
- without `network`, `socket()` of every family but AF_UNIX fails with EACCES
  (`PermissionError`): no TCP, UDP, raw IP, netlink, packet, vsock … socket;
- without `unix-sockets`, `socket(AF_UNIX, …)` fails the same way (so nothing can connect to
  a Unix socket by path or abstract name, nor bind one), and `socketpair` works for stream
  pairs only (a datagram pair could still send to a path: journald, syslog). The runtimes
  need nothing more: their pipes, stdio and child-process channels are pipes or stream
  socketpairs, and no socket is inherited (the app starts a host with its own pipes only);
- `io_uring_setup` is refused (its rings can open and connect sockets without these calls;
  the runtimes fall back to threads);
- `prctl(PR_SET_CHILD_SUBREAPER, …)` is refused (EPERM): the host made itself the reaper of
  its descendants before (guard.py), so a process a plugin starts stays in its host's tree
  even after `setsid` and the end of its parent (llmspace/plugins/hosts/proctree.py).
x86-64 only: elsewhere nothing is installed and the reason says so; 32-bit (i386) calls on
x86-64 get the same rules (their `socketcall` multiplexer is refused), x32 calls none at all.
"""

from __future__ import annotations

import ctypes
import os
import struct

AUDIT_ARCH_X86_64, AUDIT_ARCH_I386 = 0xC000003E, 0x40000003
X32_BIT = 0x40000000
# (socket, socketpair, prctl, io_uring_setup) per architecture
X86_64_CALLS = (41, 53, 157, 425)
I386_CALLS = (359, 360, 172, 425)
I386_SOCKETCALL, SYS_SECCOMP = 102, 317
AF_UNIX, SOCK_STREAM, SOCK_TYPE_MASK = 1, 1, 0xF
PR_SET_CHILD_SUBREAPER = 36
EPERM, EACCES = 1, 13
PR_SET_NO_NEW_PRIVS, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC = 38, 1, 1
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
NR, ARCH, ARG0, ARG1 = 0, 4, 16, 24
LD_W_ABS, AND_K, JEQ_K, JGE_K, RET_K = 0x20, 0x54, 0x15, 0x35, 0x06
JUMPS = (JEQ_K, JGE_K)


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _assemble(lines: list[tuple[object, ...]]) -> list[bytes]:
    """BPF from lines `(label,)` or `(code, k)` or `(code, k, then_label, else_label)` (a
    label "" goes on with the next instruction)."""
    where: dict[str, int] = {}
    count = 0
    for line in lines:
        if len(line) == 1:
            where[str(line[0])] = count
        else:
            count += 1
    out: list[bytes] = []
    for line in lines:
        if len(line) == 1:
            continue
        code, k = int(line[0]), int(line[1])  # type: ignore[call-overload]
        here = len(out)
        jt = jf = 0
        if code in JUMPS:
            jt, jf = (where[str(t)] - here - 1 if t else 0 for t in line[2:4])
        out.append(_op(code, k, jt, jf))
    return out


def program(network: bool = False, unix_sockets: bool = False) -> list[bytes]:
    """The filter, one BPF instruction each."""
    ip_family = "allow" if network else "deny"  # a family other than AF_UNIX
    unix = "allow" if unix_sockets else "deny"
    pair = "allow" if unix_sockets else "pair_type"
    lines: list[tuple[object, ...]] = [
        (LD_W_ABS, ARCH),
        (JEQ_K, AUDIT_ARCH_X86_64, "", "i386"),
        (LD_W_ABS, NR),
        (JGE_K, X32_BIT, "deny", ""),
    ]
    for arch, calls in (("x86_64", X86_64_CALLS), ("i386", I386_CALLS)):
        sock, sockpair, prctl, uring = calls
        if arch == "i386":
            lines += [("i386",), (JEQ_K, AUDIT_ARCH_I386, "", "allow"), (LD_W_ABS, NR),
                      (JEQ_K, I386_SOCKETCALL, "deny", "")]
        lines += [(JEQ_K, uring, "deny", ""), (JEQ_K, prctl, f"{arch}_prctl", ""),
                  (JEQ_K, sockpair, pair, ""), (JEQ_K, sock, "", "allow"),
                  (LD_W_ABS, ARG0), (JEQ_K, AF_UNIX, unix, ip_family),
                  (f"{arch}_prctl",), (LD_W_ABS, ARG0), (JEQ_K, PR_SET_CHILD_SUBREAPER, "eperm", "allow")]
    lines += [("pair_type",), (LD_W_ABS, ARG1), (AND_K, SOCK_TYPE_MASK), (JEQ_K, SOCK_STREAM, "allow", "deny"),
              ("allow",), (RET_K, RET_ALLOW),
              ("deny",), (RET_K, RET_ERRNO | EACCES),
              ("eperm",), (RET_K, RET_ERRNO | EPERM)]
    return _assemble(lines)


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


def install(network: bool = False, unix_sockets: bool = False) -> str:
    """Install the filter on every thread of this process; "" when it is in place, else the
    reason it is not (the caller records it: the host runs without the filter, fail-open)."""
    why = unsupported()
    if why:
        return why
    code = b"".join(program(network, unix_sockets))
    prog = _SockFprog(len(code) // 8, code)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}"
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(SYS_SECCOMP, ctypes.c_ulong(SECCOMP_SET_MODE_FILTER), ctypes.c_ulong(SECCOMP_FILTER_FLAG_TSYNC),
                    ctypes.byref(prog)) != 0:
        return f"seccomp(SET_MODE_FILTER) failed: {os.strerror(ctypes.get_errno())}"
    return ""
