"""A plugin package on disk: what its files must be, and what the app does with a ZIP of it.

- `manifest.py`    `package.json` → `Manifest`: names, versions, `engines` (`semrange.py`:
                   npm ranges), the install folder of a name
- `extensions.py`  the extension files at the guide's paths (`tools/`, `skills/`, `mcp.json`, …)
- `interpolate.py` `$ENV` and `${settings.x}` in a plugin's `mcp.json` and `models.json`
- `icon.py`        `icon.png` checks
- `archive.py`     plugin ZIPs read safely: zip-slip (path traversal), zip bombs (size limits)
- `install.py`     install, update and remove under `plugins/`, with a journal for crashes
- `pack.py`        release ZIPs of a plugin folder (`plugins pack`)
- `scaffold.py`    a new plugin folder to start from (`plugins new`)
- `check.py`       the release checklist without running code (`plugins check`);
  `check_code.py`  the items that load the code in real hosts
"""
