"""One model turn's stream fed into its `TurnBuilder`: the loop the run loop (`agent/loop.py`)
and a one-turn evaluation cell (`evals/cell.py`) share.

    error = feed_turn(stream, builder, cancel, on_events)   # the error the stream raised, or None

The stream is read until it ends, the builder holds an error (an `ErrorEvent`, or a reply past
`MAX_REPLY_CHARS`) or `cancel` is set, and it is closed in every case (an HTTP stream lets go
of its connection). What the reply then means — the builder's error, a stop, a reply that
ended without a finish (`ENDED_EARLY`) — is the caller's to read from the builder.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

from ..cancel import CancelToken
from ..errors import UserFacingError, describe_exception
from ..providers.events import StreamEvent
from . import events as rev
from .fold import TurnBuilder

log = logging.getLogger("llmspace.agent")
ENDED_EARLY = "The model's reply ended before it was complete (the connection closed early)."


def feed_turn(stream: Iterator[StreamEvent], builder: TurnBuilder, cancel: CancelToken,
              on_events: Callable[[list[rev.RunEvent]], None] | None = None) -> str | None:
    """Feed `stream` into `builder` (each event's run events to `on_events`), then close it;
    the error the stream raised (a UserFacingError's message, anything else described), or None."""
    error: str | None = None
    try:
        for ev in stream:
            events = builder.feed(ev)
            if on_events is not None:
                on_events(events)
            if builder.error is not None or cancel.cancelled:
                break
    except UserFacingError as exc:
        error = str(exc)
    except Exception as exc:
        error = describe_exception(exc)
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            try:
                close()
            except Exception:
                log.debug("closing a model stream failed", exc_info=True)
    return error
