"""The OpenTelemetry GenAI semantic-convention names the exporter writes, in one place.

Version: the GenAI conventions as of semantic conventions 1.44.0 (development status; the
`gen_ai.*` names of `opentelemetry-semantic-conventions` 0.66b2,
`opentelemetry.semconv._incubating.attributes.gen_ai_attributes`). The golden test
(`tests/traces/test_otel_names.py`) checks every `gen_ai.*` name here against that package, so a
rename in a new version shows up as a failing test, not as spans nobody can read.

Names under `llmspace.` are our own (the conventions have no place for them).
"""

from __future__ import annotations

SEMCONV_VERSION = "1.44.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"

# -- operations (span names start with these) ---------------------------------------------
OP_CHAT = "chat"
OP_INVOKE_AGENT = "invoke_agent"
OP_EXECUTE_TOOL = "execute_tool"

# -- attributes ----------------------------------------------------------------------------
OPERATION_NAME = "gen_ai.operation.name"
PROVIDER_NAME = "gen_ai.provider.name"
CONVERSATION_ID = "gen_ai.conversation.id"
AGENT_NAME = "gen_ai.agent.name"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
REQUEST_TOP_P = "gen_ai.request.top_p"
REQUEST_TOP_K = "gen_ai.request.top_k"
REQUEST_SEED = "gen_ai.request.seed"
REQUEST_STOP_SEQUENCES = "gen_ai.request.stop_sequences"
REQUEST_FREQUENCY_PENALTY = "gen_ai.request.frequency_penalty"
REQUEST_PRESENCE_PENALTY = "gen_ai.request.presence_penalty"
REQUEST_STREAM = "gen_ai.request.stream"
RESPONSE_ID = "gen_ai.response.id"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
RESPONSE_TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
USAGE_REASONING_OUTPUT_TOKENS = "gen_ai.usage.reasoning.output_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
# content (only with captureContent on)
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
CONTENT_ATTRIBUTES = frozenset({SYSTEM_INSTRUCTIONS, INPUT_MESSAGES, OUTPUT_MESSAGES, TOOL_DEFINITIONS,
                                TOOL_CALL_ARGUMENTS, TOOL_CALL_RESULT})

# evaluation results (an event on the evaluated span)
EVALUATION_RESULT_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
EVALUATION_SCORE_VALUE = "gen_ai.evaluation.score.value"
EVALUATION_SCORE_LABEL = "gen_ai.evaluation.score.label"
EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"

# general conventions
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"
SERVICE_NAME = "service.name"
PHOENIX_PROJECT = "openinference.project.name"  # resource attribute: the Phoenix project

# -- ours ----------------------------------------------------------------------------------
THREAD_PATH = "llmspace.thread.path"
RUN_STATUS = "llmspace.run.status"
RUN_STEP = "llmspace.run.step"
CONTENT_NOTE = "llmspace.content.note"
EVAL_NAME = "llmspace.evaluation.name"
EVAL_CASE = "llmspace.evaluation.case"
EVAL_MODEL = "llmspace.evaluation.model"
EVAL_VARIANT = "llmspace.evaluation.variant"
EVAL_REPEAT = "llmspace.evaluation.repeat"
EVAL_PASSED = "llmspace.evaluation.passed"

# Well-known `gen_ai.provider.name` values by our provider id (others: the provider id itself).
PROVIDER_NAMES = {
    "openai": "openai", "anthropic": "anthropic", "gemini": "gcp.gemini", "google": "gcp.gemini",
    "mistral": "mistral_ai", "groq": "groq", "deepseek": "deepseek", "xai": "x_ai", "perplexity": "perplexity",
    "cohere": "cohere", "azure": "azure.ai.openai", "bedrock": "aws.bedrock",
}
