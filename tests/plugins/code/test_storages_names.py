"""File names of threads imported from plugin thread storages: every name the storage
gives (locator filename, thread title, resource ID) is outside text, so Windows reserved
names fall back to a safe name on every OS and bidi controls are removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.cli import main
from llmspace.plugins.code.storages import file_stem, find_storage, import_thread

from ..code_plugins import code_plugin

# The resource ID is `filename|title`: the locator carries the filename, the thread the title.
NAMED_STORAGE = '''
class Named:
    display_name = "Named"
    deep_link_id = "named"
    capabilities = {"read": True, "write": False}

    def resolve_latest(self, id, context):
        filename, _, title = id.partition("|")
        return {"id": id, "filename": filename}

    def read(self, locator, context):
        return {"title": locator["id"].partition("|")[2], "context": {"messages": []}}
'''


@pytest.mark.parametrize(("filename", "title", "resource_id", "expected"), [
    ("CON", "", "lib/x", "x"),
    ("con.json", "", "lib/x", "x"),
    ("CON", "Weekly notes", "lib/x", "Weekly notes"),
    ("lpt1.txt", "aux", "lib/nul", "imported-thread"),
    ("COM9", "", "", "imported-thread"),
    ("\u202egpj.json", "", "lib/x", "gpj"),
    ("report\u2066\u2069\u200f.json", "", "lib/x", "report"),
    ("\u061c\u200e\u202a\u202b\u202c\u202d\u2067\u2068", "\u202eplain", "lib/x", "plain"),
])
def test_a_storage_name_that_is_reserved_or_holds_bidi_controls_becomes_a_safe_name(
        filename: str, title: str, resource_id: str, expected: str) -> None:
    assert file_stem({"id": resource_id, "filename": filename}, title, resource_id) == expected


def test_a_locator_filename_con_imports_under_a_safe_name(app: App, home: Path) -> None:
    code_plugin(home, storages={"named": NAMED_STORAGE})
    storage = find_storage(app.plugin_code, "named", need="read")
    assert import_thread(storage, "CON|Weekly notes", app.workspace) == "imported/Weekly notes.json"


def test_storage_import_of_a_bidi_filename_prints_a_name_without_the_controls(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code_plugin(home, storages={"named": NAMED_STORAGE})
    assert main(["storage", "import", "named", "\u202eevil\u202c.json|t"]) == 0
    assert capsys.readouterr().out.strip() == "Imported imported/evil.json"
    assert (home / "workspace" / "imported" / "evil.json").is_file()
