"""The Thread file format as pydantic 2 models.

Every model is a `Node` (`core/roundtrip.py`): it keeps unknown keys and remembers the key
order of the JSON it came from, so an unchanged thread is written back byte for byte. Fields
that were absent stay absent (dump with `exclude_unset=True`, see `core/threadio.py`).
Legacy shapes (tools without `type`, `source: {type: "mcp"}` tools, `ask_user_question`
without `terminate`) are normalised while validating.

Anyone may import this module; it does no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    field_validator,
    model_validator,
)

from .image_sizes import base64_size, size_text
from .roundtrip import Node

# A JSON number that keeps int-ness (1 stays 1, 0.5 stays 0.5) so files round-trip exactly.
Number = int | float
NonNeg = Annotated[int | float, Field(ge=0)]

ReasoningLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
REASONING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh")


# ---------------------------------------------------------------------------------------
# Message content


IMAGE_MIME_PATTERN = r"^image/[A-Za-z0-9.+\-]+$"


class TextContent(Node):
    type: Literal["text"] = "text"
    text: str = ""


class ImageDataContent(Node):
    type: Literal["image_data"] = "image_data"
    mimeType: str = Field(pattern=IMAGE_MIME_PATTERN)
    data: str


Content = Annotated[TextContent | ImageDataContent, Field(discriminator="type")]


class ToolCallInput(Node):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    partialArguments: str | None = None


class ToolImageContent(Node):
    """An image a tool returned (`{type: "image", mimeType, data}`, data in base64)."""

    type: Literal["image"] = "image"
    mimeType: str = Field(pattern=IMAGE_MIME_PATTERN)
    data: str

    def label(self) -> str:
        """What text views show instead of the image: `[image image/png, 12 KB]`."""
        return f"[image {self.mimeType}, {size_text(base64_size(self.data))}]"


def _output_part_kind(value: Any) -> str:
    # A part without `type` is text (as before image parts existed), so such files still load.
    kind = value.get("type", "text") if isinstance(value, dict) else getattr(value, "type", "text")
    return kind if isinstance(kind, str) else ""


ToolOutputContent = Annotated[
    Annotated[TextContent, Tag("text")] | Annotated[ToolImageContent, Tag("image")],
    Discriminator(_output_part_kind),
]


class ToolCallOutput(Node):
    """A tool result: text parts and image parts, in order."""

    content: list[ToolOutputContent] = Field(default_factory=list)
    isError: bool | None = None

    def text(self) -> str:
        """The text parts joined by newlines (images left out)."""
        return "\n".join(c.text for c in self.content if isinstance(c, TextContent))

    def text_parts(self) -> list[TextContent]:
        return [c for c in self.content if isinstance(c, TextContent)]

    def images(self) -> list[ToolImageContent]:
        return [c for c in self.content if isinstance(c, ToolImageContent)]

    def display_text(self) -> str:
        """Every part as text, in order: texts as they are, images as their `label()`."""
        return "\n".join(c.text if isinstance(c, TextContent) else c.label() for c in self.content)

    def with_texts(self, fn: Callable[[str], str]) -> ToolCallOutput:
        """A copy whose text parts are `fn(text)` (image parts shared); `self` when none changes."""
        parts = [c.model_copy(update={"text": fn(c.text)}) if isinstance(c, TextContent) else c for c in self.content]
        if all(a is b or (isinstance(a, TextContent) and isinstance(b, TextContent) and a.text == b.text)
               for a, b in zip(parts, self.content, strict=True)):
            return self
        return self.model_copy(update={"content": parts})


class ToolCall(Node):
    id: str
    input: ToolCallInput
    output: ToolCallOutput | None = None


class UsageCost(Node):
    input: NonNeg = 0
    output: NonNeg = 0
    cacheRead: NonNeg = 0
    cacheWrite: NonNeg = 0
    total: NonNeg = 0


class Usage(Node):
    input: NonNeg = 0
    output: NonNeg = 0
    cacheRead: NonNeg = 0
    cacheWrite: NonNeg = 0
    reasoning: NonNeg | None = None
    totalTokens: NonNeg = 0
    cost: UsageCost = Field(default_factory=UsageCost)


class Timing(Node):
    firstTokenMs: NonNeg | None = None
    durationMs: NonNeg = 0


class UserMessage(Node):
    id: str
    role: Literal["user"] = "user"
    content: list[Content] = Field(default_factory=list)

    def text(self) -> str:
        return "\n".join(c.text for c in self.content if isinstance(c, TextContent))


class AssistantMessage(Node):
    id: str
    role: Literal["assistant"] = "assistant"
    # The format allows only text here; images are tolerated (and ignored when sending).
    content: list[Content] = Field(default_factory=list)
    thinking: str | None = None
    toolCalls: list[ToolCall] | None = None
    usage: Usage | None = None
    timing: Timing | None = None

    def text(self) -> str:
        return "\n".join(c.text for c in self.content if isinstance(c, TextContent))


Message = Annotated[UserMessage | AssistantMessage, Field(discriminator="role")]


# ---------------------------------------------------------------------------------------
# Tools

ToolType = Literal["builtin", "function", "mcp", "plugin"]


class Tool(Node):
    """One tool definition. `type` decides which of the optional fields apply.

    A plugin tool is `{type: "plugin", pluginId, toolId: "plugin:<name>:tool:<stem>", name,
    description, parameters, strict}` (its fields are declared in that order, so a new
    entry is written that way; a file's own order is kept like everywhere else)."""

    type: ToolType = "function"
    # plugin
    pluginId: str | None = None
    toolId: str | None = None
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None
    # builtin
    icon: str | None = None
    terminate: bool | None = None
    # mcp
    serverId: str | None = None
    serverName: str | None = None
    toolName: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _normalise_legacy(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        kind = data.get("type")
        source = data.get("source")
        if kind is None and isinstance(source, dict) and source.get("type") == "mcp":
            data = {"type": "mcp", **{k: v for k, v in data.items() if k != "source"}}
            for key in ("serverId", "serverName", "toolName"):
                if key not in data and isinstance(source.get(key), str):
                    data[key] = source[key]
        elif kind is None:
            data = {"type": "function", **data}
        if data.get("type") == "builtin" and data.get("name") == "ask_user_question" and data.get("terminate") is not True:
            data = {**data, "terminate": True}
        return data

    def is_executable(self) -> bool:
        """mcp, plugin: yes; builtin: yes unless it terminates; function: no (a human answers)."""
        if self.type in ("mcp", "plugin"):
            return True
        if self.type == "builtin":
            return not (self.name == "ask_user_question" or self.terminate is True)
        return False


# ---------------------------------------------------------------------------------------
# Variables


class Variable(Node):
    """A typed variable in `context.variables`; `type` decides which fields apply."""

    # currentDate | workingDirectory | skills | json | file. Other kinds (from a newer app)
    # load and round-trip unchanged; rendering leaves their references as written.
    type: str
    format: str | None = None  # currentDate: readable-date|iso-date|local-date-time; skills: xml|markdown-list
    value: str | None = None  # workingDirectory, json, file
    skillNames: list[Any] | None = None
    includeAll: bool | None = None
    indent: Number | None = None


class VariableVariants(Node):
    active: str = "default"
    variants: dict[str, dict[str, Any]] = Field(default_factory=dict)


# Key of a template place's frozen whole output (part N > 0: `RENDERED_KEY + ":N"`), as the
# original app writes it: a NUL character then `rendered` (JSON: "\u0000rendered"). Earlier
# versions of this app wrote a leading space instead; such keys are renamed when a thread is
# loaded, so the next save writes the original's key.
RENDERED_KEY = "\u0000rendered"
LEGACY_RENDERED_KEY = " rendered"


def _migrate_rendered_keys(place: dict[str, Any]) -> dict[str, Any]:
    if not any(k == LEGACY_RENDERED_KEY or k.startswith(LEGACY_RENDERED_KEY + ":") for k in place):
        return place
    out: dict[str, Any] = {}
    for key, value in place.items():
        if key == LEGACY_RENDERED_KEY or key.startswith(LEGACY_RENDERED_KEY + ":"):
            new = RENDERED_KEY + key[len(LEGACY_RENDERED_KEY):]
            if new not in place:  # the original's key wins when both are present
                out[new] = value
        else:
            out[key] = value
    return out


class PromptSnapshot(Node):
    variables: dict[str, dict[str, str]] | None = None

    @field_validator("variables", mode="before")
    @classmethod
    def _migrate_legacy_keys(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: _migrate_rendered_keys(v) if isinstance(v, dict) else v for k, v in value.items()}
        return value


# ---------------------------------------------------------------------------------------
# Model configuration


class ResponseType(Node):
    type: Literal["text", "json_object", "json_schema"]
    jsonSchema: dict[str, Any] | None = None


class ModelParams(Node):
    maxTokens: Annotated[int, Field(ge=1)] | None = None
    temperature: Annotated[Number, Field(ge=0, le=2)] | None = None
    reasoning: ReasoningLevel | None = None
    responseType: ResponseType | None = None
    extra: dict[str, Any] | None = None


class ModelConfig(Node):
    provider: str
    id: str
    params: ModelParams | None = None


# ---------------------------------------------------------------------------------------
# Thread, run history, evaluations


class ThreadContext(Node):
    systemPrompt: str | None = None
    tools: list[Tool] | None = None
    variables: dict[str, Variable] | None = None
    variableVariants: VariableVariants | None = None
    snapshot: PromptSnapshot | None = None
    messages: list[Message] | None = None


class ThreadSnapshot(Node):
    title: str | None = None
    model: ModelConfig | None = None
    context: ThreadContext | None = None


class RunSnapshot(Node):
    id: str | None = None
    thread: ThreadSnapshot
    usage: Usage | None = None
    timestamp: Number


class Criterion(Node):
    id: str
    name: Annotated[str, Field(min_length=1, max_length=80)]
    description: Annotated[str, Field(max_length=240)] | None = None


class RubricSnapshot(Node):
    id: str
    name: Annotated[str, Field(min_length=1, max_length=80)]
    criteria: Annotated[list[Criterion], Field(min_length=2, max_length=6)]
    revision: Annotated[int, Field(ge=1)] = 1


class Rubric(RubricSnapshot):
    createdAt: Number = 0
    updatedAt: Number = 0


class CriterionScore(Node):
    criterionId: str
    score: Annotated[int, Field(ge=1, le=5)]


class RunScores(Node):
    runId: str
    scores: Annotated[list[CriterionScore], Field(min_length=2, max_length=6)]


Verdict = Literal["leftBetter", "rightBetter", "tie", "pass", "fail"]


class Evaluation(Node):
    id: str
    leftRunId: str
    rightRunId: str
    verdict: Verdict
    note: str | None = None
    createdAt: Number = 0
    updatedAt: Number = 0
    rubric: RubricSnapshot | None = None
    runScores: Annotated[list[RunScores], Field(min_length=2, max_length=2)] | None = None

    @model_validator(mode="after")
    def _rubric_and_scores_together(self) -> Evaluation:
        if (self.rubric is None) != (self.runScores is None):
            raise ValueError("rubric and runScores must be given together")
        return self


class Thread(Node):
    title: str | None = None
    model: ModelConfig | None = None
    context: ThreadContext | None = None
    runHistory: list[RunSnapshot] | None = None
    evaluations: list[Evaluation] | None = None
    evaluationRubrics: list[Rubric] | None = None
    modelName: str | None = None
    originalURL: str | None = None

    # True when some node of this thread kept a non-declared key order from its source file.
    _has_custom_order: bool = PrivateAttr(default=False)

    # -- convenience for callers; these never add keys that were not there ----------------

    @property
    def messages(self) -> list[UserMessage | AssistantMessage]:
        """The message list (empty when the thread has none)."""
        if self.context is None or self.context.messages is None:
            return []
        return self.context.messages

    def ensure_context(self) -> ThreadContext:
        if self.context is None:
            self.context = ThreadContext()
        return self.context

    def ensure_messages(self) -> list[UserMessage | AssistantMessage]:
        ctx = self.ensure_context()
        if ctx.messages is None:
            ctx.messages = []
        return ctx.messages
