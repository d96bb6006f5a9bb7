// Runs one promptfoo `javascript` assertion inside a confined JavaScript plugin host: the host
// loads this file as a tool extension (llmspace/evals/code_assertions.py starts it with no
// capabilities), and each call runs the assertion's code on one output.
//
// Arguments: {code?, file?, function?, output, context}. Inline code without a line break is
// an expression; code of several lines is the body of a function of `output` and `context`
// (promptfoo's rule: `return ${code}` for one line). A file (inside the evaluation's folder) is imported; its named
// `function`, else its default export (or module.exports) when that is a function, is called.
// The answer is {result} (plain JSON) or {error: "Type: message"} when the code threw.
import { pathToFileURL } from "node:url";

const AsyncFunction = (async () => {}).constructor;

function inline(code) {
  const text = code.trim();
  const body = text.includes("\n") ? code : `return ${text}`;
  return new AsyncFunction("output", "context", body); // `await` allowed, a superset of promptfoo's
}

async function fromFile(file, name) {
  const mod = await import(pathToFileURL(file).href);
  if (name) {
    const found = mod[name] ?? mod.default?.[name];
    if (typeof found !== "function") throw new Error(`${file.split("/").pop()} has no function ${name}`);
    return found;
  }
  if (typeof mod.default === "function") return mod.default;
  throw new Error(`${file.split("/").pop()} exports no function (export one as default, or name it: file://x.js:fn)`);
}

function plain(value) {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value));
  } catch {
    return String(value);
  }
}

export default class CodeAssertion {
  name = "assertion";
  description = "Runs one javascript assertion of an evaluation on one output.";
  parameters = { type: "object" };

  async execute(_ctx, args) {
    try {
      const fn = typeof args.file === "string" ? await fromFile(args.file, args.function) : inline(String(args.code ?? ""));
      return { result: plain(await fn(args.output, args.context ?? {})) };
    } catch (error) {
      const name = error?.name ?? "Error";
      return { error: `${name}: ${error?.message ?? String(error)}` };
    }
  }
}
