// The JavaScript plugin host: the process `bun host.mjs` or `node host.mjs` (Node 22.6–22.17
// with `--experimental-strip-types` for .ts files) that runs one plugin's .ts/.js/.mjs code
// files for the app, speaking docs/plugin-protocol.md — the same protocol as the Python host
// (llmspace/plugin_host/) — over its stdin and stdout. No dependencies, no build step.
//
// Before any plugin code loads, the host keeps file descriptor 1 for the protocol (written
// with fs.writeSync by rpc.mjs) and points `process.stdout` and every `console` method at
// stderr, and `process.stdin` at an empty stream, so nothing a plugin prints or reads touches
// the protocol. End of stdin exits at once; `shutdown` disposes and exits 0; SIGINT is ignored.
// Modules: rpc.mjs (the connection), loading.mjs (imports and the contract), calls.mjs
// (running calls), context.mjs (what plugin code gets), plainjson.mjs (frozen views, the
// strict JSON check), core-types.mjs (`@llm-space/core` is types only).

import { Console } from "node:console";
import { createRequire } from "node:module";

import { Calls } from "./calls.mjs";
import { installCoreTypes } from "./core-types.mjs";
import { load } from "./loading.mjs";
import {
  CANCEL, EXECUTE, INITIALIZE, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PING, PROTOCOL_VERSION,
  SHUTDOWN,
} from "./protocol.mjs";
import { Connection, isId, log } from "./rpc.mjs";

function takeStdio() {
  const input = process.stdin;
  const stderr = process.stderr;
  let empty = null;
  Object.defineProperty(process, "stdout", { configurable: true, enumerable: true, get: () => stderr });
  Object.defineProperty(process, "stdin", {
    configurable: true,
    enumerable: true,
    get: () => (empty ??= emptyStream()),
  });
  const quiet = new Console({ stdout: stderr, stderr });
  for (const key of Object.keys(quiet)) {
    if (typeof quiet[key] === "function") console[key] = quiet[key];
  }
  return input;
}

/** What plugin code gets as `process.stdin`: a stream that ends at once (node:stream loads
 * only when asked for: it costs Bun a few milliseconds at start). */
function emptyStream() {
  const { Readable } = createRequire(import.meta.url)("node:stream");
  return new Readable({ read() { this.push(null); } });
}

function exit(code) {
  process.exit(code);
}

class Host {
  constructor(conn) {
    this._conn = conn;
    this._calls = new Calls(conn);
    this._initialized = false;
    this._runtime = typeof globalThis.Bun !== "undefined"
      ? { name: "bun", version: globalThis.Bun.version }
      : { name: "node", version: process.versions.node };
    this.dispatch = this.dispatch.bind(this);
  }

  dispatch(message) {
    try {
      this._dispatch(message);
    } catch (error) {
      log(`the plugin host failed: ${error?.stack ?? error}`);
      if (isId(message.id)) {
        this._conn.respondError(message.id, INTERNAL_ERROR, `the plugin host failed: ${error?.name}: ${error?.message}`);
      }
    }
  }

  _dispatch(message) {
    const { method } = message;
    const params = "params" in message ? message.params : {};
    const isRequest = "id" in message;
    const id = message.id;
    if (typeof method !== "string" || (isRequest && !isId(id))) {
      this._conn.respondError(isId(id) ? id : null, INVALID_REQUEST, "method must be a string and id a string or an integer");
      return;
    }
    if (params === null || typeof params !== "object" || Array.isArray(params)) {
      if (isRequest) this._conn.respondError(id, INVALID_PARAMS, "params must be an object");
      return;
    }
    if (method === CANCEL) {
      this._calls.cancel(params);
      if (isRequest) this._conn.respond(id, null);
      return;
    }
    if (!isRequest) return; // other notifications mean nothing to the host
    if (method === EXECUTE) this._calls.execute(id, params);
    else if (method === PING) this._conn.respond(id, {});
    else if (method === INITIALIZE) this._initialize(id, params);
    else if (method === SHUTDOWN) this._shutdown(id);
    else this._conn.respondError(id, METHOD_NOT_FOUND, `unknown method ${JSON.stringify(method)}`);
  }

  _initialize(id, params) {
    if (this._initialized) {
      this._conn.respondError(id, INVALID_REQUEST, "the host is initialized already");
      return;
    }
    const { protocolVersion, plugin, files } = params;
    if (protocolVersion !== PROTOCOL_VERSION) {
      this._conn.respondError(id, INVALID_PARAMS,
        `protocolVersion ${JSON.stringify(protocolVersion) ?? "undefined"} is not supported (this host speaks ${PROTOCOL_VERSION})`);
      return;
    }
    if (plugin === null || typeof plugin !== "object" || typeof plugin.root !== "string" || !Array.isArray(files)) {
      this._conn.respondError(id, INVALID_PARAMS, "initialize needs plugin.root and a list of files");
      return;
    }
    this._initialized = true;
    const work = (async () => {
      await installCoreTypes();
      const extensions = await load(files);
      this._calls.setExtensions(extensions);
      this._conn.respond(id, { runtime: this._runtime, extensions: extensions.map((e) => e.describe()) });
    })();
    this._conn.hold(work);
    work.catch((error) => {
      log(`initialize failed: ${error?.stack ?? error}`);
      this._conn.respondError(id, INTERNAL_ERROR, `the plugin host failed: ${error?.name}: ${error?.message}`);
    });
  }

  _shutdown(id) {
    this._calls.shutdown().then(
      (answer) => {
        this._conn.respond(id, answer);
        exit(0);
      },
      (error) => {
        log(`shutdown failed: ${error?.stack ?? error}`);
        this._conn.respondError(id, INTERNAL_ERROR, `the plugin host failed: ${error?.name}: ${error?.message}`);
        exit(0);
      },
    );
  }
}

const input = takeStdio();
// The app ends the host (end of input, shutdown, kill); a Ctrl-C sent to the whole process
// group must not. A handler, not an ignored signal, so child processes get the default.
process.on("SIGINT", () => {});
process.on("uncaughtException", (error) => log(`plugin code threw outside a call: ${error?.stack ?? error}`));
process.on("unhandledRejection", (error) => log(`a promise of plugin code was rejected and not handled: ${error?.stack ?? error}`));
const conn = new Connection(1, () => exit(0));
conn.serve(input, new Host(conn).dispatch, () => exit(0));
