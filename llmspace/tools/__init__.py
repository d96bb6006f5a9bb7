"""Tools: the router that resolves any tool call (built-in, MCP, plugin or custom function)
to an executor and runs it, and the built-in tools. Nothing runs on import.

Modules:
- `router.py`      `ToolRouter`: resolves and runs tool calls, decides when auto-run pauses
- `base.py`        the call context (`ToolContext`, `CallEnv`), `ToolError`, result serialisation
- `validation.py`  argument checks against a tool's JSON Schema
- `safety.py`      the risky-bash denylist
- `functions.py`   checks of a custom function tool definition
- `builtins/`      the built-in tools: `definitions.py` (schemas and groups), `fs.py`,
                   `grep.py`, `globmatch.py`, `bash.py`, `misc.py`, `web.py`
"""
