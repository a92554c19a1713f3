// The workflow guest: runs one model-written workflow script for acp-plus's `workflow`
// tool (acp_plus/core/tools/workflow_family.py), in its own Node process.
//
// Why Node: the script is JavaScript, and what the model reads back from a run (a syntax
// error's wording, a thrown error's stack with the script's own line:column frames) is
// V8's. Native runs the same kind of script in a confined Node process of its own, so
// acp-plus does too, under the same sandbox as `bash` (workflow_engine.py starts it).
//
// The wire is one JSON object per line. The host writes the run first:
//   {"op":"run","meta":{...},"body":"...","args":...,"limits":{...}}
// and the guest answers with {"op":"parsed"} once the body compiles, then, in any number:
//   {"op":"progress","event":{"type":"phase"|"log"|"agent-start"|"agent-end",...}}
//   {"op":"start-child","call":N,"request":{"prompt":...,"schema"?,"provider"?,"model"?}}
//   {"op":"dispose-child","call":N}
// and ends with exactly one of
//   {"op":"parse-error","message":"..."}     the body does not compile: nothing ran
//   {"op":"result","result":{"value":...,"rendered"?,"stopReason":"completed"|"error","error"?,"agentsStarted":N}}
// The host answers a start-child with {"op":"child","call":N,"childId":"..."} or
// {"op":"child-failed","call":N,"error":"..."}, then with {"op":"child-result","call":N,
// "result":{"output":[blocks],"stopReason":"...","structured"?:{...}}} or
// {"op":"child-error","call":N,"error":"..."}.
//
// The script sees only the hooks (agent, parallel, pipeline, phase, log) and `args` in a
// fresh vm context; vm is no security boundary, which is why the process is confined.

import * as vm from "node:vm";
import * as readline from "node:readline";

const AGENT_OPTIONS = ["label", "phase", "schema", "provider", "model"];
const DEFERRED_OPTIONS = ["effort", "isolation", "agentType"];
const SCHEMA_CONSTRAINTS = ["type", "oneOf", "properties", "required", "additionalProperties", "items", "enum", "const"];
const SCHEMA_ANNOTATIONS = ["description", "title", "default", "examples"];
const SCHEMA_TYPES = ["object", "array", "string", "number", "integer", "boolean", "null"];
const SCALAR_TYPES = ["string", "number", "integer", "boolean", "null"];
const BESIDE_ONE_OF = ["properties", "required", "additionalProperties", "items", "enum", "const"];
const DASH = "\u2014";

/** A misused hook: always ends the whole script (combinators never turn it into null). */
class WorkflowError extends Error {
  constructor(message, code) {
    super(message);
    this.name = "WorkflowError";
    this.code = code;
  }
}

/** A value that is no JSON data, with the path that says where. */
class NotJson extends Error {
  constructor(path, reason) {
    super(`${path}: ${reason}`);
  }
}

/** Failure text for any thrown value, never throwing itself: the stack, else the message. */
function describe(error) {
  try {
    const stack = error?.stack;
    if (typeof stack === "string" && stack.length > 0) return stack;
    const message = error?.message;
    if (typeof message === "string" && message.length > 0) return message;
    return String(error);
  } catch {
    return "[unrenderable thrown value]";
  }
}

/**
 * A failure's stack with only the script's own frames (`workflow:NAME:LINE:COL`): the
 * frames below them are this guest's and Node's, which say nothing to the model and
 * change with every edit of this file and every Node version (native's show its own
 * engine there; docs/acp-plus.md, "The workflow tool").
 */
function ownFrames(text, name) {
  const lines = text.split("\n");
  const first = lines.findIndex((line) => line.startsWith("    at "));
  if (first === -1) return text;
  const script = `workflow:${name}:`;
  return [...lines.slice(0, first), ...lines.slice(first).filter((line) => line.startsWith("    at ") && line.includes(script))].join("\n");
}

// --- JSON data out of the script's realm -------------------------------------------

function isPlainObject(value) {
  // Prototypes cannot be compared by identity across realms: a plain object's prototype
  // is null, or an object whose own prototype is null.
  const proto = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** A host copy of `value` (JSON data only), or NotJson naming the first offending path. */
function toJson(value, path) {
  if (value === undefined) return undefined;
  try {
    return copy(value, path, new Set());
  } catch (error) {
    if (error instanceof NotJson) throw error;
    throw new NotJson(path, `reading the value threw: ${describe(error)}`);
  }
}

function copy(value, path, open) {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) throw new NotJson(path, "non-finite numbers are not JSON data");
      return value;
    case "bigint":
      throw new NotJson(path, "bigints are not JSON data");
    case "function":
      throw new NotJson(path, "functions are not plain JSON data");
    case "symbol":
      throw new NotJson(path, "symbols are not plain JSON data");
    case "undefined":
      throw new NotJson(path, "undefined is not JSON data");
  }
  if (value === null) return null;
  if (open.has(value)) throw new NotJson(path, "circular references are not JSON data");
  open.add(value);
  try {
    return Array.isArray(value) ? copyArray(value, path, open) : copyObject(value, path, open);
  } finally {
    open.delete(value);
  }
}

function copyArray(value, path, open) {
  const out = [];
  for (let i = 0; i < value.length; i++) {
    if (!(i in value)) throw new NotJson(`${path}[${i}]`, "sparse arrays are not JSON data");
    out.push(copy(value[i], `${path}[${i}]`, open));
  }
  for (const key of Object.keys(value)) {
    const index = Number(key);
    if (!Number.isInteger(index) || index < 0 || index >= value.length) {
      throw new NotJson(`${path}.${key}`, "arrays with non-index properties are not JSON data");
    }
  }
  if (Object.getOwnPropertySymbols(value).length > 0) {
    throw new NotJson(path, "symbol-keyed properties are not plain JSON data");
  }
  return out;
}

function copyObject(value, path, open) {
  if (!isPlainObject(value)) {
    throw new NotJson(path, "only plain objects and arrays are JSON data (exotic prototype)");
  }
  if (Object.getOwnPropertySymbols(value).length > 0) {
    throw new NotJson(path, "symbol-keyed properties are not plain JSON data");
  }
  const out = {};
  for (const key of Object.keys(value)) {
    // defineProperty, not assignment: a key named __proto__ stays a key.
    Object.defineProperty(out, key, {
      value: copy(value[key], `${path}.${key}`, open),
      enumerable: true, writable: true, configurable: true,
    });
  }
  return out;
}

// --- the structured-output schema subset (an agent() option) -----------------------

function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value) && isPlainObject(value);
}

function isJsonNumber(value) {
  return typeof value === "number" && Number.isFinite(value) && !Object.is(value, -0);
}

function fitsScalar(type, value) {
  if (type === "string") return typeof value === "string";
  if (type === "number") return isJsonNumber(value);
  if (type === "integer") return isJsonNumber(value) && Number.isInteger(value);
  if (type === "boolean") return typeof value === "boolean";
  return value === null;
}

function isLosslessJson(value) {
  try {
    return JSON.stringify(toJson(value, "value")) !== undefined && !containsNegativeZero(value);
  } catch {
    return false;
  }
}

function containsNegativeZero(value) {
  if (Object.is(value, -0)) return true;
  if (typeof value !== "object" || value === null) return false;
  return Object.values(value).some(containsNegativeZero);
}

/** Every way `node` (at `path`) leaves the supported subset, in walk order. */
function schemaViolations(node, path, seen, out) {
  if (!isRecord(node)) {
    out.push(`${path} must be a schema object`);
    return;
  }
  if (seen.has(node)) {
    out.push(`${path} is circular`);
    return;
  }
  seen.add(node);
  try {
    checkKeywords(node, path, out);
    const hasType = Object.hasOwn(node, "type");
    const hasOneOf = Object.hasOwn(node, "oneOf");
    if (hasType && hasOneOf) {
      out.push(`${path} cannot declare both type and oneOf`);
    } else if (!hasType && !hasOneOf) {
      for (const key of BESIDE_ONE_OF) if (Object.hasOwn(node, key)) out.push(`${path}.${key} requires type or oneOf`);
    } else if (hasOneOf) {
      const options = node.oneOf;
      if (!Array.isArray(options) || options.length < 2) out.push(`${path}.oneOf must be an array of at least two schemas`);
      else options.forEach((option, i) => schemaViolations(option, `${path}.oneOf[${i}]`, seen, out));
      for (const key of BESIDE_ONE_OF) if (Object.hasOwn(node, key)) out.push(`${path}.${key} is not supported beside oneOf`);
    } else {
      checkTyped(node, path, seen, out);
    }
  } finally {
    seen.delete(node);
  }
}

function checkKeywords(node, path, out) {
  for (const key of Object.keys(node)) {
    if (SCHEMA_CONSTRAINTS.includes(key)) continue;
    if (SCHEMA_ANNOTATIONS.includes(key)) {
      if (!isLosslessJson(node[key])) out.push(`${path}.${key} annotation must be lossless JSON data`);
      continue;
    }
    out.push(`${path}.${key} is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)`);
  }
  if (Object.hasOwn(node, "description") && typeof node.description !== "string") out.push(`${path}.description must be a string`);
  if (Object.hasOwn(node, "title") && typeof node.title !== "string") out.push(`${path}.title must be a string`);
}

function checkTyped(node, path, seen, out) {
  const type = node.type;
  if (typeof type !== "string" || !SCHEMA_TYPES.includes(type)) {
    out.push(Array.isArray(type)
      ? `${path}.type must be a single type string (type arrays are not supported)`
      : `${path}.type must be one of ${SCHEMA_TYPES.join("/")}`);
    return;
  }
  const allowedOn = { properties: ["object"], required: ["object"], additionalProperties: ["object"], items: ["array"], enum: SCALAR_TYPES, const: SCALAR_TYPES };
  for (const [key, types] of Object.entries(allowedOn)) {
    if (Object.hasOwn(node, key) && !types.includes(type)) out.push(`${path}.${key} is not supported on type "${type}"`);
  }
  if (type === "object") {
    const properties = node.properties;
    if (Object.hasOwn(node, "properties")) {
      if (!isRecord(properties)) out.push(`${path}.properties must be an object of schemas`);
      else for (const [key, child] of Object.entries(properties)) schemaViolations(child, `${path}.properties.${key}`, seen, out);
    }
    if (Object.hasOwn(node, "required")) {
      const required = node.required;
      if (!Array.isArray(required) || required.some((entry) => typeof entry !== "string")) {
        out.push(`${path}.required must be an array of strings`);
      } else {
        const declared = isRecord(properties) ? properties : {};
        for (const key of required) if (!Object.hasOwn(declared, key)) out.push(`${path}.required names "${key}" which is not in properties`);
      }
    }
    if (Object.hasOwn(node, "additionalProperties") && typeof node.additionalProperties !== "boolean") {
      out.push(`${path}.additionalProperties must be a boolean`);
    }
  } else if (type === "array") {
    if (Object.hasOwn(node, "items")) schemaViolations(node.items, `${path}.items`, seen, out);
  } else {
    const values = node.enum;
    const enumOk = Array.isArray(values) && values.length > 0 && values.every((v) => fitsScalar(type, v));
    if (Object.hasOwn(node, "enum") && !enumOk) out.push(`${path}.enum must be a non-empty array of ${type} values`);
    if (Object.hasOwn(node, "const")) {
      if (!fitsScalar(type, node.const)) out.push(`${path}.const must be a ${type} value`);
      else if (enumOk && !values.includes(node.const)) out.push(`${path}.const must be one of ${path}.enum when both are declared`);
    }
  }
}

function checkOutputSchema(schema) {
  const out = [];
  schemaViolations(schema, "schema", new Set(), out);
  if (out.length === 0 && schema.type !== "object") out.push('schema.type must be "object" (structured output is object-rooted)');
  if (out.length > 0) {
    throw new WorkflowError(`agent() schema is outside the supported subset ${DASH} unsupported JSON schema: ${out.join("; ")}`, "UNSUPPORTED_SCHEMA");
  }
}

// --- the host link ------------------------------------------------------------------

const waiting = new Map(); // "<kind>:<call>" -> resolve of the host's answer
const early = new Map(); // answers that came before anyone waited for them

function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function answer(kind, call) {
  const key = `${kind}:${call}`;
  if (early.has(key)) {
    const message = early.get(key);
    early.delete(key);
    return Promise.resolve(message);
  }
  return new Promise((resolve) => waiting.set(key, resolve));
}

function deliver(message) {
  // A child's start and its result may arrive in one read, before the agent() call
  // that waits for the result has resumed: keep what nobody waits for yet.
  const kinds = { child: "start", "child-failed": "start", "child-result": "result", "child-error": "result" };
  const key = `${kinds[message.op]}:${message.call}`;
  const resolve = waiting.get(key);
  if (resolve === undefined) {
    early.set(key, message);
    return;
  }
  waiting.delete(key);
  resolve(message);
}

// --- one run ------------------------------------------------------------------------

function defaultLabel(prompt) {
  const line = prompt.split("\n", 1)[0];
  return line.length <= 48 ? line : `${line.slice(0, 47)}\u2026`;
}

function childText(blocks) {
  return blocks.filter((block) => block.type === "text").map((block) => block.text).join("");
}

class Run {
  constructor(limits) {
    this.limits = limits;
    this.started = 0;
    this.busy = 0;
    this.queue = [];
    this.phaseTitle = undefined;
  }

  hooks(args) {
    const own = (promise) => {
      promise.catch(() => {}); // a promise the script drops must not end the process
      return promise;
    };
    return {
      agent: (prompt, opts) => own(this.agent(prompt, opts)),
      parallel: (thunks) => own(this.parallel(thunks)),
      pipeline: (items, ...stages) => own(this.pipeline(items, stages)),
      phase: (title) => this.phase(title),
      log: (message) => this.log(message),
      args,
    };
  }

  async slot() {
    if (this.busy < this.limits.maxConcurrentAgents) {
      this.busy += 1;
      return;
    }
    await new Promise((resolve) => this.queue.push(resolve));
    this.busy += 1;
  }

  release() {
    this.busy -= 1;
    this.queue.shift()?.();
  }

  options(raw) {
    if (raw === undefined) return {};
    let opts;
    try {
      opts = toJson(raw, "agent() options");
    } catch (error) {
      throw new WorkflowError(`agent() options must be plain JSON data ${DASH} ${error.message}`, "INVALID_ARGUMENT");
    }
    if (typeof opts !== "object" || opts === null || Array.isArray(opts)) {
      throw new WorkflowError("agent() options must be an object", "INVALID_ARGUMENT");
    }
    const supported = "(supported: label, phase, schema, provider, model)";
    for (const key of Object.keys(opts)) {
      if (AGENT_OPTIONS.includes(key)) continue;
      const why = DEFERRED_OPTIONS.includes(key) ? "is deferred and not supported by this engine" : "is not recognized";
      throw new WorkflowError(`agent() option "${key}" ${why} ${supported}`, "UNSUPPORTED_OPTION");
    }
    for (const key of ["label", "phase", "provider", "model"]) {
      if (opts[key] !== undefined && typeof opts[key] !== "string") {
        throw new WorkflowError(`agent() option "${key}" must be a string`, "INVALID_ARGUMENT");
      }
    }
    if (opts.schema !== undefined) checkOutputSchema(opts.schema);
    return opts;
  }

  async agent(prompt, rawOpts) {
    if (typeof prompt !== "string" || prompt.length === 0) {
      throw new WorkflowError("agent() requires a non-empty prompt string", "INVALID_ARGUMENT");
    }
    const opts = this.options(rawOpts);
    if (this.started >= this.limits.maxTotalAgents) {
      throw new WorkflowError(`this run reached its total agent cap (${this.limits.maxTotalAgents}) ${DASH} a runaway-loop backstop; raise the applicable maxTotalAgents limit if the scale is intentional`, "AGENT_CAP");
    }
    this.started += 1;
    const seq = this.started;
    const label = opts.label ?? defaultLabel(prompt);
    const phase = opts.phase ?? this.phaseTitle;
    await this.slot();
    try {
      const request = { prompt };
      for (const key of ["schema", "provider", "model"]) if (opts[key] !== undefined) request[key] = opts[key];
      const started = answer("start", seq);
      send({ op: "start-child", call: seq, request });
      const reply = await started;
      if (reply.op === "child-failed") {
        throw new WorkflowError(`agent() could not start a child: ${reply.error}`, "AGENT_START");
      }
      const info = { seq, label, ...(phase === undefined ? {} : { phase }), childId: reply.childId };
      const end = (outcome) => this.progress({ type: "agent-end", info: { ...info, outcome } });
      this.progress({ type: "agent-start", info });
      try {
        const done = await answer("result", seq);
        if (done.op === "child-error") {
          end("failed");
          throw new WorkflowError(`child agent run failed: ${done.error}`, "AGENT_RESULT");
        }
        const result = done.result;
        const value = result.stopReason !== "completed" ? null
          : opts.schema !== undefined ? (result.structured ?? null)
          : childText(result.output);
        end(value === null ? "failed" : "completed");
        return value;
      } finally {
        send({ op: "dispose-child", call: seq });
      }
    } finally {
      this.release();
    }
  }

  capItems(count, hook) {
    if (count > this.limits.maxItemsPerCall) {
      throw new WorkflowError(`${hook} received ${count} items ${DASH} over the per-call cap (${this.limits.maxItemsPerCall}); split the work or raise maxItemsPerCall in the engine config`, "ITEM_CAP");
    }
  }

  async parallel(thunks) {
    if (!Array.isArray(thunks)) {
      throw new WorkflowError("parallel() requires an array of zero-argument functions", "INVALID_ARGUMENT");
    }
    this.capItems(thunks.length, "parallel()");
    thunks.forEach((thunk, i) => {
      if (typeof thunk !== "function") throw new WorkflowError(`parallel() item ${i} is not a function`, "INVALID_ARGUMENT");
    });
    return Promise.all(thunks.map((thunk) => settle(async () => thunk())));
  }

  async pipeline(items, stages) {
    if (!Array.isArray(items)) throw new WorkflowError("pipeline() requires an items array", "INVALID_ARGUMENT");
    this.capItems(items.length, "pipeline()");
    if (stages.length === 0) throw new WorkflowError("pipeline() requires at least one stage function", "INVALID_ARGUMENT");
    stages.forEach((stage, i) => {
      if (typeof stage !== "function") throw new WorkflowError(`pipeline() stage ${i} is not a function`, "INVALID_ARGUMENT");
    });
    return Promise.all(items.map((item, index) => settle(async () => {
      let value = item;
      for (const stage of stages) value = await stage(value, item, index);
      return value;
    })));
  }

  phase(title) {
    if (typeof title !== "string" || title.length === 0) {
      throw new WorkflowError("phase() requires a non-empty title string", "INVALID_ARGUMENT");
    }
    this.phaseTitle = title;
    this.progress({ type: "phase", title });
  }

  log(message) {
    if (typeof message !== "string") throw new WorkflowError("log() requires a message string", "INVALID_ARGUMENT");
    this.progress({ type: "log", message });
  }

  progress(event) {
    send({ op: "progress", event });
  }
}

/** One combinator item: an ordinary failure is null, a misused hook ends the script. */
async function settle(work) {
  try {
    return await work();
  } catch (error) {
    if (error instanceof WorkflowError) throw error;
    return null;
  }
}

async function execute(init) {
  let script;
  try {
    // The same wrapper as native's engine, so the script's frames read line:column of
    // the body the model wrote (the wrapper's first line is line 0).
    script = new vm.Script(`(async () => {\n${init.body}\n})()`, {
      filename: `workflow:${init.meta.name}`,
      lineOffset: -1,
    });
  } catch (error) {
    send({ op: "parse-error", message: `workflow script does not parse: ${String(error)}` });
    return;
  }
  send({ op: "parsed" }); // a background call answers once the body compiles
  const run = new Run(init.limits);
  const context = vm.createContext({}, { name: `workflow:${init.meta.name}` });
  for (const [key, value] of Object.entries(run.hooks(init.args))) {
    context[key] = typeof value === "function" ? Object.freeze(value) : value;
  }
  let result;
  try {
    const raw = await script.runInContext(context, { timeout: init.limits.syncTimeoutMs });
    let value = null;
    if (raw !== undefined) {
      try {
        value = toJson(raw, "workflow result");
      } catch (error) {
        if (!(error instanceof NotJson)) throw error;
        throw new WorkflowError(`the workflow's return value is not plain JSON data ${DASH} ${error.message}. Return only JSON-serializable objects/arrays/scalars.`, "RESULT_UNSERIALIZABLE");
      }
    }
    // Rendered here, by V8, so the text the model reads is JSON.stringify's own.
    result = { value, rendered: JSON.stringify(value, null, 2), stopReason: "completed", agentsStarted: run.started };
  } catch (error) {
    const error_ = ownFrames(describe(error), init.meta.name);
    result = { value: null, stopReason: "error", error: error_, agentsStarted: run.started };
  }
  send({ op: "result", result });
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
let begun = false;
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.op === "run" && !begun) {
    begun = true;
    execute(message).then(() => process.exit(0), (error) => {
      process.stderr.write(`${describe(error)}\n`);
      process.exit(1);
    });
  } else {
    deliver(message);
  }
});
// The host closing stdin is a cancellation: nothing more can be answered.
lines.on("close", () => process.exit(0));
