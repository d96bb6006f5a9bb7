"""Landlock (Linux ≥ 5.13) through its three system calls, with ctypes: a process confines
itself, and every program it execs after, to the files and TCP ports it lists. Standard
library only (no maintained PyPI package exists); used by the plugin hosts (guard.py).

    abi_version()                        # 0: no Landlock here; else the kernel's ABI (1…)
    confine(Rules(read=[…], write=[…], execute=[…], connect_tcp=False))
    apply_plan()                         # the app's plan in $LLM_SPACE_HOST_CONFINE, if any (a long
                                         # one in an inherited, sealed memory file: `&FD SHA256`)

`read` paths get reading (files and directory listings), `write` paths reading and every
change (create, write, remove, rename within), `execute` paths reading and running programs.
Whatever is not listed is refused with EACCES (`PermissionError`); TCP connect is refused
(EACCES) unless `connect_tcp` (ABI ≥ 4). From ABI 6 signals to processes outside the
confinement (the app) are refused (EPERM), and so are abstract Unix sockets unless
`unix_sockets`. Paths that do not exist are skipped. A rule on a
file gets only the file rights. `confine` raises `LandlockError` when it cannot apply.
"""

from __future__ import annotations

import ctypes
import os
import sys

TYPE_CHECKING = False  # not typing's: guard.py runs this file at the JavaScript host's start
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every architecture
CREATE_RULESET_VERSION = 1
PR_SET_NO_NEW_PRIVS = 38
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ = READ_FILE | READ_DIR
WRITE = (READ | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_SYM
         | REFER | TRUNCATE | IOCTL_DEV)


class LandlockError(OSError):
    """Landlock is missing here or a system call failed (errno and the step in the message)."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPort(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class Rules:
    """What a confined process may reach (plain class, no dataclasses: guard.py loads this
    file before exec'ing the runtime and every import there is start-up time)."""

    def __init__(self, read: Iterable[str] = (), write: Iterable[str] = (), execute: Iterable[str] = (),
                 connect_tcp: bool = True, allow_execute_everywhere: bool = False, unix_sockets: bool = True) -> None:
        self.read, self.write, self.execute = tuple(read), tuple(write), tuple(execute)
        self.connect_tcp, self.unix_sockets = connect_tcp, unix_sockets
        self.allow_execute_everywhere = allow_execute_everywhere  # `processes`: EXECUTE not restricted
        self.skipped: list[str] = []  # listed paths that did not exist


_libc: ctypes.CDLL | None = None


def _syscall() -> ctypes._CFuncPtr:  # type: ignore[name-defined]
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    fn = _libc.syscall
    fn.restype = ctypes.c_long
    return fn


def _fail(step: str) -> LandlockError:
    err = ctypes.get_errno()
    return LandlockError(err, f"Landlock {step} failed: {os.strerror(err)}")


def abi_version() -> int:
    """The kernel's Landlock ABI (1, 2, …), 0 when unsupported or disabled (or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _syscall()(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return int(version) if version > 0 else 0


def _fs_mask(abi: int) -> int:
    mask = (1 << 13) - 1  # ABI 1: EXECUTE … MAKE_SYM
    if abi >= 2:
        mask |= REFER
    if abi >= 3:
        mask |= TRUNCATE
    if abi >= 5:
        mask |= IOCTL_DEV
    return mask


def _add_path(ruleset: int, path: str, access: int, handled: int) -> bool:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        is_dir = os.path.isdir(f"/proc/self/fd/{fd}")
        allowed = access & handled & (0xFFFFFFFFFFFFFFFF if is_dir else FILE_RIGHTS)
        if not allowed:
            return True
        attr = _PathBeneath(allowed, fd)
        if _syscall()(SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
                      ctypes.byref(attr), ctypes.c_uint32(0)) != 0:
            raise _fail(f"add_rule({path})")
        return True
    finally:
        os.close(fd)


def confine(rules: Rules, abi: int | None = None) -> int:
    """Restrict this process (and its future children) to `rules`; returns the ABI used.
    `LandlockError` when Landlock is unavailable or a call fails (nothing is half-applied:
    the restriction is the last step)."""
    abi = abi_version() if abi is None else abi
    if abi <= 0:
        raise LandlockError(95, "Landlock is not available on this system")
    handled_fs = _fs_mask(abi)
    if rules.allow_execute_everywhere:
        handled_fs &= ~EXECUTE
    handled_net = NET_CONNECT_TCP if abi >= 4 and not rules.connect_tcp else 0
    scoped = 0
    if abi >= 6:  # no signals to processes outside (the app); no abstract sockets without `unix-sockets`
        scoped = SCOPE_SIGNAL | (0 if rules.unix_sockets else SCOPE_ABSTRACT_UNIX_SOCKET)
    attr = _RulesetAttr(handled_fs, handled_net, scoped)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    fn = _syscall()
    ruleset = fn(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise _fail("create_ruleset")
    try:
        for paths, access in ((rules.read, READ), (rules.write, WRITE), (rules.execute, READ | EXECUTE)):
            for path in _unique(paths):
                if not _add_path(int(ruleset), path, access, handled_fs):
                    rules.skipped.append(path)
        libc = _libc
        assert libc is not None
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _fail("prctl(PR_SET_NO_NEW_PRIVS)")
        if fn(SYS_RESTRICT_SELF, ctypes.c_int(int(ruleset)), ctypes.c_uint32(0)) != 0:
            raise _fail("restrict_self")
    finally:
        os.close(int(ruleset))
    return abi


def _unique(paths: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for p in paths:
        if p:
            seen.setdefault(p, None)
    return list(seen)


CONFINE_ENV = "LLM_SPACE_HOST_CONFINE"  # written by llmspace/plugins/hosts/sandbox.py::encode_plan


def decode_plan(text: str) -> Rules:
    """The plan's text form: one line per item, `r <path>`, `w <path>`, `x <path>`, `net 1`,
    `unix 1`, `proc 1` (no JSON: its import costs the JavaScript host's start several milliseconds)."""
    lists: dict[str, list[str]] = {"r": [], "w": [], "x": []}
    flags: dict[str, bool] = {"net": False, "unix": False, "proc": False}
    for line in text.split("\n"):
        kind, _, value = line.partition(" ")
        if kind in lists:
            lists[kind].append(value)
        elif kind in flags:
            flags[kind] = value == "1"
        elif line:
            raise ValueError(f"unknown plan line {line[:40]!r}")
    return Rules(lists["r"], lists["w"], lists["x"], connect_tcp=flags["net"], allow_execute_everywhere=flags["proc"],
                 unix_sockets=flags["unix"])


def read_inherited_plan(reference: str) -> str:
    """The plan in the file descriptor `reference` names (`<fd> <sha256>`: the sealed memory
    file the app made and passed to this process alone), checked against its SHA-256 and
    closed. `ValueError` when it does not match."""
    number, _, digest = reference.partition(" ")
    fd = int(number)
    chunks: list[bytes] = []
    try:
        offset = 0
        while True:  # from the start, whatever the shared offset is
            chunk = os.pread(fd, 1 << 20, offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    import hashlib  # only for a long plan: its import costs start-up time

    if hashlib.sha256(data).hexdigest() != digest:
        raise ValueError("the sandbox plan it was given does not match its checksum")
    return data.decode("utf-8")


def apply_plan(filter_syscalls: Callable[[bool, bool], str] | None = None) -> None:
    """Confine this process to the plan the app put in `CONFINE_ENV` (removed from the
    environment first); without one nothing happens. A plan that cannot be applied ends the
    process (exit 70) with the reason on stderr: a plugin never runs less confined than shown.
    Then `filter_syscalls(network, unix_sockets)` (seccomp.py's `install`) keeps it off every
    socket but what it was granted, UDP included; where it cannot (it returns why), the reason
    goes to stderr (the plugin's log) and the host runs with Landlock's rules alone."""
    text = os.environ.pop(CONFINE_ENV, "")
    if not text:
        return
    try:
        if text.startswith("&"):  # a long plan comes in an inherited memory file (an environment string is capped)
            text = read_inherited_plan(text[1:])
        rules = decode_plan(text)
        own = getattr(sys, "_MEIPASS", "")
        if own:  # the folder a frozen host runs from: the app's, or one it unpacked itself into
            rules.read = (*rules.read, own)
        confine(rules)
        why = filter_syscalls(rules.connect_tcp, rules.unix_sockets) if filter_syscalls is not None else ""
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"llm-space plugin host: could not confine the plugin ({exc}); not starting it.\n")
        sys.stderr.flush()
        os._exit(70)
    if why:
        sys.stderr.write(f"llm-space plugin host: no seccomp filter here ({why}); only Landlock's rules apply.\n")
