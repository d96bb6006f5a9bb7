// The plugin host protocol's names and codes (docs/plugin-protocol.md): the JavaScript copy
// of llmspace/plugin_protocol.py, which the app and the Python host import. The other host
// modules take every method name, kind, level and error code from here;
// tests/plugin_host/test_protocol.py checks that this table equals the Python module's and
// that the contexts of context.mjs send exactly its callbacks.

export const PROTOCOL_VERSION = 1;

// Methods the app calls on the host (Lifecycle).
export const INITIALIZE = "initialize";
export const EXECUTE = "execute";
export const CANCEL = "cancel"; // a notification
export const SHUTDOWN = "shutdown";
export const PING = "ping";
export const HOST_METHODS = [INITIALIZE, EXECUTE, CANCEL, SHUTDOWN, PING];

// Callbacks: methods the host calls on the app while a call runs (Callbacks).
export const NOTIFY = "notify";
export const OPEN_LINK = "openLink";
export const PICK_FILE = "pickFile";
export const READ_WORKSPACE_FILE = "readWorkspaceFile";
export const WRITE_WORKSPACE_FILE = "writeWorkspaceFile";
export const EXECUTE_HOST_COMMAND = "executeHostCommand";
export const REPORT = "report"; // commands only
export const WRITE_THREAD = "writeThread"; // commands only, through `activeTab`
export const COMMON_CALLBACKS = [NOTIFY, OPEN_LINK, PICK_FILE, READ_WORKSPACE_FILE, WRITE_WORKSPACE_FILE, EXECUTE_HOST_COMMAND];
export const COMMAND_CALLBACKS = [REPORT, WRITE_THREAD];

// Extension kinds and the methods `execute` may name for each.
export const TOOL = "tool";
export const COMMAND = "command";
export const THREAD_STORAGE = "thread-storage";
export const KINDS = [TOOL, COMMAND, THREAD_STORAGE];
export const EXTENSION_METHODS = { [TOOL]: ["execute"], [COMMAND]: ["execute"], [THREAD_STORAGE]: ["resolveLatest", "read", "write", "list"] }; // `list`: optional, our extension

export const NOTIFY_LEVELS = ["info", "warning", "error"];
export const RESULT_LEVELS = ["success", "warning", "error"];
export const ERROR_STAGES = ["import", "constructor", "contract"];
export const DEFAULT_CANCEL_REASON = "Cancelled";

// Error codes.
export const RAISED = -32000;
export const CANCELLED = -32001;
export const UNAVAILABLE = -32002;
export const NOT_JSON = -32003;
export const REFUSED = -32010;
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
