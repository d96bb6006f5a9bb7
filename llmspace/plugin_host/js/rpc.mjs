// The host's end of the NDJSON JSON-RPC connection (docs/plugin-protocol.md, Framing).
//
// `Connection.serve(input, dispatch, ended)` reads app messages from the protocol's stdin and
// hands requests and notifications to `dispatch`; answers to the host's own requests settle
// the promise `request` returned. Every outgoing message is one line written whole with
// `fs.writeSync` to file descriptor 1 (plugin code never gets that stream: host.mjs points
// `process.stdout` and `console` at stderr). Host requests get the ids "h1", "h2", ….
// `hold(promise)` queues incoming messages until the promise settles (initialize runs alone,
// as in the Python host). Used by host.mjs, calls.mjs and context.mjs.

import fs from "node:fs";

import { INVALID_REQUEST, PARSE_ERROR } from "./protocol.mjs";

export const MAX_LINE = 64 * 1024 * 1024;
export const CALLBACK_TIMEOUT_MS = 900_000;

/** What a context method rejects with when the app refuses (or never answers: `code` null). */
export class PluginCallError extends Error {
  constructor(message, code = null, data = undefined) {
    super(message);
    this.name = "PluginCallError";
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

/** A message longer than the protocol's 64 MiB line limit. */
export class TooLarge extends Error {
  constructor(bytes) {
    super(`the message is ${Math.floor(bytes / (1024 * 1024))} MiB; the protocol carries at most 64 MiB a line`);
    this.name = "TooLarge";
  }
}

export function isId(value) {
  return typeof value === "string" || (typeof value === "number" && Number.isInteger(value));
}

export function log(text) {
  try {
    fs.writeSync(2, `llmspace plugin host: ${text}\n`);
  } catch {
    // stderr is gone too: nothing to tell
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

export class Connection {
  constructor(outFd, gone) {
    this._fd = outFd;
    this._gone = gone;
    this._pending = new Map();
    this._nextId = 0;
    this._held = false;
    this._queue = [];
  }

  /** Write one message as one line; throws TooLarge (or a JSON error) before writing anything. */
  send(message) {
    const text = JSON.stringify({ jsonrpc: "2.0", ...message });
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes >= MAX_LINE) throw new TooLarge(bytes);
    const line = Buffer.allocUnsafe(bytes + 1);
    line.write(text, 0, "utf8");
    line[bytes] = 10;
    let offset = 0;
    let wait = 0.02;
    while (offset < line.length) {
      try {
        offset += fs.writeSync(this._fd, line, offset, line.length - offset);
        wait = 0.02;
      } catch (error) {
        if (error?.code === "EAGAIN") {
          // Bun (or a child process) made the pipe non-blocking and it is full: wait for the app to read.
          Atomics.wait(pause, 0, 0, wait);
          wait = Math.min(wait * 2, 5);
          continue;
        }
        this._gone(error);
        return;
      }
    }
  }

  respond(id, result) {
    this.send({ id, result: result === undefined ? null : result });
  }

  respondError(id, code, message, data = undefined) {
    const error = { code, message };
    if (data !== undefined) error.data = data;
    this.send({ id, error });
  }

  /** Call the app; resolves with its result, rejects with PluginCallError (TooLarge when too long). */
  request(method, params, timeoutMs = CALLBACK_TIMEOUT_MS) {
    return new Promise((resolve, reject) => {
      this._nextId += 1;
      const id = `h${this._nextId}`;
      const timer = setTimeout(() => {
        this._pending.delete(id);
        reject(new PluginCallError(`the app did not answer ${method} within ${timeoutMs / 1000} s`, null));
      }, timeoutMs);
      timer.unref?.();
      this._pending.set(id, { resolve, reject, timer });
      try {
        this.send({ id, method, params });
      } catch (error) {
        clearTimeout(timer);
        this._pending.delete(id);
        reject(error);
      }
    });
  }

  /** Queue incoming messages until `promise` settles, then handle them in order. */
  hold(promise) {
    this._held = true;
    const release = () => {
      this._held = false;
      while (!this._held && this._queue.length) this._message(this._queue.shift());
    };
    promise.then(release, release);
  }

  /** Read app messages from `input` (a Readable of bytes); `ended()` at end of input. */
  serve(input, dispatch, ended) {
    this._dispatch = dispatch;
    let parts = [];
    let size = 0;
    const tooLong = () => {
      log("a line longer than 64 MiB arrived; the protocol ends here");
      ended();
    };
    input.on("data", (chunk) => {
      let start = 0;
      for (;;) {
        const newline = chunk.indexOf(10, start);
        if (newline === -1) break;
        let line = chunk.subarray(start, newline);
        if (this._held && !parts.length) line = Buffer.from(line); // kept past this event
        if (parts.length) {
          parts.push(line);
          line = Buffer.concat(parts, size + line.length);
          parts = [];
          size = 0;
        }
        start = newline + 1;
        if (line.length >= MAX_LINE) return tooLong();
        this._line(line);
      }
      if (start < chunk.length) {
        parts.push(Buffer.from(chunk.subarray(start)));
        size += chunk.length - start;
        if (size >= MAX_LINE) tooLong();
      }
    });
    input.on("end", () => ended());
    input.on("error", () => ended());
  }

  _line(bytes) {
    if (this._held) this._queue.push(bytes);
    else this._message(bytes);
  }

  _message(bytes) {
    const text = bytes.toString("utf8");
    if (!text.trim()) return;
    let message;
    try {
      message = JSON.parse(text);
    } catch (error) {
      this._safeError(null, PARSE_ERROR, `not JSON: ${error?.message ?? error}`);
      return;
    }
    if (message === null || typeof message !== "object" || Array.isArray(message) || message.jsonrpc !== "2.0") {
      const id = message !== null && typeof message === "object" && !Array.isArray(message) ? message.id : null;
      this._safeError(id, INVALID_REQUEST, "not a JSON-RPC 2.0 message (batches are not supported)");
      return;
    }
    this._handle(message);
  }

  _handle(message) {
    if ("method" in message) this._dispatch(message);
    else if ("id" in message && ("result" in message || "error" in message)) this._resolve(message);
    else this._safeError(message.id, INVALID_REQUEST, "neither a request nor a response");
  }

  _resolve(message) {
    const pending = typeof message.id === "string" ? this._pending.get(message.id) : undefined;
    if (pending === undefined) {
      log(`an answer to an unknown request arrived (id ${JSON.stringify(message.id)})`);
      return;
    }
    this._pending.delete(message.id);
    clearTimeout(pending.timer);
    const error = message.error;
    if (error !== undefined && error !== null) {
      if (typeof error === "object" && !Array.isArray(error)) {
        const text = error.message === undefined || error.message === null ? "refused" : String(error.message);
        const code = typeof error.code === "number" ? error.code : null;
        pending.reject(new PluginCallError(text, code, error.data));
      } else {
        pending.reject(new PluginCallError("the app answered with a malformed error", INTERNAL_ERROR));
      }
    } else {
      pending.resolve(message.result === undefined ? null : message.result);
    }
  }

  _safeError(id, code, text) {
    try {
      this.respondError(isId(id) ? id : null, code, text);
    } catch (error) {
      log(`could not answer: ${error?.message ?? error}`);
    }
  }
}
