// JSON in and out of plugin code (docs/plugin-protocol.md, `execute`): deep-frozen views of
// what the app sends, and a strict check of what plugin code returns.
//
// `deepFreeze(value)` freezes parsed JSON in place (the host owns every parsed message).
// `toJson(value)` returns a plain JSON copy of a plugin's value or throws `NotJSON` naming
// the first thing JSON cannot carry and where: functions, symbols, BigInt, NaN and
// ±Infinity, reference cycles, and objects that are not plain (class instances such as
// Date, Map, Set, Uint8Array: JSON.stringify would silently turn them into strings or `{}`).
// Like JSON.stringify, an `undefined` property is left out and an `undefined` array item
// becomes null; boxed primitives (`new String("x")`) become the primitive.
// Used by loading.mjs, calls.mjs and context.mjs.

export class NotJSON extends Error {
  constructor(type, where) {
    super(`${article(type)} at ${where} is not JSON`);
    this.name = "NotJSON";
    this.type = type;
    this.where = where;
  }
}

function article(type) {
  if (type === "NaN" || type === "Infinity" || type === "-Infinity") return type;
  if (type === "cycle") return "a reference cycle";
  return `${/^[aeiou]/i.test(type) ? "an" : "a"} ${type}`;
}

export function deepFreeze(value) {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze(value[key]);
  }
  return value;
}

export function isPlainObject(value) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function toJson(value) {
  try {
    return plain(value, "$", new Set());
  } catch (error) {
    if (error instanceof RangeError) throw new NotJSON("structure nested too deeply", "$");
    throw error;
  }
}

function plain(value, where, path) {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (Number.isNaN(value)) throw new NotJSON("NaN", where);
      if (!Number.isFinite(value)) throw new NotJSON(value > 0 ? "Infinity" : "-Infinity", where);
      return value;
    case "undefined":
      return null;
    case "bigint":
      throw new NotJSON("BigInt", where);
    case "symbol":
      throw new NotJSON("symbol", where);
    case "function":
      throw new NotJSON("function", where);
    default:
      break;
  }
  if (value === null) return null;
  if (value instanceof String || value instanceof Number || value instanceof Boolean) {
    return plain(value.valueOf(), where, path);
  }
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) throw new NotJSON(typeName(value), where);
  if (path.has(value)) throw new NotJSON("cycle", where);
  path.add(value);
  try {
    if (isArray) {
      const out = new Array(value.length);
      for (let i = 0; i < value.length; i++) out[i] = plain(value[i], `${where}[${i}]`, path);
      return out;
    }
    const out = {};
    for (const key of Object.keys(value)) {
      const item = value[key];
      if (item === undefined) continue;
      const copy = plain(item, `${where}.${key}`, path);
      if (key === "__proto__") Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
      else out[key] = copy;
    }
    return out;
  } finally {
    path.delete(value);
  }
}

function typeName(value) {
  try {
    const name = value.constructor?.name;
    if (typeof name === "string" && name) return name;
  } catch {
    // a throwing `constructor` getter: fall through
  }
  return "object";
}
