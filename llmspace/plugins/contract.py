"""What this app offers plugins, on the ground floor of `plugins/` (docs/architecture.md,
"Floors of `plugins/`"): the package's manifest checks, the hosts and the release checks all
read these names from here.

- `APP_COMPAT_VERSION`  the LLM Space version whose plugins this app runs: `engines["llm-space"]`
                        is checked against it (llmspace/plugins/package/manifest.py), and hosts
                        are told it at `initialize` (llmspace/plugins/hosts/spec.py)
- `CAPABILITIES`        what a plugin's code may be granted beyond its own folders (docs/plugins.md,
                        "Capabilities"; declared and inferred by llmspace/plugins/package/capabilities.py,
                        enforced by llmspace/plugins/hosts/sandbox.py)
"""

from __future__ import annotations

APP_COMPAT_VERSION = "4.9.0"
"""The LLM Space version whose plugins this app runs (not this package's own version)."""

CAPABILITIES = ("network", "unix-sockets", "processes", "read-outside-workspace", "write-outside-workspace",
                "environment")
