"""Acceptance of the plugin pages as a person uses them: the Atlas example ZIP installed
with the file picker, every extension shown active in Settings › Plugins, a setting changed
in the generated form (saved and reloaded), and its commands run from the palette with
arguments, progress and the result."""

from __future__ import annotations

from pathlib import Path

from llmspace.cli import main

from .conftest import pump_until

ATLAS = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "atlas"


def test_install_atlas_see_it_change_a_setting_and_run_its_commands_from_the_palette(window, app, home, tmp_path,
                                                                                       capsys):
    zip_path = tmp_path / "atlas.zip"
    assert main(["plugins", "pack", str(ATLAS), "-o", str(zip_path)]) == 0
    capsys.readouterr()
    window.dialogs.files = [str(zip_path)]
    window.install_plugins()
    pump_until(window.root, lambda: any("Installed plugin atlas 1.0.0" in t for t in window.ui.toasts.messages()),
               timeout=90)

    dialog = window.open_settings()
    page = dialog.plugins_page
    dialog.nb.select(page)
    page.refresh("atlas")
    window.root.update()
    ext = page.extensions
    rows = [ext.item(child) for group in ext.get_children("") for child in ext.get_children(group)]
    assert len(rows) == 10 and all(r["values"][0] == "active" for r in rows)
    form = page.settings_form
    form.inputs["audience"].set("cartographers")
    pump_until(window.root, lambda: "Saved" in form.status.cget("text"), timeout=60)
    assert app.plugins.store.entry("atlas").settings["audience"] == "cartographers"
    dialog.destroy()

    pal = window.open_palette()
    pal.query.set("Atlas hello")
    window.root.update()
    pal.run_selected()
    pump_until(window.root, lambda: any(", cartographers!" in t for t in window.ui.toasts.messages()), timeout=60)

    rel = app.workspace.create_thread("", "plan")
    window.tree_view.refresh()
    window.open_thread(rel)
    window.root.update()
    seen: list[str] = []
    update = window.ui.toasts.update

    def record(card, message, level=None, *, final=False):  # every text the invocation's card shows
        seen.append(message)
        update(card, message, level, final=final)

    window.ui.toasts.update = record
    pal = window.open_palette()
    pal.query.set("stamp-title Draft")
    window.root.update()
    assert pal.hint.cget("text") == "Arguments: 'Draft'"
    pal.run_selected()

    pump_until(window.root, lambda: (home / "workspace" / "[Draft] plan.json").exists(), timeout=60)
    pump_until(window.root, lambda: any("[Draft] plan" in t for t in seen), timeout=30)
    final = next(i for i, t in enumerate(seen) if "[Draft] plan" in t)
    assert "Staging the new title…" in seen[:final]  # the command's progress reached the card before its result
