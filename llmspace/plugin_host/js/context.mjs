// The context objects plugin code receives (docs/plugin-protocol.md, Callbacks; the plugin
// guide §§9–11): `makeContext(kind, …)` builds a frozen object with `settings` (deeply
// frozen), `signal` (an AbortSignal), the callbacks every kind has (`notify`, `openLink`,
// `pickFile`, `readWorkspaceFile`, `writeWorkspaceFile`, `executeHostCommand`), and per kind:
// tools `thread`, `variables`, `createResult(parts)`; commands `arguments`, `activeTab`
// (`filename`, `thread`, `writeThread`) or null, `report`, `createResult({level, message})`.
//
// Each callback is an async function (safe to destructure) that checks its arguments
// (TypeError/RangeError before anything is sent), sends the request with the call's
// `callId` and resolves with the app's answer, or rejects with a `PluginCallError` carrying
// the app's message and `code`. `createResult` checks the shape at once and returns an
// opaque, frozen `PluginResult`; `resultPayload` finds what it carries. Built by calls.mjs.

import { deepFreeze, isPlainObject, NotJSON, toJson } from "./plainjson.mjs";
import {
  COMMAND, EXECUTE_HOST_COMMAND, NOTIFY, NOTIFY_LEVELS, OPEN_LINK, PICK_FILE, READ_WORKSPACE_FILE, REPORT,
  RESULT_LEVELS as LEVELS, TOOL, WRITE_THREAD, WRITE_WORKSPACE_FILE,
} from "./protocol.mjs";
import { PluginCallError, TooLarge } from "./rpc.mjs";
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const payloads = new WeakMap();

/** What `createResult` returns: return it from `execute`. */
class PluginResult {}

function makeResult(payload) {
  const result = Object.assign(new PluginResult(), payload);
  deepFreeze(result);
  payloads.set(result, payload);
  return result;
}

/** The payload of a PluginResult, or undefined for any other value. */
export function resultPayload(value) {
  return value !== null && typeof value === "object" ? payloads.get(value) : undefined;
}

function show(value) {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return value.constructor?.name ? `a ${value.constructor.name}` : "an object";
  return `a ${typeof value}`;
}

function text(name, value, { empty = true } = {}) {
  if (typeof value !== "string") throw new TypeError(`${name} must be a string, not ${show(value)}`);
  if (!empty && !value.trim()) throw new RangeError(`${name} must not be empty`);
  return value;
}

function caller(conn, callId) {
  return async (method, params) => {
    let plain;
    try {
      plain = toJson(params);
    } catch (error) {
      if (error instanceof NotJSON) throw new TypeError(`${method}: ${error.message}`);
      throw error;
    }
    plain.callId = callId;
    try {
      return await conn.request(method, plain);
    } catch (error) {
      if (error instanceof TooLarge) throw new PluginCallError(`${method}: ${error.message}`);
      throw error;
    }
  };
}

function common(call, signal, context) {
  return {
    settings: deepFreeze(isPlainObject(context.settings) ? context.settings : {}),
    signal,
    async notify(message, level = "info") {
      const chosen = level !== null && typeof level === "object" ? (level.level ?? "info") : (level ?? "info");
      if (!NOTIFY_LEVELS.includes(chosen)) throw new RangeError(`level must be one of ${NOTIFY_LEVELS.join(", ")}`);
      await call(NOTIFY, { message: text("message", message), level: chosen });
      return null;
    },
    async openLink(url) {
      await call(OPEN_LINK, { url: text("url", url, { empty: false }) });
      return null;
    },
    async pickFile(options = undefined) {
      if (options !== undefined && options !== null && !isPlainObject(options)) {
        throw new TypeError("options must be an object (title, filters)");
      }
      const answer = await call(PICK_FILE, { options: options ?? {} });
      return typeof answer === "string" ? answer : null;
    },
    async readWorkspaceFile(path) {
      const answer = await call(READ_WORKSPACE_FILE, { path: text("path", path, { empty: false }) });
      if (typeof answer !== "string") throw new PluginCallError("readWorkspaceFile: the app answered without text");
      return answer;
    },
    async writeWorkspaceFile(path, content) {
      await call(WRITE_WORKSPACE_FILE, { path: text("path", path, { empty: false }), content: text("content", content) });
      return null;
    },
    async executeHostCommand(type, args = undefined) {
      const params = { type: text("type", type, { empty: false }) };
      if (args !== undefined && args !== null) params.args = args;
      await call(EXECUTE_HOST_COMMAND, params);
      return null;
    },
  };
}

function part(index, value) {
  const where = `part ${index}`;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError(`${where} must be an object, not ${show(value)}`);
  }
  if (value.type === "text") return { type: "text", text: text(`${where}: text`, value.text) };
  if (value.type === "image") {
    const mimeType = text(`${where}: mimeType`, value.mimeType, { empty: false });
    const data = text(`${where}: data`, value.data, { empty: false });
    if (!BASE64.test(data)) throw new TypeError(`${where}: data must be base64 (the image bytes, encoded)`);
    return { type: "image", mimeType, data };
  }
  throw new TypeError(`${where}: type must be "text" or "image", not ${JSON.stringify(value.type) ?? show(value.type)}`);
}

function toolResult(parts) {
  if (!Array.isArray(parts)) {
    throw new TypeError('createResult takes an array of parts ({type: "text", text} or {type: "image", mimeType, data})');
  }
  return makeResult({ content: parts.map((value, index) => part(index, value)) });
}

function commandResult(outcome) {
  if (outcome === null || typeof outcome !== "object" || Array.isArray(outcome)) {
    throw new TypeError('createResult takes {level: "success" | "warning" | "error", message}');
  }
  if (!LEVELS.includes(outcome.level)) {
    throw new RangeError(`level must be one of ${LEVELS.join(", ")}, not ${JSON.stringify(outcome.level) ?? show(outcome.level)}`);
  }
  return makeResult({ level: outcome.level, message: text("message", outcome.message) });
}

function activeTab(call, tab) {
  if (!isPlainObject(tab)) return null;
  return Object.freeze({
    filename: typeof tab.filename === "string" ? tab.filename : "",
    thread: deepFreeze(isPlainObject(tab.thread) ? tab.thread : {}),
    async writeThread(thread) {
      if (thread === null || typeof thread !== "object" || Array.isArray(thread)) {
        throw new TypeError(`writeThread takes the whole thread as an object, not ${show(thread)}`);
      }
      await call(WRITE_THREAD, { thread });
      return null;
    },
  });
}

/** The context of one call: kind "tool", "command" or "thread-storage". */
export function makeContext(kind, conn, callId, signal, context, words = []) {
  const call = caller(conn, callId);
  const ctx = common(call, signal, context);
  if (kind === TOOL) {
    ctx.thread = deepFreeze(isPlainObject(context.thread) ? context.thread : {});
    ctx.variables = deepFreeze(isPlainObject(context.variables) ? context.variables : {});
    ctx.createResult = toolResult;
  } else if (kind === COMMAND) {
    ctx.arguments = Object.freeze(words);
    ctx.activeTab = activeTab(call, context.activeTab);
    ctx.report = async (phase, message = undefined) => {
      const fields = phase !== null && typeof phase === "object" ? phase : { phase };
      const note = fields.message !== undefined ? fields.message : message;
      const params = { phase: text("phase", fields.phase, { empty: false }) };
      if (note !== undefined && note !== null) params.message = text("message", note);
      await call(REPORT, params);
      return null;
    };
    ctx.createResult = commandResult;
  }
  return Object.freeze(ctx);
}
