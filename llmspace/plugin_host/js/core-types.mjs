// `@llm-space/core` is the plugin API's TypeScript types, nothing more (docs/plugin-protocol.md,
// "JavaScript host"). `import type … from "@llm-space/core"` is erased before the code runs
// (Bun's transpiler, Node's type stripping), so it needs nothing. A VALUE import must fail
// with a message that says what to do, in both runtimes:
//
// - Bun: a virtual module (`Bun.plugin` + `build.module`) that throws CORE_TYPES_ONLY when it
//   is imported. Bun drops every import whose bindings are used as types only, so whatever
//   reaches it is a value import. A subpath (`@llm-space/core/x`) fails to resolve and
//   `explainCoreImport` rewrites that error.
// - Node: `module.registerHooks` (22.15+; synchronous, in the host's thread), else
//   `module.register` (this file as a loader, 20.6+) when type stripping is on: `resolve` maps the
//   specifier to a module that throws CORE_TYPES_ONLY, except for an importer that is a
//   TypeScript file: Node's type stripping turns `import { type X } from "@llm-space/core"`
//   into `import {} from "@llm-space/core"`, so there it maps to an empty module and a named
//   value import fails at link time ("does not provide an export named …"), which
//   `explainCoreImport` rewrites.
// - Node without type stripping or hooks: the package is not found, and that error is rewritten.
//
// Used by host.mjs (`installCoreTypes`) and loading.mjs (`explainCoreImport`); Node loads this
// file a second time as the loader module of `module.register`.

export const CORE_TYPES_ONLY = '@llm-space/core provides TypeScript types only; use "import type"';

const SPECIFIER = /^@llm-space\/core(?:\/.*)?$/;
const MENTIONS = /(['"])@llm-space\/core(?:\/[^'"]*)?\1/;
const TS_IMPORTER = /\.[mc]?ts(?:$|[?#])/;
const THROWS = `throw new Error(${JSON.stringify(CORE_TYPES_ONLY)});\n`;
const THROWS_URL = `data:text/javascript,${encodeURIComponent(THROWS)}`;
const EMPTY_URL = "data:text/javascript,export%20%7B%7D%3B";

/** Node resolve hook (for `module.registerHooks` and, as this module's export, `module.register`). */
export function resolve(specifier, context, nextResolve) {
  if (!SPECIFIER.test(specifier)) return nextResolve(specifier, context);
  const fromTypeScript = TS_IMPORTER.test(context?.parentURL ?? "");
  return { url: fromTypeScript ? EMPTY_URL : THROWS_URL, format: "module", shortCircuit: true };
}

/** Install the runtime's hook; returns how ("bun-plugin", "registerHooks", "register" or "none"). */
export async function installCoreTypes() {
  if (typeof globalThis.Bun !== "undefined" && typeof globalThis.Bun.plugin === "function") {
    globalThis.Bun.plugin({
      name: "llm-space-core-types",
      setup(build) {
        build.module("@llm-space/core", () => {
          throw new Error(CORE_TYPES_ONLY);
        });
      },
    });
    return "bun-plugin";
  }
  const module = await import("node:module");
  if (typeof module.registerHooks === "function") {
    module.registerHooks({ resolve });
    return "registerHooks";
  }
  if (typeof module.register === "function" && stripsTypes()) {
    module.register("./core-types.mjs", import.meta.url);
    return "register";
  }
  return "none";
}

function stripsTypes() {
  if (process.features?.typescript) return true;
  const flag = /--(?:experimental-)?(?:strip|transform)-types/;
  return process.execArgv.some((arg) => flag.test(arg)) || flag.test(process.env.NODE_OPTIONS ?? "");
}

/** An import error that is about `@llm-space/core` → the message to show instead; else null. */
export function explainCoreImport(name, text) {
  if (text.startsWith(CORE_TYPES_ONLY) || !MENTIONS.test(text)) return null;
  return `Error: ${CORE_TYPES_ONLY} (${name}: ${text})`;
}
