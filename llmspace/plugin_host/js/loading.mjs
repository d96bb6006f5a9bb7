// `initialize`: import each code file on its own, take its default export, instantiate it and
// check the contract of its kind (docs/plugin-protocol.md, the table under `initialize`; the
// plugin guide's camelCase names).
//
// `load(files)` returns one `Extension` per entry, in order: active with its metadata and
// protocol methods, or failed at the `import`, `constructor` or `contract` stage with a
// message (`"<ErrorName>: <text>"` for the first two) and a stack. One file's failure touches
// no other. Used by host.mjs; calls.mjs runs the loaded instances.

import { basename, extname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { explainCoreImport } from "./core-types.mjs";
import { NotJSON, toJson } from "./plainjson.mjs";
import { KINDS } from "./protocol.mjs";
const CODE_FILES = new Set([".ts", ".js", ".mjs"]);
const DEEP_LINK_ID = /^[a-z0-9._-]+$/;

const HOST_URL = new URL(".", import.meta.url).href;
const HOST_DIR = fileURLToPath(HOST_URL);

class ContractError extends Error {}

/** A stack without the frames of the host's own modules. */
export function withoutHostFrames(stack) {
  return stack
    .split("\n")
    .filter((line) => !(/^\s+at /.test(line) && (line.includes(HOST_URL) || line.includes(HOST_DIR))))
    .join("\n")
    .trimEnd();
}

export class Extension {
  constructor(kind, id) {
    this.kind = kind;
    this.id = id;
    this.instance = undefined;
    this.metadata = null;
    this.error = null;
    /** Protocol method name (execute, resolveLatest, read, write) → function, called on `instance`. */
    this.methods = new Map();
  }

  get key() {
    return `${this.kind}:${this.id}`;
  }

  describe() {
    const entry = { kind: this.kind, id: this.id };
    if (this.error === null) Object.assign(entry, { status: "active", metadata: this.metadata });
    else Object.assign(entry, { status: "failed", error: this.error });
    return entry;
  }
}

/** A thrown value → its name, its text and its stack ("" when it has none). */
export function describeThrown(error) {
  if (error !== null && typeof error === "object") {
    let name = "Error";
    let message = "";
    let stack = "";
    try {
      name = typeof error.name === "string" && error.name ? error.name : error.constructor?.name || "Error";
      message = error.message === undefined || error.message === null ? "" : String(error.message);
      stack = typeof error.stack === "string" ? error.stack : "";
      const where = error.position; // a Bun BuildMessage (syntax error): no stack, a position
      if (!stack && where && typeof where === "object" && where.file) {
        stack = `${where.file}:${where.line}:${where.column}\n${where.lineText ?? ""}`;
        message = `${message} (${where.file}:${where.line}:${where.column})`;
      }
    } catch {
      // a throwing getter on the thrown value: keep what we have
    }
    return { name, message: message.trim(), stack: withoutHostFrames(stack) };
  }
  let message;
  try {
    message = String(error);
  } catch {
    message = typeof error;
  }
  return { name: "Error", message: message.trim(), stack: "" };
}

function oneLine({ name, message }) {
  return message ? `${name}: ${message}` : name;
}

function failure(stage, message, stack = "") {
  return { stage, message, stack };
}

export async function load(files) {
  const loaded = [];
  const seen = new Set();
  for (const entry of files) {
    const item = entry !== null && typeof entry === "object" && !Array.isArray(entry) ? entry : {};
    const { kind, id, path } = item;
    const ext = new Extension(String(kind), String(id));
    loaded.push(ext);
    if (!KINDS.includes(kind) || typeof id !== "string" || !id || typeof path !== "string") {
      ext.error = failure("contract", `not an extension file entry: ${JSON.stringify(entry)}`);
    } else if (seen.has(`${kind}:${id}`)) {
      ext.error = failure("contract", `a second ${kind} with the id ${JSON.stringify(id)}`);
    } else if (basename(path).startsWith("_")) {
      ext.error = failure("contract", `${basename(path)} is a helper (its name starts with _), not an extension`);
    } else {
      seen.add(`${kind}:${id}`);
      await loadOne(ext, path);
    }
  }
  return loaded;
}

async function loadOne(ext, path) {
  let module;
  try {
    if (!CODE_FILES.has(extname(path))) throw new Error(`${path} is not a .ts, .js or .mjs file`);
    module = await import(pathToFileURL(path).href);
  } catch (error) {
    const thrown = describeThrown(error);
    if (error?.code === "ERR_UNKNOWN_FILE_EXTENSION" && extname(path) === ".ts") {
      thrown.message += " (this Node cannot strip TypeScript types: run the plugin with Bun, or Node ≥ 22.6)";
    }
    ext.error = failure("import", explainCoreImport(thrown.name, thrown.message) ?? oneLine(thrown), thrown.stack);
    return;
  }
  const Cls = module.default;
  if (typeof Cls !== "function" || Cls.prototype === undefined) {
    const message = Cls === undefined
      ? "the file has no default export: `export default class …` (with a constructor that takes no arguments)"
      : `the default export must be a class (instantiated with no arguments), not ${typeof Cls === "function" ? "an arrow function or a method" : describe(Cls)}`;
    ext.error = failure("contract", message);
    return;
  }
  try {
    ext.instance = new Cls();
  } catch (error) {
    const thrown = describeThrown(error);
    ext.error = failure("constructor", oneLine(thrown), thrown.stack);
    return;
  }
  try {
    const [metadata, methods] = CHECKS[ext.kind](ext.instance);
    ext.metadata = metadata;
    ext.methods = methods;
  } catch (error) {
    if (error instanceof ContractError) {
      ext.error = failure("contract", error.message);
    } else {
      const thrown = describeThrown(error); // a getter of the plugin's class threw
      ext.error = failure("contract", oneLine(thrown), thrown.stack);
    }
  }
}

function describe(value) {
  if (value === undefined || value === null) return "missing";
  if (typeof value === "string") return JSON.stringify(value.length > 57 ? `${value.slice(0, 57)}...` : value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return value.constructor?.name && value.constructor !== Object ? `a ${value.constructor.name}` : "an object";
  return `a ${typeof value}`;
}

function textMember(instance, name, { required, nonEmpty = false }) {
  const value = instance[name];
  if ((value === undefined || value === null) && !required) return "";
  if (typeof value !== "string" || (nonEmpty && !value.trim())) {
    throw new ContractError(`\`${name}\` must be ${nonEmpty ? "a non-empty string" : "a string"}, not ${describe(value)}`);
  }
  return value;
}

function method(instance, name, { required }) {
  const value = instance[name];
  if ((value === undefined || value === null) && !required) return null;
  if (typeof value !== "function") throw new ContractError(`\`${name}\` must be a method, not ${describe(value)}`);
  return value;
}

function tool(instance) {
  const name = textMember(instance, "name", { required: true, nonEmpty: true });
  const description = textMember(instance, "description", { required: true });
  let parameters = instance.parameters;
  if (parameters === null || typeof parameters !== "object" || Array.isArray(parameters) || parameters.type !== "object") {
    throw new ContractError('`parameters` must be a JSON Schema object with "type": "object"');
  }
  try {
    parameters = toJson(parameters);
  } catch (error) {
    if (error instanceof NotJSON) throw new ContractError(`\`parameters\` is not JSON: ${error.message}`);
    throw error;
  }
  const strict = instance.strict;
  if (strict !== undefined && strict !== null && typeof strict !== "boolean") {
    throw new ContractError(`\`strict\` must be true or false, not ${describe(strict)}`);
  }
  const execute = method(instance, "execute", { required: true });
  method(instance, "dispose", { required: false });
  return [{ name, description, parameters, strict: strict === true }, new Map([["execute", execute]])];
}

function command(instance) {
  const displayName = textMember(instance, "displayName", { required: true, nonEmpty: true });
  const description = textMember(instance, "description", { required: false });
  const execute = method(instance, "execute", { required: true });
  method(instance, "dispose", { required: false });
  return [{ displayName, description }, new Map([["execute", execute]])];
}

function storage(instance) {
  const displayName = textMember(instance, "displayName", { required: true, nonEmpty: true });
  const description = textMember(instance, "description", { required: false });
  const caps = instance.capabilities;
  if (caps === null || typeof caps !== "object" || Array.isArray(caps)) {
    throw new ContractError("`capabilities` must be an object like {read: true, write: false}");
  }
  const read = caps.read ?? false;
  const write = caps.write ?? false;
  if (typeof read !== "boolean" || typeof write !== "boolean") {
    throw new ContractError("`capabilities` read and write must be true or false");
  }
  if (!read && !write) throw new ContractError("`capabilities` must allow read, write or both");
  const methods = new Map();
  if (read) {
    methods.set("resolveLatest", method(instance, "resolveLatest", { required: true }));
    methods.set("read", method(instance, "read", { required: true }));
  }
  if (write) methods.set("write", method(instance, "write", { required: true }));
  const listing = read ? method(instance, "list", { required: false }) : null; // optional: our extension
  if (listing) methods.set("list", listing);
  let deepLinkId = instance.deepLinkId;
  if (deepLinkId === undefined || deepLinkId === null) {
    deepLinkId = null;
  } else {
    if (!read) throw new ContractError("`deepLinkId` is for readable storages only");
    if (typeof deepLinkId !== "string" || !DEEP_LINK_ID.test(deepLinkId)) {
      throw new ContractError(`\`deepLinkId\` must match ^[a-z0-9._-]+$, not ${describe(deepLinkId)}`);
    }
  }
  method(instance, "dispose", { required: false });
  return [{ displayName, description, deepLinkId, capabilities: { read, write, list: listing !== null } }, methods];
}

const CHECKS = { tool, command, "thread-storage": storage };
