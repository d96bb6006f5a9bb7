// The test harness for TypeScript and JavaScript plugins (docs/plugins.md, "Testing"): what
// `llmspace plugins test PATH` preloads into `bun test` (`--preload`) or `node --test`
// (`--import`). It starts the real JavaScript host (host.mjs, under the runtime running the
// tests) on the plugin folder and speaks the protocol to it as the app does, recording what
// the plugin's context calls do:
//
//   const plugin = await llmspace.startPlugin();   // also exported: startPlugin
//   expect(await plugin.tool("echo-text", { text: "hi" })).toEqual({ text: "hi", length: 2 });
//   const outcome = await plugin.command("greet", ["Ada"], { settings: { greeting: "Hi" } });
//   // outcome: { level, message, value }; plugin.notifications, .links, .reports,
//   // .writtenThreads, .hostCommands; files it writes land in plugin.workspace
//   await plugin.close();
//
// The plugin folder is LLM_SPACE_PLUGIN_ROOT (set by `plugins test`), else the working
// directory. A failed call rejects with an Error carrying the host's `code` and `data`.

import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import * as P from "./protocol.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const FOLDERS = { tools: P.TOOL, commands: P.COMMAND, "thread-storages": P.THREAD_STORAGE };
const CODE = new Set([".ts", ".js", ".mjs"]);

function codeFiles(root) {
  const files = [];
  for (const [folder, kind] of Object.entries(FOLDERS)) {
    let names = [];
    try {
      names = readdirSync(join(root, folder));
    } catch {
      continue;
    }
    for (const name of names.sort()) {
      const ext = extname(name);
      if (CODE.has(ext) && !name.endsWith(".d.ts") && !name.startsWith(".")) {
        files.push({ kind, id: basename(name, ext), path: join(root, folder, name) });
      }
    }
  }
  return files;
}

function inside(workspace, rel) {
  const path = resolve(workspace, rel);
  if (path !== workspace && !path.startsWith(workspace + sep)) throw new Error(`${rel} is outside the workspace`);
  return path;
}

/** Start the plugin at `root` in a real JavaScript host. */
export async function startPlugin({ root = process.env.LLM_SPACE_PLUGIN_ROOT || process.cwd(), settings = {} } = {}) {
  root = resolve(root);
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const workspace = mkdtempSync(join(tmpdir(), "llmspace-plugin-test-"));
  const argv = [join(HERE, "host.mjs")];
  if (!process.versions.bun) argv.unshift("--no-warnings", "--experimental-strip-types");
  const child = spawn(process.execPath, argv, { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
  const pending = new Map();
  let nextId = 0;
  const plugin = {
    name: manifest.name, root, workspace, settings: { ...settings }, output: [],
    notifications: [], links: [], reports: [], writtenThreads: [], hostCommands: [],
  };
  const send = (message) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
  const request = (method, params) => new Promise((resolveCall, reject) => {
    const id = ++nextId;
    pending.set(id, { resolve: resolveCall, reject });
    send({ id, method, params });
  });
  const callbacks = {
    [P.NOTIFY]: (p) => { plugin.notifications.push([p.message, p.level ?? "info"]); return null; },
    [P.OPEN_LINK]: (p) => { plugin.links.push(p.url); return null; },
    [P.PICK_FILE]: () => null,
    [P.READ_WORKSPACE_FILE]: (p) => readFileSync(inside(workspace, p.path), "utf8"),
    [P.WRITE_WORKSPACE_FILE]: (p) => {
      const path = inside(workspace, p.path);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, p.content);
      return null;
    },
    [P.EXECUTE_HOST_COMMAND]: (p) => { plugin.hostCommands.push([p.type, p.args]); return null; },
    [P.REPORT]: (p) => { plugin.reports.push({ phase: p.phase, message: p.message ?? "" }); return null; },
    [P.WRITE_THREAD]: (p) => { plugin.writtenThreads.push(p.thread); return null; },
  };
  createInterface({ input: child.stderr }).on("line", (line) => plugin.output.push(line));
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line);
    if (message.method) {
      const handler = callbacks[message.method];
      try {
        if (!handler) throw new Error(`unknown callback ${message.method}`);
        send({ id: message.id, result: handler(message.params ?? {}) });
      } catch (error) {
        send({ id: message.id, error: { code: -32010, message: String(error.message ?? error) } });
      }
      return;
    }
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if (message.error) {
      const error = new Error(message.error.message);
      error.code = message.error.code;
      error.data = message.error.data;
      waiting.reject(error);
    } else {
      waiting.resolve(message.result);
    }
  });
  child.on("exit", () => {
    for (const waiting of pending.values()) waiting.reject(new Error(`the plugin host ended\n${plugin.output.join("\n")}`));
    pending.clear();
  });

  const files = codeFiles(root);
  const init = await request(P.INITIALIZE, {
    protocolVersion: P.PROTOCOL_VERSION, appVersion: "4.9.0", workspace,
    plugin: { name: manifest.name, version: manifest.version ?? "", root }, files,
  });
  const failed = init.extensions.filter((e) => e.status !== "active");
  if (failed.length) {
    await plugin.close?.();
    child.kill();
    throw new Error(`${manifest.name} did not load:\n` +
      failed.map((e) => `${e.kind} ${e.id}: ${e.error?.message}\n${e.error?.stack ?? ""}`).join("\n"));
  }
  let calls = 0;
  const execute = (kind, id, input, context) => request(P.EXECUTE, {
    callId: `t${++calls}`, kind, id, method: "execute", input, context: { settings: plugin.settings, ...context },
  });

  plugin.tool = async (id, args = {}, { thread = {}, variables = {} } = {}) => {
    const answer = await execute(P.TOOL, id, { arguments: args }, { thread, variables });
    return answer.type === "result" ? answer.result : answer.value;
  };
  plugin.command = async (id, args = [], { thread = null, filename = "test-thread.json" } = {}) => {
    const activeTab = thread ? { filename, thread } : null;
    const answer = await execute(P.COMMAND, id, { arguments: args }, { activeTab });
    if (answer.type === "result") return { level: answer.result.level, message: answer.result.message ?? "" };
    return { level: "success", message: "", value: answer.value };
  };
  plugin.close = async () => {
    if (child.exitCode === null) {
      await Promise.race([request(P.SHUTDOWN, {}).catch(() => null), new Promise((r) => setTimeout(r, 3000))]);
      child.stdin.end();
      child.kill();
    }
    rmSync(workspace, { recursive: true, force: true });
  };
  return plugin;
}

globalThis.llmspace = { startPlugin };
