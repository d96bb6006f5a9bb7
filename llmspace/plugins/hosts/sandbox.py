"""What a plugin host may do, from the plugin's capabilities (docs/plugins.md, "Capabilities"):
its environment and its Landlock confinement, set up by the app and applied by the host
itself before any plugin code or runtime starts (llmspace/plugin_host/landlock.py, called by
llmspace/plugin_host/__init__.py for Python and llmspace/plugin_host/guard.py before it
execs Node or Bun).

    env = confined_environment(spec, base, argv)   # the host's environment, with the plan
    plan_descriptors(env)                          # what the host inherits (a long plan), for pass_fds
    enforcement(capabilities)                      # lines for `plugins info` and the page
    node_permission_flags(spec, argv, environ)     # Node ≥ 22: its permission model as a second layer

A plugin whose capabilities are None (a legacy plugin never asked) runs as before.
Otherwise, without `environment`, a host gets only PATH, HOME, LANG, TZ, TMPDIR (a private
folder per plugin), LLM_SPACE_HOME and what the protocol needs; on Linux with Landlock it
may read its plugin folder, write its data folder (`data/plugins/<name>/`) and temp folder
(`cache/plugin-tmp/<name>/`), read the runtime's own files, and nothing else unless granted:
`read-outside-workspace` (everything but `$LLM_SPACE_HOME/settings/`),
`write-outside-workspace` (everything but `$LLM_SPACE_HOME`, writable), `network` (TCP connect, ABI ≥ 4; and on
x86-64 a socket of any family but AF_UNIX, UDP included, through the host's seccomp filter),
`unix-sockets` (Unix sockets by path or abstract name: on x86-64 through the seccomp filter,
abstract ones from ABI 6 through Landlock's scope), `processes` (running programs). `LLM_SPACE_SANDBOX=off` turns all of it off.
"""

from __future__ import annotations

import ctypes
import glob
import hashlib
import os
import sys
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contract import CAPABILITIES

if sys.platform != "win32":
    import fcntl

if TYPE_CHECKING:
    from .spec import HostSpec

SANDBOX_ENV = "LLM_SPACE_SANDBOX"
CONFINE_ENV = "LLM_SPACE_HOST_CONFINE"  # the plan, read (and removed) by plugin_host/landlock.py
GUARD_FLAG = "--plugin-guard"  # the frozen executable as the JavaScript host's launcher (host.py::guarded)
PLAN_ENV_MAX = 16 * 1024  # bytes of plan passed in the environment; a longer one in a sealed memory file
KEPT_ENV = ("PATH", "HOME", "LANG", "TZ", "LLM_SPACE_HOME", "SYSTEMROOT", "PYTHONPATH", "PYTHONIOENCODING")
# The one-file executable's bootloader variables: with them a host (this executable again) runs
# in the folder the app unpacked, as the app's own child (no second unpack of the whole bundle,
# and PR_SET_PDEATHSIG then ties it to the app, not to a bootloader in between).
FROZEN_KEPT_ENV = ("_PYI_ARCHIVE_FILE", "_PYI_APPLICATION_HOME_DIR", "_PYI_PARENT_PROCESS_LEVEL",
                   "_PYI_LINUX_PROCESS_NAME")
SYSTEM_READ = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/etc/ssl", "/etc/ca-certificates",
               "/usr/share/ca-certificates", "/etc/pki", "/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf",
               "/etc/gai.conf", "/etc/host.conf", "/etc/localtime", "/etc/ld.so.cache", "/usr/share/zoneinfo",
               "/dev/urandom", "/dev/random", "/proc/self", "/proc/meminfo", "/proc/stat", "/proc/cpuinfo",
               "/sys/fs/cgroup", "/sys/devices/system/cpu", "/proc/sys/vm/overcommit_memory",
               "/proc/sys/vm/mmap_min_addr", "/sys/kernel/mm/transparent_hugepage/enabled")
PROGRAM_READ = ("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/libexec", "/etc")
LOADERS = ("/lib64/ld-linux*.so*", "/lib/ld-linux*.so*", "/lib/*-linux-gnu/ld-linux*.so*", "/lib/ld-musl*.so*")


def sandbox_off(environ: Mapping[str, str]) -> bool:
    return environ.get(SANDBOX_ENV, "").strip().lower() in ("off", "0", "false", "no")


@lru_cache(maxsize=1)
def landlock_abi() -> int:
    """The kernel's Landlock ABI (0: none): landlock_create_ruleset(NULL, 0, VERSION), as
    llmspace/plugin_host/landlock.py asks it (the app does not import the host's modules)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        version = int(libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1)))
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def temp_folder(spec: HostSpec) -> Path:
    return spec.data_home.joinpath("cache", "plugin-tmp", *spec.plugin.split("/"))


def data_folder(spec: HostSpec) -> Path:
    return spec.data_home.joinpath("data", "plugins", *spec.plugin.split("/"))


def everything_but(excluded: Path) -> list[str]:
    """Paths that together cover the whole file system except `excluded` (what exists now):
    every sibling of `excluded` and of each of its ancestors. Symbolic links are left out: a
    rule follows them, and one pointing at an ancestor (pytest's `pytest-current`, say) would
    open `excluded` again; what they point to elsewhere is covered by its real folder."""
    out: list[str] = []
    parts = excluded.resolve().parts
    for depth in range(1, len(parts)):
        parent, keep = Path(*parts[:depth]), parts[depth]
        try:
            with os.scandir(parent) as entries:
                out += sorted(e.path for e in entries if e.name != keep and not e.is_symlink())
        except OSError:
            continue
    return out


def _not_over(paths: list[str], excluded: Path) -> list[str]:
    """`paths` without those that are `excluded` or hold it (after following links)."""
    guarded = excluded.resolve()
    return [p for p in paths if not (guarded == Path(os.path.realpath(p))
                                     or Path(os.path.realpath(p)) in guarded.parents)]


def _runtime_paths(spec: HostSpec, argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(read, execute) for the runtime itself: the interpreter and its libraries, the app's
    package, a JavaScript runtime's folder, the ELF loader."""
    package = Path(__file__).resolve().parents[2]  # llmspace/
    read = [sys.prefix, sys.base_prefix, sys.exec_prefix, str(package)]
    read += [p for p in sys.path if p and os.path.isdir(p) and "site-packages" in p]
    meipass = getattr(sys, "_MEIPASS", "")
    if meipass:
        read += [meipass, os.path.dirname(sys.executable)]
    execute: list[str] = []
    if spec.runtime == "js":
        exe = _launched_runtime(argv, str(package / "plugin_host" / "guard.py"))
        real = os.path.realpath(exe)
        read.append(str(Path(real).parent.parent))
        execute += [exe, real] + [p for pattern in LOADERS for p in glob.glob(pattern)]
    return read, execute


def _launched_runtime(argv: Sequence[str], guard: str) -> str:
    """The runtime a launcher command starts: after guard.py, after the frozen executable's
    `--plugin-guard`, or the command itself."""
    for marker in (guard, GUARD_FLAG):
        if marker in argv[:-1]:
            return argv[list(argv).index(marker) + 1]
    return argv[0]


def plan(spec: HostSpec, capabilities: Sequence[str], argv: Sequence[str]) -> dict[str, Any]:
    """The Landlock rules of a host (`encode_plan` gives `CONFINE_ENV`)."""
    caps = set(capabilities)
    read, execute = _runtime_paths(spec, argv)
    read += [str(spec.root), *SYSTEM_READ]
    write = [str(data_folder(spec)), str(temp_folder(spec)), "/dev/null"]
    settings = spec.data_home / "settings"
    if "read-outside-workspace" in caps:
        read += everything_but(settings)
    if "write-outside-workspace" in caps:
        # Never the data root's own folders (plugins/, run/, settings/, …): a plugin folder or
        # a dev entry written there runs unconfined at the next start. Its data and temp
        # folders are listed above; the workspace is written through the context API.
        write = _not_over(write + everything_but(spec.data_home), spec.data_home)
    if "processes" in caps:
        read += list(PROGRAM_READ)
    return {"read": _not_over(read, settings), "write": _not_over(write, settings),
            "execute": _not_over(execute, settings), "connectTcp": "network" in caps,
            "unixSockets": "unix-sockets" in caps, "processes": "processes" in caps}


def confined_environment(spec: HostSpec, env: dict[str, str], argv: Sequence[str]) -> dict[str, str]:
    """`env` (the host's full environment) cut down and given the Landlock plan, as the
    plugin's capabilities say; unchanged for a legacy plugin or with LLM_SPACE_SANDBOX=off."""
    caps = spec.capabilities
    if caps is None or sandbox_off(env):
        return env
    tmp = temp_folder(spec)
    for folder in (tmp, data_folder(spec)):
        folder.mkdir(parents=True, exist_ok=True)
    if "environment" not in caps:
        kept = KEPT_ENV + (FROZEN_KEPT_ENV if getattr(sys, "frozen", False) else ())
        env = {k: env[k] for k in kept if k in env}
        env["TMPDIR"] = str(tmp)
    if spec.runtime == "js":  # Bun's transpiler cache (~/.bun/…) is out of reach: one of its own
        env["BUN_RUNTIME_TRANSPILER_CACHE_PATH"] = str(tmp / ".bun-transpiler-cache")
    if sys.platform.startswith("linux") and landlock_abi() > 0:
        text = encode_plan(plan(spec, caps, argv))
        data = text.encode("utf-8")
        if len(data) > PLAN_ENV_MAX:
            # One environment string is capped by the kernel (128 KiB): a plan that lists every
            # neighbour of a data root in a crowded folder goes through a sealed memory file the
            # host inherits (never a file the plugin could swap), its SHA-256 beside it.
            text = f"&{_sealed_memory_file(data)} {hashlib.sha256(data).hexdigest()}"
        env[CONFINE_ENV] = text
    return env


def _sealed_memory_file(data: bytes) -> int:
    """A memory file holding `data`, sealed against every change (close-on-exec: only a child
    given it in `pass_fds` inherits it; `plan_descriptors` names it)."""
    fd = os.memfd_create("llm-space-plan", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                    fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def plan_descriptors(env: Mapping[str, str]) -> tuple[int, ...]:
    """The file descriptors a host started with `env` must inherit (`pass_fds`): the sealed
    plan of `confined_environment`, if it made one. The caller closes them once the host started."""
    text = env.get(CONFINE_ENV, "")
    if text.startswith("&"):
        number = text[1:].split(" ", 1)[0]
        if number.isdigit():
            return (int(number),)
    return ()


def encode_plan(rules: Mapping[str, Any]) -> str:
    """The text form llmspace/plugin_host/landlock.py::decode_plan reads (paths holding a line
    break are left out: they are then simply not reachable)."""
    lines = [f"{kind} {p}" for kind, key in (("r", "read"), ("w", "write"), ("x", "execute"))
             for p in rules[key] if "\n" not in p]
    lines += [f"net {int(bool(rules['connectTcp']))}", f"unix {int(bool(rules.get('unixSockets')))}",
              f"proc {int(bool(rules['processes']))}"]
    return "\n".join(lines)


def enforcement(capabilities: Sequence[str] | None, environ: Mapping[str, str] | None = None) -> list[str]:
    """One line per capability: granted or not, and whether this system enforces it."""
    environ = os.environ if environ is None else environ
    if capabilities is None:
        return ["enforced:    nothing (a legacy plugin never asked runs unconfined)"]
    if sandbox_off(environ):
        return [f"enforced:    nothing: {SANDBOX_ENV}=off is set, so every capability is declared, not enforced here"]
    abi = landlock_abi() if sys.platform.startswith("linux") else 0
    lines = []
    for cap in CAPABILITIES:
        state = "granted" if cap in capabilities else "refused"
        if cap == "environment":
            how = "enforced (the host's environment is cut down)"
        elif abi <= 0:
            how = "declared, not enforced here (no Landlock on this system)"
        elif cap == "network":
            how = _network_enforcement(abi)
        elif cap == "unix-sockets":
            how = _unix_enforcement(abi)
        else:
            how = f"enforced (Landlock ABI {abi})"
        lines.append(f"{cap + ':':<24} {state}, {how}")
    if abi > 0:
        lines.append("JavaScript/TypeScript files: enforced the same way (the launcher confines itself, then starts "
                     "Node or Bun; Bun can start itself again, confined the same way, so a plugin without `processes` "
                     "runs under Node 22.13 or newer when that is on PATH too)")
    return lines


def ip_filter_missing() -> str:
    """Why the host's seccomp filter (llmspace/plugin_host/seccomp.py: no IP sockets without
    `network`) is not installed on this system; "" where it is (Linux on x86-64)."""
    machine = os.uname().machine if hasattr(os, "uname") else sys.platform
    return "" if sys.platform.startswith("linux") and machine == "x86_64" else f"no seccomp filter for {machine}"


def _unix_enforcement(abi: int) -> str:
    missing = ip_filter_missing()
    if not missing:
        return "enforced (a seccomp filter: no Unix socket but stream socket pairs)"
    if abi >= 6:
        return f"enforced for abstract sockets (Landlock ABI {abi}); by path declared, not enforced here ({missing})"
    return f"declared, not enforced here ({missing})"


def _network_enforcement(abi: int) -> str:
    missing = ip_filter_missing()
    if not missing:
        tcp = f"Landlock ABI {abi} for TCP, " if abi >= 4 else ""
        return f"enforced ({tcp}a seccomp filter for UDP and every socket family but Unix)"
    if abi >= 4:
        return f"enforced for TCP (Landlock ABI {abi}); UDP declared, not enforced here ({missing})"
    return f"declared, not enforced here (Landlock ABI {abi} has no network rules; {missing})"


def node_permission_flags(spec: HostSpec, argv: Sequence[str], environ: Mapping[str, str]) -> list[str]:
    """Node's permission model (`--permission`, Node ≥ 22) as a second layer for a confined
    plugin: the same files as the Landlock plan, child processes only with `processes`.
    [] for a legacy plugin or with LLM_SPACE_SANDBOX=off. Node has no network rule before 25."""
    caps = spec.capabilities
    if caps is None or sandbox_off(environ):
        return []
    rules = plan(spec, caps, argv)
    reads = ["*"] if "read-outside-workspace" in caps else [p for p in rules["read"] if os.path.exists(p)]
    writes = [p for p in rules["write"] if os.path.exists(p)]  # the data root stays out, as under Landlock
    flags = ["--permission", *(f"--allow-fs-read={p}" for p in reads), *(f"--allow-fs-write={p}" for p in writes)]
    if "processes" in caps:
        flags.append("--allow-child-process")
    return flags
