"""Typed settings files under `<LLM_SPACE_HOME>/settings/`: read, validated, and written back
through the atomic writer with unknown keys kept. A malformed file is reported and never
overwritten. No network: whatever needs a server (local model discovery, MCP tests) is
done by the layers above and handed in.

Imports only `core` and the foundation modules. Modules:
- `models`: `models.json` (providers, keys, custom models, default model, timeouts);
  `catalog`: the built-in providers and their models; `model_info`: `ModelInfo` and API names.
- `mcp`: `mcp.json` (MCP servers and their last readiness test).
- `skills`: `skills.json` (skill discovery folders and hidden skills).
- `search`: `search.json` (the web-search provider of the web tools and its keys).
"""
