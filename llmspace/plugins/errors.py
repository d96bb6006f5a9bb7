"""Errors of the plugin platform.

`PluginError` is a `UserFacingError` (llmspace/errors.py): its message names the plugin
file and the problem and is shown as it is. Raised by manifest parsing, discovery,
settings and the CLI commands of llmspace/commands/plugins.py.
"""

from __future__ import annotations

from ..errors import UserFacingError


class PluginError(UserFacingError):
    """A plugin problem whose message is fit to show to the user."""
