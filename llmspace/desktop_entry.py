"""Registering the `llm-space://` and `llm-space-dev://` link schemes with the desktop, so a
link clicked in a browser or a chat starts LLM Space (or reaches the running window,
llmspace/instance.py).

    llmspace --install-desktop-entry     write the entry for this OS (below)
    llmspace --uninstall-desktop-entry   remove it again
    register_on_start()                  Windows, frozen app: write the entry on its first start

- **Linux** (and other XDG desktops): `$XDG_DATA_HOME/applications/llm-space.desktop`
  (default `~/.local/share`) with `Exec=<executable> %u` and
  `MimeType=x-scheme-handler/llm-space;x-scheme-handler/llm-space-dev;`, and the icon as
  `$XDG_DATA_HOME/icons/hicolor/256x256/apps/llm-space.png`; then `update-desktop-database`
  and `xdg-mime default llm-space.desktop …` when they are installed (not required: most
  desktops read the folder by themselves).
- **Windows**: per-user keys `HKCU\\Software\\Classes\\llm-space` and `…\\llm-space-dev` (no
  administrator rights needed): `URL Protocol`, `DefaultIcon` and
  `shell\\open\\command` = `"<exe>" "%1"`. The windowed executable writes them on its first start
  (and again when the executable they name no longer exists); the console executable
  `llmspace-cli*.exe` never does, and registers its windowed sibling when asked to install.
  Registry access goes through a `RegistryWriter` so tests inject a fake; `winreg` is imported
  only on Windows.
- **macOS**: the app bundle's Info.plist declares the schemes (build/release_info.py), so there
  is nothing to install; links arrive as Apple events (llmspace/ui/main.py).

Imports only the standard library.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger("llmspace.desktop_entry")

SCHEMES = ("llm-space", "llm-space-dev")
ENTRY_NAME = "llm-space"
DESKTOP_FILE = f"{ENTRY_NAME}.desktop"
ICON_SOURCE = Path(__file__).resolve().parent / "assets" / "icons" / "llmspace-256.png"
CLASSES = r"Software\Classes"
TOOL_WAIT = 15.0
FLAGS = ("--install-desktop-entry", "--uninstall-desktop-entry")

# Runs an external tool (update-desktop-database, xdg-mime): argv -> (exit code, output).
ToolRunner = Callable[[list[str]], tuple[int, str]]


def launch_command() -> list[str]:
    """How the desktop should start this app: the frozen executable, the `llmspace` script a
    pip/pipx install made, or this Python with `-m llmspace`. The interpreter's path is made
    absolute but not resolved: a virtual environment's `python` is a link to the base
    interpreter, which cannot import what the environment installed."""
    if getattr(sys, "frozen", False):
        return [str(Path(sys.executable).resolve())]
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name.lower() in ("llmspace", "llmspace.exe") and script.is_file():
        return [str(script.resolve())]
    return [os.path.abspath(sys.executable), "-m", "llmspace"]


# -- Linux / XDG ---------------------------------------------------------------------------

def data_home(env: Mapping[str, str] | None = None) -> Path:
    """$XDG_DATA_HOME when it is an absolute path (the spec ignores relative ones), else ~/.local/share."""
    value = (os.environ if env is None else env).get("XDG_DATA_HOME", "")
    return Path(value) if value and os.path.isabs(value) else Path.home() / ".local" / "share"


def desktop_file_path(env: Mapping[str, str] | None = None) -> Path:
    return data_home(env) / "applications" / DESKTOP_FILE


def icon_path(env: Mapping[str, str] | None = None) -> Path:
    return data_home(env) / "icons" / "hicolor" / "256x256" / "apps" / f"{ENTRY_NAME}.png"


def exec_arg(arg: str) -> str:
    """One argument of an `Exec=` line: double-quoted with `"`, `` ` ``, `$` and `\\` escaped (the
    Desktop Entry quoting rule), `%` doubled (field codes), then backslashes doubled once more
    (the string-value escape, applied before the quoting rule is read)."""
    quoted = '"' + re.sub(r'(["`$\\])', r"\\\1", arg) + '"'
    return quoted.replace("%", "%%").replace("\\", "\\\\")


def desktop_file_text(command: list[str]) -> str:
    mime = "".join(f"x-scheme-handler/{s};" for s in SCHEMES)
    return "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.0",
        "Name=LLM Space",
        "GenericName=Prompt and agent workbench",
        "Comment=Write, run, debug and evaluate prompts and agents on local files",
        "Exec=" + " ".join(exec_arg(a) for a in command) + " %u",
        f"Icon={ENTRY_NAME}",
        "Terminal=false",
        "Categories=Development;",
        f"MimeType={mime}",
        "StartupNotify=true",
        "",
    ])


def tool_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a system tool started by the frozen app: PyInstaller's bootloader
    points LD_LIBRARY_PATH at the bundle's libraries, which must not leak into system programs."""
    out = dict(os.environ if env is None else env)
    if getattr(sys, "frozen", False):
        original = out.pop("LD_LIBRARY_PATH_ORIG", None)
        if original:
            out["LD_LIBRARY_PATH"] = original
        else:
            out.pop("LD_LIBRARY_PATH", None)
    return out


def run_tool(argv: list[str]) -> tuple[int, str]:
    """Run a desktop tool if it is installed: (exit code, output); 127 when it is missing."""
    exe = shutil.which(argv[0])
    if exe is None:
        return 127, f"{argv[0]} is not installed"
    try:
        proc = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=TOOL_WAIT,
                              env=tool_environment(), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 1, str(exc)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def _refresh(run: ToolRunner, applications: Path, *, set_default: bool) -> list[str]:
    notes = []
    code, out = run(["update-desktop-database", "-q", str(applications)])
    if code not in (0, 127):
        notes.append(f"update-desktop-database failed ({code}): {out}")
    if set_default:
        code, out = run(["xdg-mime", "default", DESKTOP_FILE, *(f"x-scheme-handler/{s}" for s in SCHEMES)])
        if code not in (0, 127):
            notes.append(f"xdg-mime default failed ({code}): {out}")
    return notes


def install_xdg(command: list[str] | None = None, env: Mapping[str, str] | None = None,
                run: ToolRunner = run_tool) -> list[str]:
    """Write the desktop file and the icon; returns lines to print."""
    desktop, icon = desktop_file_path(env), icon_path(env)
    desktop.parent.mkdir(parents=True, exist_ok=True)
    icon.parent.mkdir(parents=True, exist_ok=True)
    _write(desktop, desktop_file_text(command or launch_command()).encode("utf-8"))
    _write(icon, ICON_SOURCE.read_bytes())
    lines = [f"Wrote {desktop}", f"Wrote {icon}"]
    lines += _refresh(run, desktop.parent, set_default=True)
    lines.append("llm-space:// and llm-space-dev:// links now open LLM Space.")
    return lines


def uninstall_xdg(env: Mapping[str, str] | None = None, run: ToolRunner = run_tool) -> list[str]:
    lines = []
    for path in (desktop_file_path(env), icon_path(env)):
        if path.exists():
            path.unlink()
            lines.append(f"Removed {path}")
    if not lines:
        return ["No desktop entry was installed."]
    return lines + _refresh(run, desktop_file_path(env).parent, set_default=False)


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# -- Windows ---------------------------------------------------------------------------------

class RegistryWriter(Protocol):
    """The part of the per-user registry (HKEY_CURRENT_USER) this module uses."""

    def get(self, key: str, name: str = "") -> str | None: ...
    def set(self, key: str, name: str, value: str) -> None: ...
    def delete_tree(self, key: str) -> None: ...


class WinRegistry:
    """RegistryWriter over `winreg`, HKEY_CURRENT_USER (Windows only)."""

    def __init__(self) -> None:
        self.winreg: Any = importlib.import_module("winreg")  # Windows only

    def get(self, key: str, name: str = "") -> str | None:
        try:
            with self.winreg.OpenKey(self.winreg.HKEY_CURRENT_USER, key) as handle:
                value, _kind = self.winreg.QueryValueEx(handle, name)
        except OSError:
            return None
        return str(value)

    def set(self, key: str, name: str, value: str) -> None:
        with self.winreg.CreateKeyEx(self.winreg.HKEY_CURRENT_USER, key, 0, self.winreg.KEY_WRITE) as handle:
            self.winreg.SetValueEx(handle, name, 0, self.winreg.REG_SZ, value)

    def delete_tree(self, key: str) -> None:
        try:
            with self.winreg.OpenKey(self.winreg.HKEY_CURRENT_USER, key, 0, self.winreg.KEY_READ) as handle:
                children = []
                index = 0
                while True:
                    try:
                        children.append(self.winreg.EnumKey(handle, index))
                    except OSError:
                        break
                    index += 1
        except FileNotFoundError:
            return
        for child in children:
            self.delete_tree(f"{key}\\{child}")
        self.winreg.DeleteKey(self.winreg.HKEY_CURRENT_USER, key)


def registry_values(command: list[str]) -> list[tuple[str, str, str]]:
    """(key, value name, data) for both schemes; "" names the key's default value. The open
    command is `"<exe>" [args] "%1"`; the icon is the executable's first one."""
    line = " ".join(f'"{a}"' for a in command) + ' "%1"'
    out = []
    for scheme in SCHEMES:
        base = f"{CLASSES}\\{scheme}"
        out += [
            (base, "", f"URL:LLM Space link ({scheme})"),
            (base, "URL Protocol", ""),
            (f"{base}\\DefaultIcon", "", f'"{command[0]}",0'),
            (f"{base}\\shell\\open\\command", "", line),
        ]
    return out


def gui_executable(exe: str) -> str:
    """The executable links should start: for the console `llmspace-cli…exe`, its windowed
    sibling `llmspace…exe` in the same folder when there is one (a link must not open a console)."""
    path = Path(exe)
    if path.name.lower().startswith("llmspace-cli"):
        sibling = path.with_name("llmspace" + path.name[len("llmspace-cli"):])
        if sibling.is_file():
            return str(sibling)
    return exe


def registered_executable(reg: RegistryWriter, scheme: str = SCHEMES[0]) -> str | None:
    command = reg.get(f"{CLASSES}\\{scheme}\\shell\\open\\command")
    match = re.match(r'\s*"([^"]+)"', command or "")
    return match.group(1) if match else None


def install_windows(reg: RegistryWriter, command: list[str]) -> list[str]:
    for key, name, value in registry_values(command):
        reg.set(key, name, value)
    return [f"Registered llm-space:// and llm-space-dev:// links for {command[0]} (HKEY_CURRENT_USER\\{CLASSES})."]


def uninstall_windows(reg: RegistryWriter) -> list[str]:
    found = [s for s in SCHEMES if reg.get(f"{CLASSES}\\{s}") is not None or registered_executable(reg, s)]
    for scheme in SCHEMES:
        reg.delete_tree(f"{CLASSES}\\{scheme}")
    if not found:
        return ["No link registration was found."]
    return [f"Removed HKEY_CURRENT_USER\\{CLASSES}\\{s}" for s in found]


def register_on_start(reg: RegistryWriter | None = None, exe: str | None = None, *,
                      platform: str | None = None, frozen: bool | None = None) -> bool:
    """On Windows, in the frozen windowed executable: register the link schemes when no
    registration exists or the executable it names is gone. Never raises; True when it wrote."""
    platform = sys.platform if platform is None else platform
    frozen = bool(getattr(sys, "frozen", False)) if frozen is None else frozen
    exe = sys.executable if exe is None else exe
    if platform != "win32" or not frozen or Path(exe).name.lower().startswith("llmspace-cli"):
        return False
    try:
        reg = WinRegistry() if reg is None else reg
        current = registered_executable(reg)
        if current is not None and os.path.isfile(current):
            return False
        install_windows(reg, [exe])
        return True
    except Exception:  # the app starts regardless
        log.warning("could not register the llm-space:// link scheme", exc_info=True)
        return False


# -- the two flags ---------------------------------------------------------------------------

def main(args: list[str], *, platform: str | None = None, reg: RegistryWriter | None = None,
         env: Mapping[str, str] | None = None, run: ToolRunner = run_tool) -> int:
    """`--install-desktop-entry` / `--uninstall-desktop-entry`: print what was done; 0 = done."""
    platform = sys.platform if platform is None else platform
    install = args[0] == FLAGS[0]
    try:
        if platform == "darwin":
            lines = [("Nothing to do on macOS: the app bundle declares llm-space:// and llm-space-dev:// links "
                     "(move LLM Space.app to Applications and open it once; to remove, move it to the Trash).")]
        elif platform == "win32":
            registry = WinRegistry() if reg is None else reg
            command = launch_command()
            command[0] = gui_executable(command[0])
            lines = install_windows(registry, command) if install else uninstall_windows(registry)
        else:
            lines = install_xdg(env=env, run=run) if install else uninstall_xdg(env=env, run=run)
    except OSError as exc:
        print(f"llmspace: {'installing' if install else 'removing'} the desktop entry failed: {exc}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0
