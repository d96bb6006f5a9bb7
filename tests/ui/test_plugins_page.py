"""Settings › Plugins in a real window: the list with status, a plugin's General tab
(extensions by kind, diagnostics), its generated settings form that saves as you type and
shows validation errors, enable/disable, and installing ZIPs through the picker's code
path (success notification with View plugin; a refused ZIP names the reason)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from llmspace.ui.plugins_page import PluginsPage
from tests.plugins.code_plugins import ECHO_TOOL, TEXT_TOOL, code_plugin

from .conftest import pump_until

SCHEMA = {"type": "object", "required": ["endpoint"], "properties": {
    "endpoint": {"type": "string", "title": "Endpoint", "default": "https://api.example.com"},
    "timeout": {"type": "integer", "title": "Timeout", "default": 30, "minimum": 1},
    "mode": {"type": "string", "enum": ["fast", "careful"], "default": "fast"},
    "verbose": {"type": "boolean", "default": False},
    "tags": {"type": "array", "items": {"type": "string"}},
    "net": {"type": "object", "title": "Network", "properties": {"retries": {"type": "integer", "default": 2}}},
}}


def _page(window, app, home) -> PluginsPage:
    code_plugin(home, tools={"echo": ECHO_TOOL, "plain": TEXT_TOOL}, schema=SCHEMA, displayName="Kit")
    app.plugins.refresh()
    app.plugin_code.ensure_loaded()
    dialog = window.open_settings()
    page = dialog.plugins_page
    dialog.nb.select(page)
    window.root.update()
    return page


def test_the_list_and_the_general_tab_show_the_plugin_and_its_extensions_by_kind(window, app, home):
    page = _page(window, app, home)
    assert page.list.item("kit", "text").strip() == "Kit"
    assert page.list.item("kit", "values") == ("1.0.0", "active")
    groups = [page.extensions.item(i, "text") for i in page.extensions.get_children("")]
    assert groups == ["⚒ Tools (2)", "⚙ Settings (1)"]
    tools = page.extensions.get_children(page.extensions.get_children("")[0])
    assert [page.extensions.item(i, "text") for i in tools] == ["echo", "plain"]


def test_editing_a_setting_saves_it_and_reloads_and_a_bad_value_shows_its_error(window, app, home):
    page = _page(window, app, home)
    form = page.settings_form
    assert form is not None
    timeout = form.inputs["timeout"]
    timeout.set("0")
    pump_until(window.root, lambda: "Not saved" in form.status.cget("text"), timeout=30)
    assert "minimum" in form.errors["timeout"].cget("text") or "less than" in form.errors["timeout"].cget("text")
    assert app.plugins.store.entry("kit").settings == {}
    timeout.set("45")
    pump_until(window.root, lambda: "Saved" in form.status.cget("text"), timeout=30)
    assert app.plugins.store.entry("kit").settings == {"timeout": 45}


def test_the_enable_switch_disables_and_enables_the_plugin_in_the_background(window, app, home):
    page = _page(window, app, home)
    page.enabled.set(False)
    page.toggle()
    pump_until(window.root, lambda: page.list.item("kit", "values")[1] == "disabled", timeout=30)
    assert app.plugins.get("kit").status == "disabled"
    page.enabled.set(True)
    page.toggle()
    pump_until(window.root, lambda: page.list.item("kit", "values")[1] == "active", timeout=30)


def _zip(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    path = tmp_path / f"{name}.zip"
    with zipfile.ZipFile(path, "w") as z:
        for rel, text in files.items():
            z.writestr(rel, text)
    return path


def test_install_from_the_picker_notifies_with_view_plugin_and_a_refused_zip_names_the_reason(window, app, home, tmp_path):
    good = _zip(tmp_path, "hello", {"hello/package.json": '{"name": "hello", "version": "1.2.0", '
                                    '"engines": {"llm-space": ">=4.9.0"}}', "hello/tools/plain.py": TEXT_TOOL})
    bad = _zip(tmp_path, "evil", {"../evil/package.json": "{}"})
    window.dialogs.files = [str(good), str(bad)]
    assert window.install_plugins() is True
    pump_until(window.root, lambda: len(window.ui.toasts.cards) >= 2, timeout=60)
    texts = window.ui.toasts.messages()
    assert any("Installed plugin hello 1.2.0" in t for t in texts)
    assert any(".." in t for t in texts)
    assert app.plugins.get("hello").status == "active"
    ok_card = next(c for c in window.ui.toasts.cards if "Installed plugin hello" in window.ui.toasts.texts[c])
    view = next(w for w in ok_card.winfo_children() if getattr(w, "cget", None) and w.cget("text") == "View plugin")
    view.invoke()
    window.root.update()
    dialogs = [w for w in window.root.winfo_children() if w.winfo_class() == "Toplevel" and hasattr(w, "plugins_page")]
    assert dialogs and dialogs[-1].plugins_page.current() == "hello"


def test_install_asks_for_the_capabilities_a_plugin_declares_and_a_no_installs_it_not_approved(
        window, app, home, tmp_path):
    def kit(name: str) -> Path:
        return _zip(tmp_path, name, {f"{name}/package.json": f'{{"name": "{name}", "version": "1.0.0", '
                                     '"engines": {"llm-space": ">=4.9.0"}, "llmSpace": {"capabilities": ["network"]}}',
                                     f"{name}/tools/plain.py": TEXT_TOOL})

    window.dialogs.files = [str(kit("granted-kit"))]
    window.dialogs.answer = True
    assert window.install_plugins() is True
    pump_until(window.root, lambda: any("granted-kit" in t for t in window.ui.toasts.messages()), timeout=60)
    assert window.dialogs.confirms[-1].startswith("granted-kit asks for these capabilities: network.")
    assert app.plugins.get("granted-kit").status == "active"

    window.dialogs.files = [str(kit("refused-kit"))]
    window.dialogs.answer = False
    assert window.install_plugins() is True
    pump_until(window.root, lambda: any("refused-kit" in t for t in window.ui.toasts.messages()), timeout=60)
    record = app.plugins.get("refused-kit")
    assert record.status == "disabled" and record.disabled_reason.startswith("not approved: it asks for network")
