/**
 * acp-parity's parity-stream/1 plugin for DeepSeek Harness (DSH).
 *
 * Mounted into a DSH composition by the harness's native launch kit (parity/targets/dsh.py),
 * it makes a real DSH agent talk to the harness's scripted fake LLM over the fixed
 * wire of docs/parity-stream.md:
 *
 *   - GET  {base}/catalog     once at start: providers, models and fixture tools;
 *   - POST {base}/stream      per model call: the canonical request in, NDJSON chunks out;
 *   - POST {base}/tools/call  per fixture tool call.
 *
 * It registers one LLM adapter for every provider route of the catalog, and every
 * catalog tool under exactly its name. A tool with `approval: "ask"` asks through
 * DSH's own approval chain (the `tools/pre-execute` waterfall answering `ask`), so an
 * ACP client sees a real `session/request_permission` before `/tools/call` is made.
 *
 * The module has no runtime imports: DSH hands it `ctx`, and every DSH value it
 * produces (chunks, tool definitions, the retry policy) is plain data, so the plugin
 * loads from any path into any DSH version whose plugin seams match.
 *
 * The base URL comes from the row's `config.baseUrl`, else PARITY_STREAM_BASE_URL.
 */

export const name = 'parity-stream'
export const inject = ['llm', 'tools']

export const PROTOCOL = 'parity-stream/1'
export const PROTOCOL_CODE = 'PARITY_PROTOCOL'

/** Why the fake did not answer 200: its `error` text, else the status and body. */
async function errorText(response) {
  const body = await response.text().catch(() => '')
  try {
    const parsed = JSON.parse(body)
    if (parsed !== null && typeof parsed.error === 'string') return parsed.error
  } catch {
    // not JSON: describe the raw answer below
  }
  const text = body.trim().slice(0, 500)
  return `HTTP ${response.status}${text === '' ? '' : `: ${text}`}`
}

/**
 * Fetch and check the catalog. Any other protocol major version is refused with a
 * message naming both versions, so a mismatched harness fails at start, not mid-turn.
 */
export async function fetchCatalog(base) {
  let response
  try {
    response = await fetch(`${base}/catalog`)
  } catch (error) {
    throw new Error(`parity-stream: catalog unreachable at ${base}: ${error?.cause?.message ?? error}`)
  }
  if (response.status !== 200) {
    throw new Error(`parity-stream: catalog failed: ${await errorText(response)}`)
  }
  let catalog
  try {
    catalog = await response.json()
  } catch (error) {
    throw new Error(`parity-stream: the catalog at ${base} is not JSON: ${error.message}`)
  }
  const protocol = catalog?.protocol
  const major = typeof protocol === 'string' ? protocol.split('.')[0] : undefined
  if (major !== PROTOCOL) {
    throw new Error(
      `parity-stream: the server at ${base} speaks ${JSON.stringify(protocol)}; ` +
      `this plugin implements only ${PROTOCOL}`,
    )
  }
  if (!Array.isArray(catalog.providers) || catalog.providers.length === 0) {
    throw new Error('parity-stream: the catalog declares no providers')
  }
  return { providers: catalog.providers, tools: Array.isArray(catalog.tools) ? catalog.tools : [] }
}

// -- the canonical request -------------------------------------------------------------

/** A DSH content block in the canonical form; `undefined` drops it. */
function canonicalBlock(block) {
  switch (block.type) {
    case 'text':
    case 'reasoning':
      return { type: block.type, text: block.text }
    case 'tool-call':
      return { type: 'tool-call', id: block.id, name: block.name, arguments: block.arguments }
    case 'image': {
      // Image bytes live in DSH's attachment store; the spec lets a request omit them.
      const attachment = block.attachment ?? {}
      const mimeType = attachment.mediaType ?? attachment.mimeType ?? block.mimeType
      return mimeType === undefined ? { type: 'image' } : { type: 'image', mimeType }
    }
    default:
      // Any other block type is passed through by name so a model view still shows it.
      return { type: String(block.type) }
  }
}

/**
 * DSH's messages -> canonical messages. rc.8 carries a tool result as a user message
 * holding one `tool-result` block, 0.2.x as a `tool` message; the canonical form is a
 * `tool` message per result either way.
 */
export function canonicalMessages(messages) {
  const out = []
  for (const message of messages) {
    if (message.role === 'tool') {
      // 0.2.x: a tool result is its own `tool` message (rc.8: a user message's block).
      out.push({
        role: 'tool',
        toolCallId: message.toolCallId,
        isError: message.isError === true,
        content: message.content.map(canonicalBlock).filter(block => block !== undefined),
      })
      continue
    }
    const results = message.content.filter(block => block.type === 'tool-result')
    for (const result of results) {
      out.push({
        role: 'tool',
        toolCallId: result.toolCallId,
        isError: result.isError === true,
        content: result.content.map(canonicalBlock).filter(block => block !== undefined),
      })
    }
    const rest = message.content.filter(block => block.type !== 'tool-result')
    if (rest.length > 0 || results.length === 0) {
      out.push({ role: message.role, content: rest.map(canonicalBlock).filter(b => b !== undefined) })
    }
  }
  return out
}

/** A system message's text: its text blocks joined, as DSH renders it for a provider. */
function systemText(message) {
  if (typeof message.content === 'string') return message.content
  return message.content.filter(block => block.type === 'text').map(block => block.text).join('\n')
}

/** GenerateOptions -> the canonical `/stream` body; absent optionals stay absent. */
export function canonicalRequest(options) {
  const body = { provider: options.provider, model: options.model }
  if (options.reasoningEffort !== undefined) body.reasoningEffort = options.reasoningEffort
  // 0.2.x carries the system prompt as leading `system` messages, rc.8 as `system`; the
  // canonical request has one `system` text either way. A system message after the
  // first other message stays in place, so a mid-conversation update is still seen.
  const messages = [...(options.messages ?? [])]
  const leading = []
  while (messages.length > 0 && messages[0].role === 'system') leading.push(messages.shift())
  const system = options.system ?? (leading.length === 0 ? undefined : leading.map(systemText).join('\n\n'))
  if (options.system !== undefined) messages.unshift(...leading)
  if (system !== undefined) body.system = system
  body.messages = canonicalMessages(messages)
  if (options.tools !== undefined) {
    body.tools = options.tools.map(tool => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
    }))
  }
  if (options.sessionId !== undefined) body.sessionId = String(options.sessionId)
  if (options.purpose !== undefined) body.purpose = options.purpose
  return body
}

// -- the stream ------------------------------------------------------------------------

/** NDJSON lines of a fetch body, as they arrive (a partial last line waits for more). */
async function* ndjsonLines(body) {
  const decoder = new TextDecoder()
  let pending = ''
  for await (const bytes of body) {
    pending += decoder.decode(bytes, { stream: true })
    let newline = pending.indexOf('\n')
    while (newline >= 0) {
      const line = pending.slice(0, newline).trim()
      pending = pending.slice(newline + 1)
      if (line !== '') yield line
      newline = pending.indexOf('\n')
    }
  }
  pending += decoder.decode()
  if (pending.trim() !== '') yield pending.trim()
}

function protocolFailure(message) {
  return { type: 'finish', reason: { kind: 'error', failure: { message, code: PROTOCOL_CODE } } }
}

/**
 * One model call: POST the canonical request and yield the server's chunks unchanged.
 * Aborting `options.signal` aborts the fetch, which closes the connection: that is how
 * the fake learns the turn was cancelled. A non-200 answer is a `PARITY_PROTOCOL`
 * error finish, never retried (see `NO_RETRY`).
 */
export async function* streamChunks(base, options) {
  let response
  try {
    response = await fetch(`${base}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(canonicalRequest(options)),
      signal: options.signal,
    })
  } catch (error) {
    if (options.signal?.aborted) throw error // a cancelled turn: DSH records the abort
    yield transportFailure(base, error)
    return
  }
  if (response.status !== 200) {
    yield protocolFailure(await errorText(response))
    return
  }
  let finished = false
  try {
    for await (const line of ndjsonLines(response.body)) {
      let chunk
      try {
        chunk = JSON.parse(line)
      } catch {
        chunk = undefined
      }
      if (chunk === null || typeof chunk !== 'object' || Array.isArray(chunk) || typeof chunk.type !== 'string') {
        yield protocolFailure(`the server sent a line that is not a stream chunk: ${line.slice(0, 200)}`)
        return
      }
      yield chunk
      if (chunk.type === 'finish') finished = true
    }
  } catch (error) {
    if (options.signal?.aborted) throw error
    yield transportFailure(base, error)
    return
  }
  // DSH requires a terminal finish; a stream cut short is the server's protocol failure.
  if (!finished) yield protocolFailure('the stream ended without a finish chunk')
}

function transportFailure(base, error) {
  const message = `parity-stream: ${base}/stream failed: ${error?.cause?.message ?? error?.message ?? error}`
  return { type: 'finish', reason: { kind: 'error', failure: { message, code: 'TRANSPORT' } } }
}

/**
 * A provider-owned retry policy that never retries: a scripted failure must surface
 * exactly once. Same shape as DSH's resolved policies (plain frozen data).
 */
export const NO_RETRY = Object.freeze({
  mode: 'normal',
  maxRetries: 0,
  retryableCodes: Object.freeze(['TRANSPORT']),
  initialDelayMs: 500,
  maxDelayMs: 10_000,
  jitterRatio: 0.1,
})

/** The catalog model in DSH's model-info shape (context and reasoning when declared). */
function modelInfo(provider, model) {
  const info = {
    provider,
    id: model.id,
    name: model.name ?? model.id,
    ...model.description === undefined ? {} : { description: model.description },
    inputModalities: model.inputModalities ?? ['text'],
  }
  return info
}

function resolvedModel(provider, model) {
  const info = modelInfo(provider, model)
  if (model.contextWindow !== undefined) info.context = { contextWindow: model.contextWindow }
  const reasoning = model.reasoning
  if (reasoning !== undefined && Array.isArray(reasoning.efforts) && reasoning.efforts.length > 0) {
    info.reasoning = {
      efforts: reasoning.efforts.map(effort => ({
        id: effort.id,
        name: effort.name ?? effort.id,
        ...effort.description === undefined ? {} : { description: effort.description },
      })),
      ...reasoning.defaultEffort === undefined ? {} : { defaultEffort: reasoning.defaultEffort },
    }
  }
  return info
}

/** The LLM adapter for the catalog's providers (a plain object with DSH's adapter methods). */
export function makeAdapter(base, providers) {
  const byId = new Map(providers.map(provider => [provider.id, provider]))
  const provider = (id) => {
    const found = byId.get(id)
    if (found === undefined) throw new Error(`parity-stream: unknown provider ${JSON.stringify(id)}`)
    return found
  }
  return {
    providerInfo: id => ({ id, name: provider(id).name ?? id }),
    providerRetryPolicy: () => NO_RETRY,
    listModels: id => Promise.resolve((provider(id).models ?? []).map(model => modelInfo(id, model))),
    resolveModel(id, model) {
      const found = (provider(id).models ?? []).find(candidate => candidate.id === model)
      // DSH requires `id === model`; an uncatalogued model resolves with bare metadata.
      const bare = { provider: id, id: model, name: model, inputModalities: ['text'] }
      return Promise.resolve(found === undefined ? bare : resolvedModel(id, found))
    },
    // 0.2.x's base adapter class answers these two; the plugin has no runtime imports
    // to extend it, so it restates the base's defaults: no image pricing, images as given.
    imageRequestPricing: () => undefined,
    imageRequestTarget: (_id, _model, image) => ({ width: image.width, height: image.height, maxBytes: image.bytes }),
    // 0.2.x's adapter seam: one call resolves its model and streams through the same
    // registration (rc.8 calls `resolveModel` and `stream` directly).
    async prepareCall(id, model, _signal) {
      return { model: await this.resolveModel(id, model), stream: options => streamChunks(base, options) }
    },
    stream: options => streamChunks(base, options),
  }
}

// -- fixture tools ---------------------------------------------------------------------

// A fixture tool's result blocks become DSH's own blocks, one for one and in order, the
// way DSH's own tool bridges admit them: text as a text block; an image as an image
// block whose bytes live in DSH's attachment store, but only when the route's model
// declares image input and a store is mounted (a DSH adapter refuses an image for a
// text-only model); otherwise, and for every block DSH's tool results cannot carry
// (audio, resources, links, unknown types), a text block saying what was left out, at
// the block's place. Never the block's JSON: the model must not see base64 as text.

/** What a text-only model gets in place of an image (docs/contract.md §8.2's wording). */
export const IMAGE_OMITTED_TEXT = '[image omitted: model has no image input]'

const IMAGE_MEDIA_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif'])
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** The text standing for a block DSH cannot be given as itself. */
function omitted(block, reason) {
  if (block?.type === 'image') return { type: 'text', text: reason ?? IMAGE_OMITTED_TEXT }
  if (block?.type === 'resource_link' && typeof block.uri === 'string') {
    return { type: 'text', text: `[resource link omitted: ${block.name ?? ''} ${block.uri}]` }
  }
  const kind = typeof block?.type === 'string' ? block.type : 'unknown'
  return { type: 'text', text: `[${kind} block omitted: DSH tool results carry only text and images]` }
}

/** An image block's bytes, or why it cannot be stored (a text reason). */
function imageBytes(block) {
  if (!IMAGE_MEDIA_TYPES.has(block.mimeType)) return `[image unavailable: ${block.mimeType ?? 'no media type'} is not PNG, JPEG, WebP or GIF]`
  if (typeof block.data !== 'string' || !BASE64.test(block.data)) return '[image unavailable: the data is not base64]'
  return { data: Buffer.from(block.data, 'base64'), mediaType: block.mimeType }
}

/** Whether the model the tool call's agent is routed to declares image input. */
async function routeTakesImages(ctx, exec) {
  const llm = ctx?.get?.('llm')
  const routed = exec?.agent?.session?.requestHeader?.()?.config
  const provider = routed?.provider ?? exec?.agent?.options?.provider
  const model = routed?.model ?? exec?.agent?.options?.model
  if (llm?.resolveModelInfo === undefined || provider === undefined || model === undefined) return false
  try {
    const info = await llm.resolveModelInfo(provider, model, exec.signal)
    return Array.isArray(info?.inputModalities) && info.inputModalities.includes('image')
  } catch {
    return false
  }
}

/**
 * Canonical result content -> DSH content blocks (see above). `ctx` is the plugin's
 * context (its `attachments` and `llm` services), `exec` the tool execution; without
 * them every image is a text stand-in.
 */
export async function dshContent(content, ctx, exec) {
  const blocks = Array.isArray(content) ? content : []
  const out = blocks.map(block => (
    block?.type === 'text' && typeof block.text === 'string' ? { type: 'text', text: block.text } : omitted(block)
  ))
  const images = blocks.flatMap((block, index) => (block?.type === 'image' ? [index] : []))
  if (images.length === 0 || !(await routeTakesImages(ctx, exec))) return out
  const attachments = ctx.get('attachments')
  if (attachments?.saveImages === undefined) {
    for (const index of images) out[index] = omitted(blocks[index], '[image unavailable: no attachment store is mounted]')
    return out
  }
  const decoded = images.map(index => imageBytes(blocks[index]))
  const refused = decoded.find(entry => typeof entry === 'string')
  if (refused !== undefined) {
    // DSH stores a result's images as one batch: one bad image withholds them all.
    for (const [n, index] of images.entries()) out[index] = omitted(blocks[index], typeof decoded[n] === 'string' ? decoded[n] : refused)
    return out
  }
  try {
    const refs = await attachments.saveImages(decoded)
    for (const [n, index] of images.entries()) out[index] = { type: 'image', attachment: refs[n] }
  } catch (error) {
    const reason = `[image unavailable: the attachment store refused it: ${error?.message ?? error}]`
    for (const index of images) out[index] = omitted(blocks[index], reason)
  }
  return out
}

/** POST /tools/call; aborting `signal` closes the request (the fake records the abort). */
export async function callTool(base, name, callId, args, signal) {
  const response = await fetch(`${base}/tools/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, callId, arguments: args ?? {} }),
    signal,
  })
  if (response.status !== 200) throw new Error(`parity-stream: /tools/call failed: ${await errorText(response)}`)
  const answer = await response.json()
  return { content: Array.isArray(answer?.content) ? answer.content : [], isError: answer?.isError === true }
}

const RESULT_SCHEMA = Object.freeze({
  type: 'object',
  properties: { content: { type: 'array' } },
  required: ['content'],
})

/**
 * A catalog tool as a DSH tool definition. A result the fake marks `isError` must
 * reach the model as an error with the fake's own content: `execute` throws, and
 * `finalizeContent` puts the fake's content back in place of DSH's `Error: ...` text.
 * `ctx` (the plugin context) lets image results become DSH image blocks (`dshContent`).
 */
export function toolDefinition(base, spec, ctx) {
  const failed = new Map()
  return {
    name: spec.name,
    description: spec.description ?? '',
    parameters: spec.parameters ?? { type: 'object', properties: {} },
    output: { schema: RESULT_SCHEMA, render: (_args, value) => value.content },
    async execute(args, exec) {
      const result = await callTool(base, spec.name, exec.callId, args, exec.signal)
      const content = await dshContent(result.content, ctx, exec)
      if (!result.isError) return { content }
      failed.set(exec.callId, content)
      const text = content.map(block => block.text ?? '').join('\n')
      throw new Error(text === '' ? `${spec.name} failed` : text)
    },
    finalizeContent(exec, result) {
      const content = failed.get(exec.callId)
      failed.delete(exec.callId)
      return result.isError && content !== undefined ? content : undefined
    },
  }
}

/** The base URL this row serves: `config.baseUrl`, else PARITY_STREAM_BASE_URL. */
export function baseUrl(config, env = process.env) {
  const base = config?.baseUrl ?? env.PARITY_STREAM_BASE_URL
  if (typeof base !== 'string' || base === '') {
    throw new Error('parity-stream: no base URL (set PARITY_STREAM_BASE_URL or the row config baseUrl)')
  }
  return base.replace(/\/+$/, '')
}

/**
 * Register the catalog's routes and tools before the first await: 0.2.x serves ACP while
 * plugins still activate, so a `session/new` could otherwise find no adapter for its
 * route. The launch kit passes the run's catalog as the row's `config.catalog` for that;
 * the catalog fetched from the server (the wire's own start, and its protocol check)
 * stays the one every model call and tool uses, and a call waits for it.
 */
export async function apply(ctx, config) {
  const base = baseUrl(config)
  const fetched = fetchCatalog(base)
  const declared = config?.catalog
  if (declared === undefined) return register(ctx, base, await fetched)
  fetched.catch(() => {}) // a failed fetch fails each call below, not the whole process
  register(ctx, base, {
    providers: declared.providers ?? [],
    tools: declared.tools ?? [],
  }, fetched)
  await fetched
}

function register(ctx, base, catalog, fetched) {
  const adapter = makeAdapter(base, catalog.providers)
  if (fetched !== undefined) {
    // Every adapter call reads the served catalog, once it has arrived.
    const live = fetched.then(served => makeAdapter(base, served.providers))
    for (const method of ['listModels', 'resolveModel', 'prepareCall']) {
      adapter[method] = async (...args) => (await live)[method](...args)
    }
    const stream = adapter.stream
    adapter.stream = options => (async function* () {
      await live
      yield* stream(options)
    })()
  }
  ctx.llm.registerAdapter(catalog.providers.map(provider => provider.id), adapter)
  const asking = new Set()
  for (const spec of catalog.tools) {
    ctx.tools.register(toolDefinition(base, spec, ctx))
    if (spec.approval === 'ask') asking.add(spec.name)
  }
  if (asking.size > 0) {
    ctx.on('tools/pre-execute', (exec, next) => (
      asking.has(exec.name)
        ? Promise.resolve({ kind: 'ask', reason: `fixture tool ${exec.name} asks for approval` })
        : next()
    ))
  }
}
