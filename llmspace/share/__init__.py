"""Sharing threads as the original app does (issue 47): a secret GitHub gist, the
`llm-space://shared/gist/threads/<id>` link either app opens, and the safe import of such links
into the workspace's `shared/` folder.

- `service.py`: `Sharing` (sign-in, publish, list, revoke, open a link) and `OpenLinks` (one link
  in flight), what the command line (`llmspace auth …`, `llmspace share …`, `llmspace open-url`)
  and a dialog call.
- `auth.py`: GitHub's OAuth device flow, and the token in the secret store or, without a keyring,
  in `settings/auth.json` in the original's format.
- `gist.py`: a thread as the original's gist (file name, description, content) and back.
- `links.py`: the link, and the import into `shared/` with `llmspace import`'s rules.
- `publish.py`: the summary shown before sending, and `settings/shares.json`.
- `github.py`: every HTTP call, bounded in time and size, through `origin_session`.

Layer: above `core`, beside `traces` (imports core and the foundation).
"""

from __future__ import annotations

from .auth import AuthRecord, AuthStore, SignInEvent
from .github import Cancelled, GitHubApi, GitHubError
from .links import OpenedShare, SharedLinkError, is_shared_link, parse_shared_link, shared_link
from .publish import ShareEntry, ShareSummary
from .service import OpenLinks, SharedGist, Sharing, open_shared_link

__all__ = [
    "AuthRecord",
    "AuthStore",
    "Cancelled",
    "GitHubApi",
    "GitHubError",
    "OpenLinks",
    "OpenedShare",
    "ShareEntry",
    "ShareSummary",
    "SharedGist",
    "SharedLinkError",
    "Sharing",
    "SignInEvent",
    "is_shared_link",
    "open_shared_link",
    "parse_shared_link",
    "shared_link",
]
