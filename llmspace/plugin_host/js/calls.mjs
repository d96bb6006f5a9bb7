// Running loaded extensions: `execute`, `cancel` and `shutdown` (docs/plugin-protocol.md).
//
// `Calls.execute` checks the request, builds the call's context and AbortSignal and runs the
// extension's method as an async task of its own. The answer is `{"type": "value"}` for plain
// JSON (undefined → null), `{"type": "result"}` for what `createResult` made, or an error:
// -32000 the plugin threw, -32001 the call ended after its signal aborted, -32002 no such
// extension or method (or the host is shutting down), -32003 the value is not JSON.
// `Calls.shutdown` refuses new calls and awaits every `dispose()` in parallel, each bounded
// to 3 s. Used by host.mjs.

import { makeContext, resultPayload } from "./context.mjs";
import { describeThrown } from "./loading.mjs";
import { isPlainObject, NotJSON, toJson } from "./plainjson.mjs";
import {
  CANCELLED, COMMAND, DEFAULT_CANCEL_REASON, EXTENSION_METHODS as METHODS, INVALID_PARAMS, KINDS, NOT_JSON, RAISED, TOOL,
  UNAVAILABLE,
} from "./protocol.mjs";
import { log, TooLarge } from "./rpc.mjs";

const DISPOSE_TIMEOUT_MS = 3000;

class BadParams extends Error {}
class Unavailable extends Error {}

/** An error thrown by plugin code → [the message the app shows, the error's `data`]. */
export function raised(error) {
  const { name, message, stack } = describeThrown(error);
  const text = message || name;
  return [text, { name, message: text, stack }];
}

export class Calls {
  constructor(conn) {
    this._conn = conn;
    this._running = new Map();
    this._extensions = null;
    this._all = [];
    this._closing = false;
    this._shutdown = null;
  }

  setExtensions(extensions) {
    this._extensions = new Map(extensions.filter((e) => e.error === null).map((e) => [e.key, e]));
    this._all = extensions;
  }

  execute(requestId, params) {
    let prepared;
    try {
      prepared = this._prepare(params);
    } catch (error) {
      if (error instanceof BadParams) return this._conn.respondError(requestId, INVALID_PARAMS, error.message);
      if (error instanceof Unavailable) {
        return this._conn.respondError(requestId, UNAVAILABLE, error.message, { reason: error.message });
      }
      throw error;
    }
    const { callId, ext, target, args, controller } = prepared;
    if (this._closing) {
      const reason = "the plugin host is shutting down";
      return this._conn.respondError(requestId, UNAVAILABLE, reason, { reason });
    }
    if (this._running.has(callId)) {
      return this._conn.respondError(requestId, INVALID_PARAMS, `the call ${callId} is already running`);
    }
    const call = { controller, reason: null };
    this._running.set(callId, call);
    const task = (async () => target.apply(ext.instance, args))();
    task.then(
      (value) => this._finish(requestId, callId, call, "returned", value),
      (error) => this._finish(requestId, callId, call, "raised", error),
    );
  }

  cancel(params) {
    const { callId, reason } = params;
    if (typeof callId !== "string") return;
    const call = this._running.get(callId);
    if (call === undefined || call.reason !== null) return;
    call.reason = typeof reason === "string" && reason ? reason : DEFAULT_CANCEL_REASON;
    call.controller.abort(new DOMException(call.reason, "AbortError"));
  }

  _prepare(params) {
    const { callId, kind, id, method } = params;
    const data = params.input === undefined ? {} : params.input;
    const context = params.context === undefined ? {} : params.context;
    if (typeof callId !== "string" || !callId) throw new BadParams("callId must be a non-empty string");
    if (!KINDS.includes(kind) || typeof id !== "string" || typeof method !== "string") {
      throw new BadParams(`kind must be one of ${KINDS.join(", ")}, with id and method strings`);
    }
    if (!isPlainObject(data) || !isPlainObject(context)) throw new BadParams("input and context must be objects");
    if (this._extensions === null) throw new Unavailable("the plugin host is not initialized");
    const ext = this._extensions.get(`${kind}:${id}`);
    if (ext === undefined) throw new Unavailable(`no active ${kind} ${JSON.stringify(id)} in this plugin`);
    if (!METHODS[kind].includes(method) || !ext.methods.has(method)) {
      throw new Unavailable(`the ${kind} ${JSON.stringify(id)} has no method ${JSON.stringify(method)}`);
    }
    const target = ext.methods.get(method);
    const controller = new AbortController();
    const prepared = (args) => ({ callId, ext, target, args, controller });
    if (kind === TOOL) {
      const args = data.arguments === undefined ? {} : data.arguments;
      if (!isPlainObject(args)) throw new BadParams("input.arguments of a tool must be an object");
      return prepared([makeContext(kind, this._conn, callId, controller.signal, context), args]);
    }
    if (kind === COMMAND) {
      const words = data.arguments === undefined ? [] : data.arguments;
      if (!Array.isArray(words) || !words.every((w) => typeof w === "string")) {
        throw new BadParams("input.arguments of a command must be a list of strings");
      }
      const ctx = makeContext(kind, this._conn, callId, controller.signal, context, words);
      return prepared([ctx, ctx.arguments]);
    }
    const ctx = makeContext(kind, this._conn, callId, controller.signal, context);
    if (method === "resolveLatest") {
      if (typeof data.id !== "string") throw new BadParams("input.id must be a string");
      return prepared([data.id, ctx]);
    }
    if (method === "read") {
      if (!isPlainObject(data.locator)) throw new BadParams("input.locator must be an object");
      return prepared([data.locator, ctx]);
    }
    if (method === "list") {
      const { cursor, query } = data;
      if (![cursor, query].every((v) => v === undefined || v === null || typeof v === "string")) {
        throw new BadParams("input.cursor and input.query must be strings when given");
      }
      return prepared([ctx, { cursor: cursor ?? undefined, query: query ?? undefined }]);
    }
    const { thread, id: targetId } = data;
    if (!isPlainObject(thread) || !(targetId === undefined || targetId === null || typeof targetId === "string")) {
      throw new BadParams("input.thread must be an object and input.id a string or null");
    }
    return prepared([thread, targetId ?? undefined, ctx]);
  }

  _finish(requestId, callId, call, how, value) {
    this._running.delete(callId);
    try {
      this._answer(requestId, call, how, value);
    } catch (error) {
      log(`could not answer the call ${callId}: ${error?.stack ?? error}`);
    }
  }

  _answer(requestId, call, how, value) {
    if (call.controller.signal.aborted) {
      return this._conn.respondError(requestId, CANCELLED, call.reason, { reason: call.reason });
    }
    if (how === "raised") return this._conn.respondError(requestId, RAISED, ...raised(value));
    let answer;
    try {
      const payload = resultPayload(value);
      answer = payload === undefined ? { type: "value", value: toJson(value) } : { type: "result", result: payload };
    } catch (error) {
      if (error instanceof NotJSON) {
        return this._conn.respondError(requestId, NOT_JSON, `the return value is not JSON: ${error.message}`,
          { type: error.type, where: error.where });
      }
      return this._conn.respondError(requestId, RAISED, ...raised(error)); // a getter of the value threw
    }
    try {
      this._conn.respond(requestId, answer);
    } catch (error) {
      if (error instanceof TooLarge) {
        return this._conn.respondError(requestId, RAISED, error.message, { name: "Error", message: error.message, stack: "" });
      }
      // JSON.stringify refused the answer (nesting too deep, a BigInt, a throwing toJSON): that call only
      const name = error?.name ?? typeof error;
      this._conn.respondError(requestId, NOT_JSON, `the return value is not JSON: ${name}: ${String(error?.message ?? error).slice(0, 200)}`,
        { type: name, where: "$" });
    }
  }

  /** Refuse new calls and dispose every instance (in parallel, each bounded to 3 s). */
  shutdown() {
    this._shutdown ??= this._dispose();
    return this._shutdown;
  }

  async _dispose() {
    this._closing = true;
    const jobs = [];
    for (const ext of this._all) {
      if (ext.instance === undefined || ext.instance === null) continue;
      let dispose;
      try {
        dispose = ext.instance.dispose;
      } catch (error) {
        jobs.push([ext.key, Promise.resolve({ error })]);
        continue;
      }
      if (typeof dispose !== "function") continue;
      jobs.push([ext.key, bounded(ext.instance, dispose)]);
    }
    const disposed = [];
    const failed = [];
    for (const [key, job] of jobs) {
      const outcome = await job;
      if (outcome.timedOut) failed.push({ id: key, message: `dispose() did not finish within ${DISPOSE_TIMEOUT_MS / 1000} s` });
      else if ("error" in outcome) failed.push({ id: key, message: raised(outcome.error)[0] });
      else disposed.push(key);
    }
    return { disposed, failed };
  }
}

function bounded(instance, dispose) {
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ timedOut: true }), DISPOSE_TIMEOUT_MS);
  });
  const run = (async () => dispose.call(instance))().then(() => ({}), (error) => ({ error }));
  return Promise.race([run, timeout]).finally(() => clearTimeout(timer));
}
