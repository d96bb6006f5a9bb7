"""What a message card is built with: `CardServices` (the UI services, the run controls as
`RunActions`, the text boxes' variable help and the editor's pictures) and its list, seen
through `CardList` (`messages.MessageList` implements it)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...presenters.editor import EditorPresenter
    from ..services import UiServices
    from .card_images import Pictures
    from .context import TextServices
    from .drag import MessageDrag


class RunActions(Protocol):
    """What a card asks of the editor's run controls (`run_controls.RunControls`)."""

    def run_from(self, message_id: str) -> None: ...

    def continue_run(self) -> None: ...

    def regenerate(self) -> bool: ...

    def can_regenerate(self) -> bool: ...

    def call_tool(self, call_id: str) -> bool: ...

    def call_tools(self, message_id: str) -> int: ...

    def tool_status(self, call_id: str) -> str | None: ...


class CardList(Protocol):
    """What a card uses of its message list (`messages.MessageList`)."""

    markdown: bool  # View › Render Markdown
    raw: set[str]  # the replies and results switched to raw text
    drag: MessageDrag

    def request_layout(self) -> None: ...

    def layout(self) -> None: ...

    def toggle_raw(self, key: str) -> None: ...

    def card_width(self) -> int: ...

    def on_wheel(self, e: Any) -> str: ...

    def quietly(self) -> AbstractContextManager[None]: ...


@dataclass(frozen=True)
class CardServices:
    """What every card of one editor uses: the UI services, the run controls, the variable
    help of its text boxes (with the editor presenter) and the editor's pictures."""

    ui: UiServices
    run: RunActions
    text: TextServices
    pictures: Pictures
    mcp_resource: Any = None  # Attach MCP resource… of a user message (`mcp_dialogs.ResourceAction`)

    @property
    def presenter(self) -> EditorPresenter:
        return self.text.presenter
