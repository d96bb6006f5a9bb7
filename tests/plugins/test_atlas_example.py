"""The Atlas example plugin (examples/plugins/atlas): it passes `plugins check` and discovery
with every extension active, its settings schema is valid with every §5.1 type, it packs
and installs, its Python files compile, its MCP server answers over stdio (directly with
the `mcp` client and through the plugin platform with `${settings.python}`), and its code
extensions behave when called with a stand-in context (the real host runs them in the app)."""

from __future__ import annotations

import asyncio
import base64
import copy
import importlib.util
import json
import os
import py_compile
import shutil
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from llmspace.app import App
from llmspace.paths import DataRoot
from llmspace.plugins.package.check import check_plugin, failed, format_report
from llmspace.plugins.package.icon import icon_problem
from llmspace.plugins.package.install import install_zip
from llmspace.plugins.package.pack import pack
from llmspace.plugins.service import PluginService
from llmspace.plugins.settings_form import build_form

ATLAS = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "atlas"
MCP_ID = "plugin:atlas:mcp:atlas-geo"
EXTENSIONS = {
    ("skill", "city-briefing"), ("skill", "route-planner"), ("mcp", "atlas-geo"), ("model-provider", "atlas-local"),
    ("tool", "city-facts"), ("tool", "render-map"), ("command", "hello"), ("command", "stamp-title"),
    ("thread-storage", "atlas-library"), ("settings", "config"),
}


def source_files() -> set[str]:
    return {p.relative_to(ATLAS).as_posix() for p in ATLAS.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith(".pyc")}


def copy_atlas(dest: Path) -> Path:
    """A clean copy (no byte code), so running code never writes into the source tree."""
    shutil.copytree(ATLAS, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


def test_the_folder_passes_every_check() -> None:
    items = check_plugin(ATLAS)
    assert failed(items) == [], format_report(items)
    reason = next(i.reason for i in items if i.label == "extensions")
    assert reason == ("files at the discovered paths (2 command, 1 mcp, 1 model-provider, 2 skill, "
                      "1 thread-storage, 2 tool)")


def test_discovery_finds_every_extension_active(home: Path) -> None:
    copy_atlas(home / "plugins" / "atlas")
    service = PluginService(DataRoot(home))
    record = service.get("atlas")
    assert record.status == "active", record.diagnostics
    assert {(e.kind, e.id) for e in record.extensions} == EXTENSIONS
    assert all(e.status == "active" for e in record.extensions), [(e.id, e.reason) for e in record.extensions]
    assert [d for d in record.diagnostics if d.level != "info"] == []
    assert record.icon is not None and record.has_settings_form
    assert record.manifest is not None and record.manifest.title == "Atlas" and record.manifest.author
    view = service.settings_view("atlas")
    assert view.problems == () and view.form_error == ""
    assert view.values["python"] == "python3" and view.values["map"] == {"size": 256, "zoom": 1, "showGrid": True}


def test_the_settings_schema_covers_the_guide_types_and_its_defaults_validate() -> None:
    form = build_form(json.loads((ATLAS / "config.schema.json").read_text(encoding="utf-8")))
    fields = {f.key: f for f in form.walk()}
    assert len(form.fields) == 7
    assert fields["audience"].type == "string" and fields["audience"].default == "LLM Space"
    assert fields["greeting"].enum == ("Hello", "Hi", "Welcome", "Olá")
    assert fields["maxFacts"].type == "integer"
    assert fields["map"].type == "object" and fields["map.zoom"].type == "number"
    assert fields["map.showGrid"].type == "boolean"
    assert fields["favoriteCities"].type == "array" and fields["favoriteCities"].item_type == "string"
    assert fields["libraryFolder"].default == "" and fields["python"].default == "python3"
    assert all(f.title and (f.has_default or f.type == "object") for f in form.walk())
    assert form.problems(form.merge({})) == []
    assert form.problems(form.merge({"greeting": "Yo"})) != []  # the enum is enforced


def test_the_icon_is_a_valid_png_within_the_limits() -> None:
    assert icon_problem(ATLAS / "icon.png") is None


def test_skills_have_front_matter_with_name_and_description() -> None:
    for name in ("city-briefing", "route-planner"):
        text = (ATLAS / "skills" / name / "SKILL.md").read_text(encoding="utf-8")
        front = text.split("---\n")[1]
        assert f"name: {name}\n" in front and "description: " in front
    assert (ATLAS / "skills" / "city-briefing" / "references" / "briefing-template.md").is_file()


def test_the_python_files_compile(tmp_path: Path) -> None:
    py_files = sorted(ATLAS.rglob("*.py"))
    assert len(py_files) == 7
    for path in py_files:
        py_compile.compile(str(path), cfile=str(tmp_path / "out.pyc"), doraise=True)


def test_it_packs_and_installs_active(tmp_path: Path, home: Path) -> None:
    src = copy_atlas(tmp_path / "src" / "atlas")
    result = pack(src)
    assert result.path == tmp_path / "src" / "atlas-1.0.0.zip"
    with zipfile.ZipFile(result.path) as zf:
        assert set(zf.namelist()) == source_files()
    installed = install_zip(result.path, home / "plugins")
    assert installed.name == "atlas"
    record = PluginService(DataRoot(home)).get("atlas")
    assert record.status == "active" and {(e.kind, e.id) for e in record.extensions} == EXTENSIONS


# -- the MCP server ------------------------------------------------------------------------

async def _talk(folder: Path) -> tuple[list[str], Any, Any]:
    params = StdioServerParameters(command=sys.executable, args=["mcp/atlas_server.py"], cwd=str(folder))
    async with Client(params) as client:
        tools = await client.list_tools()
        distance = await client.call_tool("distance_km", {"from_city": "Lisbon", "to_city": "tokyo"})
        unknown = await client.call_tool("city_population", {"city": "Atlantis"})
        return sorted(t.name for t in tools.tools), distance, unknown


def test_the_mcp_server_lists_its_tools_and_answers_over_stdio(tmp_path: Path) -> None:
    folder = copy_atlas(tmp_path / "atlas")
    names, distance, unknown = asyncio.run(asyncio.wait_for(_talk(folder), 60))
    assert names == ["city_population", "distance_km"]
    assert distance.is_error is False
    assert distance.structured_content == {"from": "Lisbon", "to": "Tokyo", "km": pytest.approx(11142.6, abs=5)}
    assert unknown.is_error is True and "Unknown city 'Atlantis'" in unknown.content[0].text


@pytest.fixture
def app(home: Path) -> Iterator[App]:
    copy_atlas(home / "plugins" / "atlas")
    application = App(DataRoot(home))
    yield application
    application.close()


def test_the_mcp_server_runs_through_the_platform_with_the_python_setting(app: App) -> None:
    app.plugins.update_settings("atlas", [("python", sys.executable)])
    readiness = app.mcp.test(MCP_ID)
    assert readiness.status == "ready" and sorted(t.name for t in readiness.tools or []) == ["city_population", "distance_km"]
    out = app.mcp.call_tool(MCP_ID, "city_population", {"city": "lisbon"}, timeout=30)
    assert not out.isError, out.text()
    assert json.loads(out.text().split("\n\n")[0]) == {"city": "Lisbon", "country": "Portugal", "population": 545000}


# -- the code extensions, with a stand-in context ------------------------------------------

class Frozen(dict[str, Any]):
    """A read-only dict like the host's snapshots: changes refused, deepcopy gives a plain dict."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("read-only")

    __setitem__ = __delitem__ = update = pop = clear = setdefault = _refuse  # type: ignore[assignment]

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return copy.deepcopy(dict(self), memo)


class Tab:
    def __init__(self, filename: str, thread: dict[str, Any]) -> None:
        self.filename, self.thread = filename, Frozen(thread)
        self.written: list[dict[str, Any]] = []

    def write_thread(self, thread: dict[str, Any]) -> None:
        self.written.append(thread)


class Context:
    def __init__(self, settings: dict[str, Any] | None = None, variables: dict[str, Any] | None = None,
                 tab: Tab | None = None) -> None:
        form = build_form(json.loads((ATLAS / "config.schema.json").read_text(encoding="utf-8")))
        self.settings = Frozen(form.merge(settings or {}))
        self.variables = Frozen(variables or {})
        self.active_tab = tab
        self.reports: list[Any] = []

    def report(self, phase: Any, message: str | None = None) -> None:
        self.reports.append(phase)

    def create_result(self, value: Any) -> dict[str, Any]:
        return {"created": value}


@pytest.fixture
def load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    root = copy_atlas(tmp_path / "atlas")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("LLM_SPACE_HOME", str(tmp_path / "home"))

    def instance(rel: str) -> Any:
        spec = importlib.util.spec_from_file_location(f"atlas_test_{Path(rel).stem.replace('-', '_')}", root / rel)
        assert spec is not None and spec.loader is not None
        module: ModuleType = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if hasattr(module, "default"):  # the default export: `default`, else the only class of the file
            return module.default()
        classes = [v for v in vars(module).values() if isinstance(v, type) and v.__module__ == module.__name__]
        assert len(classes) == 1
        return classes[0]()

    yield instance
    sys.modules.pop("_atlas_shared", None)


def test_city_facts_uses_arguments_variables_then_settings(load: Any) -> None:
    tool = load("tools/city-facts.py")
    assert tool.name == "city_facts" and tool.parameters["additionalProperties"] is False
    out = tool.execute(Context({"maxFacts": 1}), {"city": "LISBON"})
    assert out == {"city": "Lisbon", "source": "argument", "country": "Portugal", "population": 545000,
                   "coordinates": {"lat": 38.7223, "lon": -9.1393}, "facts": ["Built on seven hills above the Tagus estuary."]}
    assert tool.execute(Context(variables={"city": "sao paulo"}), {"fields": ["country"]}) == {
        "city": "São Paulo", "source": "prompt variable", "country": "Brazil"}
    assert tool.execute(Context(), {"fields": ["population"]})["city"] == "Lisbon"  # favoriteCities[0]
    with pytest.raises(ValueError, match="Unknown city 'Atlantis'"):
        tool.execute(Context(), {"city": "Atlantis"})
    with pytest.raises(ValueError, match="Name a city"):
        tool.execute(Context({"favoriteCities": []}), {})


def test_render_map_returns_text_and_a_png(load: Any) -> None:
    tool = load("tools/render-map.py")
    out = tool.execute(Context({"map": {"size": 128, "zoom": 2}}), {"cities": ["Lisbon", "New York"]})
    text, image = out["created"]
    assert text == {"type": "text", "text": "Map of Lisbon → New York (128×64 px, zoom 2)."}
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    png = base64.b64decode(image["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png[16:24] == (128).to_bytes(4, "big") + (64).to_bytes(4, "big")
    with pytest.raises(ValueError, match="Unknown city"):
        tool.execute(Context(), {"cities": ["Gotham"]})


def test_hello_greets_from_settings_or_arguments(load: Any) -> None:
    command = load("commands/hello.py")
    assert command.display_name == "Atlas hello"
    assert command.execute(Context(), ()) == {"created": {"level": "success", "message": "Hello, LLM Space!"}}
    assert command.execute(Context({"greeting": "Olá"}), ("map", "makers"))["created"]["message"] == "Olá, map makers!"


def test_stamp_title_reports_and_stages_a_prefixed_copy(load: Any) -> None:
    command = load("commands/stamp-title.py")
    assert command.display_name == "Stamp thread title"
    thread = {"title": "plan", "context": {"messages": [{"id": "1", "role": "user", "content": []}]}}
    tab = Tab("plan.json", thread)
    ctx = Context(tab=tab)
    assert command.execute(ctx, ("Draft",))["created"] == {"level": "success", "message": "Titled plan.json '[Draft] plan'."}
    assert tab.written == [{**thread, "title": "[Draft] plan"}]
    assert tab.thread["title"] == "plan" and len(ctx.reports) >= 2
    assert all(r["phase"] and r["message"] for r in ctx.reports)
    dry = Tab("plan.json", thread)
    dry_ctx = Context(tab=dry)
    assert "Dry run" in command.execute(dry_ctx, ("Draft", "--dry-run"))["created"]["message"]
    assert dry.written == [] and len(dry_ctx.reports) == 2


@pytest.mark.parametrize(("args", "tab", "message"), [
    ((), Tab("a.json", {"title": "a"}), "Usage: stamp-title"),
    (("--dry-run",), Tab("a.json", {"title": "a"}), "Usage: stamp-title"),
    (("Draft", "--force"), Tab("a.json", {"title": "a"}), "Unknown option --force"),
    (("Draft",), None, "Open a thread"),
    (("a:b",), Tab("a.json", {"title": "a"}), "may not contain"),
    (("x" * 61,), Tab("a.json", {"title": "a"}), "at most 60 characters"),
])
def test_stamp_title_warns_about_expected_mistakes(load: Any, args: tuple[str, ...], tab: Tab | None, message: str) -> None:
    out = load("commands/stamp-title.py").execute(Context(tab=tab), args)["created"]
    assert out["level"] == "warning" and message in out["message"]
    assert tab is None or tab.written == []


def test_the_library_storage_writes_resolves_and_reads(load: Any, tmp_path: Path) -> None:
    storage = load("thread-storages/atlas-library.py")
    assert storage.deep_link_id == "atlas" and storage.capabilities == {"read": True, "write": True}
    assert callable(storage.list)  # File › Import from Storage lists the library
    ctx = Context()
    thread = {"title": "alpha", "context": {"messages": []}}
    locator = storage.write(Frozen(thread), "project/alpha", ctx)
    library = tmp_path / "home" / "data" / "plugins" / "atlas" / "library"
    assert json.loads((library / "project" / "alpha.json").read_text(encoding="utf-8")) == thread
    assert locator["id"] == "project/alpha" and locator["filename"] == "alpha.json"
    resolved = storage.resolve_latest("project/alpha?revision=latest", ctx)
    assert resolved == locator
    assert storage.resolve_latest("project/alpha/#top", ctx) == locator
    assert storage.read(resolved, ctx) == thread
    new = storage.write(thread, None, ctx)
    assert new["id"].startswith("inbox/alpha-") and storage.read(new, ctx) == thread
    assert [p.name for p in library.rglob(".*")] == []  # no temp files left


def test_the_library_storage_lists_its_threads_newest_first_by_page_and_query(load: Any, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    storage = load("thread-storages/atlas-library.py")
    ctx = Context()
    for n, ident in enumerate(("project/alpha", "project/beta", "notes")):
        storage.write({"title": f"Thread {ident.rsplit('/', 1)[-1]}"}, ident, ctx)
        library = tmp_path / "home" / "data" / "plugins" / "atlas" / "library"
        os.utime(library / f"{ident}.json", (1_700_000_000 + n, 1_700_000_000 + n))
    monkeypatch.setitem(type(storage).list.__globals__, "PAGE_SIZE", 2)  # the storage module's
    first = storage.list(ctx, {"cursor": None, "query": None})
    assert first == {"items": [{"id": "notes", "title": "Thread notes", "updatedAt": "2023-11-14T22:13:22Z"},
                               {"id": "project/beta", "title": "Thread beta", "updatedAt": "2023-11-14T22:13:21Z"}],
                     "nextCursor": "2"}
    assert [i["id"] for i in storage.list(ctx, {"cursor": "2", "query": None})["items"]] == ["project/alpha"]
    assert [i["id"] for i in storage.list(ctx, {"cursor": None, "query": "ALPHA"})["items"]] == ["project/alpha"]
    assert storage.list(ctx, {"cursor": None, "query": "nothing"}) == {"items": []}


def test_the_library_folder_setting_is_used(load: Any, tmp_path: Path) -> None:
    storage = load("thread-storages/atlas-library.py")
    ctx = Context({"libraryFolder": str(tmp_path / "lib")})
    storage.write({"title": "x"}, "x", ctx)
    assert (tmp_path / "lib" / "x.json").is_file()


@pytest.mark.parametrize("resource", [
    "../secret", "project/../../x", "/etc/passwd", "C:/x", "a\\b", "%2E%2E/x", "a/%2e%2E/b", "", "?revision=latest",
    "a//b", ".hidden", "a/./b", "x?revision=3", "a/" * 9 + "b",
])
def test_the_library_storage_refuses_unsafe_ids(load: Any, resource: str) -> None:
    storage = load("thread-storages/atlas-library.py")
    with pytest.raises(ValueError):
        storage.resolve_latest(resource, Context())


def test_a_missing_thread_is_a_clear_error(load: Any) -> None:
    with pytest.raises(FileNotFoundError, match="No thread 'project/nothing' in the Atlas library"):
        load("thread-storages/atlas-library.py").resolve_latest("project/nothing", Context())
