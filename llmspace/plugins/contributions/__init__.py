"""What active plugins declare without code — skills, MCP servers, model providers — added
to the app's registries.

- `plugin_contributions.py` `PluginContributions`: follows the plugin records and keeps the
                            `skill_sources`, `mcp_servers` and `providers` registries in step
- `config_files.py`         a plugin's `mcp.json` and `models.json`, read and interpolated
                            (`$ENV` and `${settings.x}`: llmspace/plugins/package/interpolate.py)
"""
