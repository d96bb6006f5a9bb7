"""The plugin platform (docs/plugins.md): what is installed, its settings, and what each
plugin adds to the app. Plugin code never runs here: it runs in host processes.

- `service.py`         `PluginService` (`app.plugins`): records, refresh, reload, enable/disable, settings
- `discovery.py`       scan `plugins/` and load one folder into a `PluginRecord` (`model.py`)
- `settings_store.py`  `settings/plugins.json` (enabled, saved settings)
- `settings_form.py`   `config.schema.json` → the settings form model
- `diagnostics.py`     `logs/plugins/…` files with error-ids; `errors.py` `PluginError`
- `contract.py`        what this app offers plugins: the compatibility version, the capabilities
- `dev.py`             dev mode (`plugins dev`); `dev_entries.py` the `run/dev-plugins.json` it writes
- `package/`           the package on disk: manifest, extension files, icon, ZIP archive
                       checks (zip-slip, zip bombs), install, pack, scaffold, check
- `hosts/`             the code hosts, app side: one host process, the pool, the connection,
                       callbacks, the JavaScript runtime, process trees, output logs
- `code/`              code extensions in the app: `PluginCode`, registration, calls,
                       the metadata cache, palette arguments, thread storages, deep links
- `contributions/`     declarative contributions: skills, `mcp.json`, `models.json`

The modules stand on floors, each importing only its own floor and those below
(docs/architecture.md, "Floors of `plugins/`").
"""
