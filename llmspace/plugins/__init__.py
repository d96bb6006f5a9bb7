"""The plugin platform (docs/plugins.md): reads plugin folders, never imports plugin code.

- `service.py`     `PluginService` (`app.plugins`): records, refresh, reload, enable/disable, settings
- `loader.py`      scan `plugins/` and load one folder into a `PluginRecord` (`model.py`)
- `extensions.py`  extensions at the guide's paths; `icon.py` icon.png checks
- `manifest.py`    `package.json` → `Manifest`, names, engines (`semrange.py`), folders
- `store.py`       `settings/plugins.json`; `form.py` config.schema.json → settings form
- `interpolate.py` `$ENV` / `${settings.x}` in mcp.json and models.json
- `diagnostics.py` `logs/plugins/…` files with error-ids; `errors.py` `PluginError`
- `archive.py`, `install.py`, `pack.py`, `check.py`  ZIP install/update/remove, packing, checks
"""
