"""Environment for MCP servers: `$VAR`/`${VAR}` interpolation and the login-shell PATH.

`interpolate` substitutes references in env/header values from the process environment
("Environment variable NAME is not set." when missing). `child_env` builds what a stdio
server adds to the SDK's default environment: the user's login-shell PATH (so `npx`/`uvx`
are found when the app was started from a desktop launcher) merged with the current PATH,
and, in a frozen app, `LD_LIBRARY_PATH` restored from `LD_LIBRARY_PATH_ORIG` instead of the
bundle's. No `mcp` import.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Mapping

from ..errors import UserFacingError

_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_login_path: str | None = None
_login_lock = threading.Lock()
LOGIN_SHELL_TIMEOUT = 3.0


def interpolate(value: str, environ: Mapping[str, str] | None = None) -> str:
    """Replace `$NAME` / `${NAME}` with the variable's value; raise when one is unset."""
    env = os.environ if environ is None else environ

    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name not in env:
            raise UserFacingError(f"Environment variable {name} is not set.",
                                  hint="Set it before starting LLM Space, or put the value in the MCP server settings.")
        return env[name]

    return _REF.sub(sub, value)


def interpolate_map(values: Mapping[str, str] | None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    return {k: interpolate(str(v), environ) for k, v in (values or {}).items()}


def login_shell_path() -> str:
    """PATH as the user's login shell sets it (run once, cached); the current PATH on failure."""
    global _login_path
    with _login_lock:
        if _login_path is None:
            current = os.environ.get("PATH", "")
            shell = os.environ.get("SHELL") or ""
            found = ""
            if shell and sys.platform != "win32":
                try:
                    out = subprocess.run([shell, "-lc", 'printf %s "$PATH"'], capture_output=True, text=True,
                                         timeout=LOGIN_SHELL_TIMEOUT, stdin=subprocess.DEVNULL, env=_clean_env())
                    if out.returncode == 0:
                        found = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
                except (OSError, subprocess.SubprocessError):
                    found = ""
            _login_path = merge_paths(found, current) if found else current
        return _login_path


def merge_paths(first: str, second: str) -> str:
    """Entries of `first`, then those of `second` not already present (order kept)."""
    seen: list[str] = []
    for entry in first.split(os.pathsep) + second.split(os.pathsep):
        if entry and entry not in seen:
            seen.append(entry)
    return os.pathsep.join(seen)


def _clean_env() -> dict[str, str]:
    env = dict(os.environ)
    if getattr(sys, "frozen", False):
        env.pop("LD_LIBRARY_PATH", None)
        if "LD_LIBRARY_PATH_ORIG" in env:
            env["LD_LIBRARY_PATH"] = env["LD_LIBRARY_PATH_ORIG"]
    return env


def child_env(configured: Mapping[str, str] | None) -> dict[str, str]:
    """Variables a stdio server gets on top of the SDK's defaults (configured ones win)."""
    env: dict[str, str] = {"PATH": login_shell_path()}
    if getattr(sys, "frozen", False) and os.environ.get("LD_LIBRARY_PATH_ORIG"):
        env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH_ORIG"]
    env.update(interpolate_map(configured))
    return env
