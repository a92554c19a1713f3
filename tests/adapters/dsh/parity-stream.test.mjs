// Tests of the DSH plugin parity/targets/adapters/dsh/parity-stream.mjs against the harness's
// real fake LLM: `parity fake-llm --json FIXTURE` runs as a subprocess and reports every
// request it receives (and every request a client aborts) as one JSON line.
//
//   node --test tests/adapters/dsh/
//
// PARITY_BIN overrides the fake's command (default: .venv/bin/parity of this checkout).

import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'

import {
  IMAGE_OMITTED_TEXT,
  NO_RETRY,
  PROTOCOL_CODE,
  apply,
  canonicalRequest,
  dshContent,
  fetchCatalog,
  makeAdapter,
  streamChunks,
  toolDefinition,
} from '../../../parity/targets/adapters/dsh/parity-stream.mjs'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url))
const PARITY_BIN = process.env.PARITY_BIN ?? join(ROOT, '.venv', 'bin', 'parity')
const WAIT_MS = 3000
/** Per-test options: a test that waits on the fake in vain fails in seconds, never hangs. */
const T = { timeout: 5000 }

/** Every child started here, killed at exit even if a test forgot (or crashed before) `stop`. */
const children = new Set()
function killChildren() {
  for (const child of children) child.kill('SIGKILL')
}
process.on('exit', killChildren)
// The test runner ends a file that overruns --test-timeout with SIGTERM, which skips
// `after` hooks and the `exit` event: take the fakes down with us.
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    killChildren()
    process.kill(process.pid, signal)
  })
}

/** `parity ARGS...` as a child of this process (tracked in `children`). */
function parity(args) {
  const child = spawn(PARITY_BIN, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  child.once('exit', () => children.delete(child))
  return child
}

function delay(ms) {
  return new Promise(resolve => setTimeout(resolve, ms))
}

/** One `parity fake-llm --json` process serving a fixture; `events` are its JSON lines. */
class Fake {
  static async start(fixture) {
    const fake = new Fake(parity(['fake-llm', '--json', join(FIXTURES, fixture)]))
    const ready = await fake.waitFor(event => event.event === 'ready', `ready of ${fixture}`, 15_000)
    fake.base = ready.base
    return fake
  }

  constructor(child) {
    this.child = child
    this.events = []
    this.stderr = ''
    this.exited = false
    this.waiters = new Set()
    this.syncs = 0
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', text => { this.stderr += text })
    const ended = () => {
      this.exited = true
      for (const waiter of this.waiters) waiter.check()
    }
    child.once('exit', ended)
    child.once('error', error => {
      this.stderr += `cannot run ${PARITY_BIN} (set PARITY_BIN): ${error.message}\n`
      ended()
    })
    createInterface({ input: child.stdout }).on('line', line => {
      let event
      try {
        event = JSON.parse(line)
      } catch {
        event = { event: 'unparsed', line }
      }
      this.events.push(event)
      for (const waiter of this.waiters) waiter.check()
    })
  }

  requests(path) {
    return this.events.filter(event => event.event === 'request' && (path === undefined || event.path === path))
  }

  /** The first event matching `predicate`, waiting for it up to `ms`. */
  waitFor(predicate, what, ms = WAIT_MS) {
    return new Promise((resolve, reject) => {
      const waiter = {
        check: () => {
          const found = this.events.find(predicate)
          if (found !== undefined || this.exited) {
            clearTimeout(timer)
            this.waiters.delete(waiter)
            if (found !== undefined) resolve(found)
            else reject(new Error(`fake exited before ${what}; stderr:\n${this.stderr}`))
          }
        },
      }
      const timer = setTimeout(() => {
        this.waiters.delete(waiter)
        reject(new Error(`no ${what} within ${ms} ms; events: ${JSON.stringify(this.events)}\nstderr:\n${this.stderr}`))
      }, ms)
      this.waiters.add(waiter)
      waiter.check()
    })
  }

  /**
   * A barrier: every request (and abort) the fake saw before this call has been read
   * from its stdout once it returns. The fake reports events in order, so a marker
   * request reported after them proves the earlier ones are in `events` already.
   */
  async sync() {
    const path = `/__sync/${++this.syncs}`
    await (await fetch(`${this.base}${path}`)).arrayBuffer()
    await this.waitFor(event => event.event === 'request' && event.path === path, `sync ${path}`)
  }

  async stop() {
    const child = this.child
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    const timeout = delay(WAIT_MS).then(() => 'timeout')
    if ((await Promise.race([exited, timeout])) === 'timeout') {
      child.kill('SIGKILL')
      await exited
    }
  }
}

async function collect(iterable) {
  const out = []
  for await (const item of iterable) out.push(item)
  return out
}

/** `text: hello there, deltas: 5, usage: {input: 5, output: 11}` as parity-stream chunks. */
const HELLO_CHUNKS = [
  { type: 'block-start', index: 0, blockType: 'text' },
  { type: 'text-delta', index: 0, text: 'hello' },
  { type: 'text-delta', index: 0, text: ' ther' },
  { type: 'text-delta', index: 0, text: 'e' },
  { type: 'block-end', index: 0, block: { type: 'text', text: 'hello there' } },
  { type: 'usage', usage: { inputTokens: 5, outputTokens: 11 } },
  { type: 'finish', reason: { kind: 'stop' } },
]

const USER_HELLO = { role: 'user', content: [{ type: 'text', text: 'say hello' }] }

test('the fixtures are valid scenarios (parity validate)', { timeout: 15_000 }, async () => {
  const files = ['stream-text.yaml', 'stream-hang.yaml', 'exhausted.yaml', 'catalog-tools.yaml']
  const child = parity(['validate', ...files.map(file => join(FIXTURES, file))])
  let output = ''
  child.stdout.on('data', text => { output += text })
  child.stderr.on('data', text => { output += text })
  const [code] = await once(child, 'exit')
  assert.equal(code, 0, output)
})

describe('streaming a scripted answer (stream-text.yaml)', () => {
  let fake
  before(async () => { fake = await Fake.start('stream-text.yaml') })
  after(async () => { await fake?.stop() })

  test('the fake sends the scripted entry as these NDJSON chunks', T, async () => {
    // Read raw, without the plugin: this is what the plugin must pass through unchanged.
    const response = await fetch(`${fake.base}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'mock', model: 'mock', messages: [USER_HELLO] }),
    })
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('content-type'), 'application/x-ndjson')
    const lines = (await response.text()).split('\n').filter(line => line !== '')
    assert.deepEqual(lines.map(line => JSON.parse(line)), HELLO_CHUNKS)
  })

  test('streamChunks yields those chunks and POSTs the canonical request', T, async () => {
    const controller = new AbortController()
    const options = {
      provider: 'mock',
      model: 'mock',
      reasoningEffort: 'high',
      system: 'be brief',
      messages: [
        USER_HELLO,
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'think' },
            { type: 'text', text: 'calling' },
            { type: 'tool-call', id: 'call-1', name: 'echo', arguments: '{"a":1}' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool-result', toolCallId: 'call-1', isError: true, content: [{ type: 'text', text: 'boom' }] },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'image', attachment: { attachmentId: 'att-1', mediaType: 'image/png', bytes: 3, width: 1, height: 1 } },
            { type: 'text', text: 'look' },
          ],
        },
      ],
      tools: [
        { name: 'echo', description: 'Echo.', parameters: { type: 'object', properties: {} }, extra: 'not sent' },
      ],
      temperature: 0.5, // not part of the canonical request
      sessionId: 'ses-streamChunks',
      purpose: 'session-title',
      signal: controller.signal,
    }
    assert.deepEqual(await collect(streamChunks(fake.base, options)), HELLO_CHUNKS)
    const request = await fake.waitFor(
      event => event.event === 'request' && event.body?.sessionId === 'ses-streamChunks',
      'the streamChunks /stream request',
    )
    assert.equal(request.method, 'POST')
    assert.equal(request.path, '/stream')
    assert.deepEqual(request.body, {
      provider: 'mock',
      model: 'mock',
      reasoningEffort: 'high',
      system: 'be brief',
      messages: [
        USER_HELLO,
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'think' },
            { type: 'text', text: 'calling' },
            { type: 'tool-call', id: 'call-1', name: 'echo', arguments: '{"a":1}' },
          ],
        },
        { role: 'tool', toolCallId: 'call-1', isError: true, content: [{ type: 'text', text: 'boom' }] },
        { role: 'user', content: [{ type: 'image', mimeType: 'image/png' }, { type: 'text', text: 'look' }] },
      ],
      tools: [{ name: 'echo', description: 'Echo.', parameters: { type: 'object', properties: {} } }],
      sessionId: 'ses-streamChunks',
      purpose: 'session-title',
    })
  })

  test('the makeAdapter adapter streams them too; absent optionals stay absent', T, async () => {
    const { providers } = await fetchCatalog(fake.base)
    const adapter = makeAdapter(fake.base, providers)
    await fake.sync() // every earlier request is counted in `before`
    const before = fake.requests('/stream').length
    const chunks = await collect(adapter.stream({ provider: 'mock', model: 'mock', messages: [USER_HELLO] }))
    assert.deepEqual(chunks, HELLO_CHUNKS)
    await fake.sync()
    const streams = fake.requests('/stream')
    assert.equal(streams.length, before + 1)
    assert.deepEqual(streams.at(-1).body, { provider: 'mock', model: 'mock', messages: [USER_HELLO] })
  })

  test('the adapter describes the catalog (default mock provider)', T, async () => {
    const { providers, tools } = await fetchCatalog(fake.base)
    assert.deepEqual(tools, [])
    const adapter = makeAdapter(fake.base, providers)
    assert.deepEqual(adapter.providerInfo('mock'), { id: 'mock', name: 'Mock' })
    assert.throws(() => adapter.providerInfo('nope'), /unknown provider "nope"/)
    assert.equal(adapter.providerRetryPolicy(), NO_RETRY)
    assert.equal(NO_RETRY.maxRetries, 0)
    assert.deepEqual(await adapter.listModels('mock'), [{
      provider: 'mock',
      id: 'mock',
      name: 'Mock Reasoner',
      description: 'Mock model with selectable reasoning.',
      inputModalities: ['text'],
    }])
    assert.deepEqual(await adapter.resolveModel('mock', 'mock'), {
      provider: 'mock',
      id: 'mock',
      name: 'Mock Reasoner',
      description: 'Mock model with selectable reasoning.',
      inputModalities: ['text'],
      context: { contextWindow: 1024 },
      reasoning: { efforts: [{ id: 'low', name: 'Low' }, { id: 'high', name: 'High' }], defaultEffort: 'high' },
    })
    assert.deepEqual(await adapter.resolveModel('mock', 'other'), { provider: 'mock', id: 'other', name: 'other', inputModalities: ['text'] })
  })

  test('apply with no `ask` tool hooks no approval (base from PARITY_STREAM_BASE_URL)', T, async () => {
    const { ctx, seen } = fakeCtx()
    const saved = process.env.PARITY_STREAM_BASE_URL
    process.env.PARITY_STREAM_BASE_URL = fake.base
    try {
      await apply(ctx, {})
    } finally {
      if (saved === undefined) delete process.env.PARITY_STREAM_BASE_URL
      else process.env.PARITY_STREAM_BASE_URL = saved
    }
    assert.deepEqual(seen.adapters.map(entry => entry.ids), [['mock']])
    assert.deepEqual(seen.tools, [])
    assert.deepEqual(seen.hooks, [])
  })
})

describe('aborting a hanging stream (stream-hang.yaml)', () => {
  let fake
  before(async () => { fake = await Fake.start('stream-hang.yaml') })
  after(async () => { await fake?.stop() })

  test('aborting the signal mid-stream closes the request; the fake records the abort', T, async () => {
    const controller = new AbortController()
    const stream = streamChunks(fake.base, { provider: 'mock', model: 'mock', messages: [USER_HELLO], signal: controller.signal })
    assert.deepEqual((await stream.next()).value, { type: 'block-start', index: 0, blockType: 'text' })
    assert.deepEqual((await stream.next()).value, { type: 'text-delta', index: 0, text: 'partial' })
    const request = await fake.waitFor(event => event.event === 'request' && event.path === '/stream', '/stream')
    await fake.sync()
    assert.deepEqual(fake.events.filter(event => event.event === 'aborted'), [], 'held open until the abort')

    controller.abort()
    await assert.rejects(stream.next(), { name: 'AbortError' })
    const aborted = await fake.waitFor(event => event.event === 'aborted', 'the aborted event')
    assert.deepEqual(aborted, { event: 'aborted', seq: request.seq })
  })
})

describe('a refused model request (exhausted.yaml)', () => {
  let fake
  before(async () => { fake = await Fake.start('exhausted.yaml') })
  after(async () => { await fake?.stop() })

  test('HTTP 409 becomes one PARITY_PROTOCOL finish with the fake\'s text; no retry', T, async () => {
    // The fake's answer, read raw: 409 with `error` naming the problem.
    const raw = await fetch(`${fake.base}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'mock', model: 'mock', messages: [] }),
    })
    assert.equal(raw.status, 409)
    assert.equal((await raw.json()).error, 'script exhausted')

    await fake.sync() // the raw request above is counted in `before`
    const before = fake.requests('/stream').length
    const adapter = makeAdapter(fake.base, [{ id: 'mock', name: 'Mock', models: [] }])
    const chunks = await collect(adapter.stream({ provider: 'mock', model: 'mock', messages: [USER_HELLO] }))
    assert.deepEqual(chunks, [{
      type: 'finish',
      reason: { kind: 'error', failure: { code: PROTOCOL_CODE, message: 'script exhausted' } },
    }])
    assert.equal(PROTOCOL_CODE, 'PARITY_PROTOCOL')
    await fake.sync()
    assert.equal(fake.requests('/stream').length, before + 1, 'exactly one /stream request: no retry')
    assert.equal(adapter.providerRetryPolicy().maxRetries, 0)
  })
})

describe('the catalog protocol version', () => {
  // The real fake cannot serve another protocol: parity_stream.catalog() always sets
  // `protocol: parity-stream/1` over the scenario's catalog, and the scenario schema
  // pins `catalog.protocol` to that const. So a tiny in-test node:http server stands in
  // for a foreign harness, for this case only.
  let server
  let base
  let catalog
  before(async () => {
    server = createServer((request, response) => {
      response.writeHead(request.url === '/catalog' ? 200 : 404, { 'content-type': 'application/json' })
      response.end(JSON.stringify(catalog))
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    base = `http://127.0.0.1:${server.address().port}`
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  })

  const providers = [{ id: 'mock', name: 'Mock', models: [] }]

  test('another protocol is refused, naming both versions', T, async () => {
    catalog = { protocol: 'parity-stream/2', providers }
    await assert.rejects(fetchCatalog(base), error => {
      assert.match(error.message, /"parity-stream\/2"/)
      assert.match(error.message, /only parity-stream\/1\b/)
      return true
    })
    catalog = { protocol: 'parity-stream/10', providers }
    await assert.rejects(fetchCatalog(base), /"parity-stream\/10".*only parity-stream\/1/)
    catalog = { providers }
    await assert.rejects(fetchCatalog(base), /speaks undefined; this plugin implements only parity-stream\/1/)
  })

  test('with the catalog in its row config, apply registers before the served catalog arrives', T, async () => {
    catalog = { protocol: 'parity-stream/1', providers }
    const { ctx, seen } = fakeCtx()
    const applied = apply(ctx, { baseUrl: base, catalog: { providers } })
    // 0.2.x answers session/new while plugins activate: the route exists before any await.
    assert.deepEqual(seen.adapters.map(entry => entry.ids), [providers.map(p => p.id)])
    await applied
    const model = await seen.adapters[0].adapter.resolveModel(providers[0].id, 'x')
    assert.equal(model.id, 'x')
  })

  test('apply refuses a foreign protocol before registering anything', T, async () => {
    catalog = { protocol: 'parity-stream/2', providers }
    const { ctx, seen } = fakeCtx()
    await assert.rejects(apply(ctx, { baseUrl: base }), /parity-stream\/2/)
    assert.deepEqual(seen, { adapters: [], tools: [], hooks: [] })
  })

  test('the same major version with a minor is accepted', T, async () => {
    catalog = { protocol: 'parity-stream/1.3', providers }
    assert.deepEqual(await fetchCatalog(base), { providers, tools: [] })
  })
})

/** The `ctx` DSH hands a plugin, reduced to what `apply` uses; `seen` records each call. */
function fakeCtx() {
  const seen = { adapters: [], tools: [], hooks: [] }
  const ctx = {
    llm: { registerAdapter: (ids, adapter) => { seen.adapters.push({ ids, adapter }) } },
    tools: { register: definition => { seen.tools.push(definition) } },
    on: (name, handler) => { seen.hooks.push({ name, handler }) },
  }
  return { ctx, seen }
}

describe('fixture tools and apply (catalog-tools.yaml)', () => {
  let fake
  let specs
  before(async () => {
    fake = await Fake.start('catalog-tools.yaml')
    specs = new Map((await fetchCatalog(fake.base)).tools.map(spec => [spec.name, spec]))
  })
  after(async () => { await fake?.stop() })

  test('execute POSTs /tools/call and returns the scripted content', T, async () => {
    const tool = toolDefinition(fake.base, specs.get('lookup'))
    assert.equal(tool.name, 'lookup')
    assert.equal(tool.description, 'Look something up.')
    assert.deepEqual(tool.parameters, { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] })
    const value = await tool.execute({ key: 'k' }, { callId: 'call-7', signal: new AbortController().signal })
    const content = [{ type: 'text', text: 'found it' }, { type: 'text', text: 'second part' }]
    assert.deepEqual(value, { content })
    assert.deepEqual(tool.output.render({ key: 'k' }, value), content)
    assert.equal(tool.finalizeContent({ callId: 'call-7' }, { isError: false, value, content }), undefined)
    const request = await fake.waitFor(event => event.event === 'request' && event.body?.callId === 'call-7', 'the call-7 /tools/call')
    assert.equal(request.method, 'POST')
    assert.equal(request.path, '/tools/call')
    assert.deepEqual(request.body, { name: 'lookup', callId: 'call-7', arguments: { key: 'k' } })
  })

  test('an isError result makes execute throw; finalizeContent returns the fake\'s content', T, async () => {
    const tool = toolDefinition(fake.base, specs.get('broken'))
    await assert.rejects(
      tool.execute({}, { callId: 'call-8', signal: new AbortController().signal }),
      { message: 'lookup failed: no such key' },
    )
    const dshResult = {
      isError: true,
      error: { message: 'lookup failed: no such key', code: 'TOOL_ERROR' },
      content: [{ type: 'text', text: 'Error: lookup failed: no such key' }],
    }
    assert.deepEqual(
      tool.finalizeContent({ callId: 'call-8' }, dshResult),
      [{ type: 'text', text: 'lookup failed: no such key' }],
    )
    assert.equal(tool.finalizeContent({ callId: 'call-8' }, dshResult), undefined, 'used once')
    const request = await fake.waitFor(event => event.event === 'request' && event.body?.callId === 'call-8', 'the call-8 /tools/call')
    assert.deepEqual(request.body, { name: 'broken', callId: 'call-8', arguments: {} })
  })

  test('a tool the fake does not know fails with the fake\'s text', T, async () => {
    const tool = toolDefinition(fake.base, { name: 'nope' })
    assert.equal(tool.description, '')
    assert.deepEqual(tool.parameters, { type: 'object', properties: {} })
    await assert.rejects(
      tool.execute(undefined, { callId: 'call-9', signal: new AbortController().signal }),
      { message: 'parity-stream: /tools/call failed: unknown tool: nope' },
    )
  })

  test('aborting a hanging tool call closes its request; the fake records the abort', T, async () => {
    const tool = toolDefinition(fake.base, specs.get('wait_forever'))
    const controller = new AbortController()
    const pending = tool.execute({}, { callId: 'call-10', signal: controller.signal })
    const request = await fake.waitFor(event => event.event === 'request' && event.body?.callId === 'call-10', 'the call-10 /tools/call')
    controller.abort()
    await assert.rejects(pending, { name: 'AbortError' })
    const aborted = await fake.waitFor(event => event.event === 'aborted' && event.seq === request.seq, 'the aborted event')
    assert.deepEqual(aborted, { event: 'aborted', seq: request.seq })
  })

  test('apply registers every provider route and tool, and asks only for `approval: ask`', T, async () => {
    const { ctx, seen } = fakeCtx()
    await apply(ctx, { baseUrl: `${fake.base}/` }) // a trailing slash is dropped
    assert.equal(seen.adapters.length, 1)
    const [{ ids, adapter }] = seen.adapters
    assert.deepEqual(ids, ['alpha', 'beta'])
    assert.deepEqual(adapter.providerInfo('beta'), { id: 'beta', name: 'Beta' })
    assert.deepEqual(await adapter.resolveModel('alpha', 'alpha-1'), {
      provider: 'alpha',
      id: 'alpha-1',
      name: 'Alpha One',
      inputModalities: ['text'],
      context: { contextWindow: 2048 },
    })
    assert.deepEqual(seen.tools.map(tool => tool.name), ['lookup', 'broken', 'write_note', 'wait_forever'])

    // The registered tools reach the fake at the configured base.
    const writeNote = seen.tools.find(tool => tool.name === 'write_note')
    const value = await writeNote.execute({}, { callId: 'call-11', signal: new AbortController().signal })
    assert.deepEqual(value, { content: [{ type: 'text', text: 'note written' }] })
    const request = await fake.waitFor(event => event.event === 'request' && event.body?.callId === 'call-11', 'the call-11 /tools/call')
    assert.equal(request.path, '/tools/call')

    assert.deepEqual(seen.hooks.map(hook => hook.name), ['tools/pre-execute'])
    const [{ handler }] = seen.hooks
    let nextCalls = 0
    const next = () => {
      nextCalls += 1
      return Promise.resolve({ kind: 'allow' })
    }
    const asked = await handler({ name: 'write_note', callId: 'c1' }, next)
    assert.equal(asked.kind, 'ask')
    assert.equal(typeof asked.reason, 'string')
    assert.equal(nextCalls, 0, 'an ask tool does not continue the waterfall')
    for (const name of ['lookup', 'broken', 'wait_forever', 'read']) {
      assert.deepEqual(await handler({ name, callId: 'c2' }, next), { kind: 'allow' }, name)
    }
    assert.equal(nextCalls, 4)
  })
})

describe('fixture tool results as DSH blocks (dshContent)', () => {
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=='
  const result = [
    { type: 'text', text: 'caption' },
    { type: 'image', mimeType: 'image/png', data: PNG },
    { type: 'text', text: 'end' },
  ]
  /** A plugin context whose route takes `modalities` and whose store saves into `saved`. */
  function imageCtx(modalities, { store = true, fail = false } = {}) {
    const saved = []
    const services = {
      llm: { resolveModelInfo: async (provider, model) => ({ provider, id: model, inputModalities: modalities }) },
      attachments: store
        ? {
            saveImages: async inputs => {
              if (fail) throw new Error('too large')
              saved.push(...inputs)
              return inputs.map((input, n) => ({ attachmentId: `att-${n}`, mediaType: input.mediaType, bytes: input.data.length, width: 1, height: 1 }))
            },
          }
        : undefined,
    }
    const ctx = { get: name => services[name] }
    const exec = { signal: new AbortController().signal, agent: { options: { provider: 'mock', model: 'mock' } } }
    return { ctx, exec, saved }
  }

  test('a text-only route gets text in the image\'s place, never its JSON or base64', async () => {
    const { ctx, exec, saved } = imageCtx(['text'])
    const out = await dshContent(result, ctx, exec)
    assert.deepEqual(out, [
      { type: 'text', text: 'caption' },
      { type: 'text', text: IMAGE_OMITTED_TEXT },
      { type: 'text', text: 'end' },
    ])
    assert.deepEqual(saved, [])
    assert.deepEqual(await dshContent(result), out, 'no context: the same')
  })

  test('an image route with a store gets DSH\'s own image block, the bytes stored', async () => {
    const { ctx, exec, saved } = imageCtx(['text', 'image'])
    const out = await dshContent(result, ctx, exec)
    assert.deepEqual(out[1], {
      type: 'image',
      attachment: { attachmentId: 'att-0', mediaType: 'image/png', bytes: 70, width: 1, height: 1 },
    })
    assert.deepEqual(out[0], { type: 'text', text: 'caption' })
    assert.equal(saved.length, 1)
    assert.equal(saved[0].mediaType, 'image/png')
    assert.equal(Buffer.from(saved[0].data).toString('base64'), PNG)
  })

  test('without a store, with bad data or a refused batch: a text saying why', async () => {
    const noStore = imageCtx(['image'], { store: false })
    assert.deepEqual((await dshContent(result, noStore.ctx, noStore.exec))[1], { type: 'text', text: '[image unavailable: no attachment store is mounted]' })
    const bad = imageCtx(['image'])
    const broken = [{ type: 'image', mimeType: 'image/png', data: 'not base64!' }]
    assert.deepEqual(await dshContent(broken, bad.ctx, bad.exec), [{ type: 'text', text: '[image unavailable: the data is not base64]' }])
    const svg = [{ type: 'image', mimeType: 'image/svg+xml', data: PNG }]
    assert.deepEqual(await dshContent(svg, bad.ctx, bad.exec), [{ type: 'text', text: '[image unavailable: image/svg+xml is not PNG, JPEG, WebP or GIF]' }])
    const refused = imageCtx(['image'], { fail: true })
    assert.deepEqual((await dshContent(result, refused.ctx, refused.exec))[1], { type: 'text', text: '[image unavailable: the attachment store refused it: too large]' })
  })

  test('blocks DSH tool results cannot carry are named in place', async () => {
    const out = await dshContent([
      { type: 'audio', mimeType: 'audio/wav', data: 'AAAA' },
      { type: 'resource', resource: { uri: 'file:///x', text: 'x' } },
      { type: 'resource_link', name: 'notes.txt', uri: 'file:///tmp/notes.txt' },
      { type: 'text' },
    ])
    assert.deepEqual(out, [
      { type: 'text', text: '[audio block omitted: DSH tool results carry only text and images]' },
      { type: 'text', text: '[resource block omitted: DSH tool results carry only text and images]' },
      { type: 'text', text: '[resource link omitted: notes.txt file:///tmp/notes.txt]' },
      { type: 'text', text: '[text block omitted: DSH tool results carry only text and images]' },
    ])
  })
})

describe('the canonical request from either DSH version', () => {
  const text = t => ({ type: 'text', text: t })
  const call = { type: 'tool-call', id: 'c1', name: 'echo', arguments: '{}' }
  const expected = {
    provider: 'p',
    model: 'm',
    system: 'be brief',
    messages: [
      { role: 'user', content: [text('go')] },
      { role: 'assistant', content: [call] },
      { role: 'tool', toolCallId: 'c1', isError: true, content: [text('no')] },
    ],
  }

  test('rc.8: a system field, a tool result as a user message block', () => {
    const body = canonicalRequest({
      provider: 'p',
      model: 'm',
      system: 'be brief',
      messages: [
        { role: 'user', content: [text('go')] },
        { role: 'assistant', content: [call] },
        { role: 'user', content: [{ type: 'tool-result', toolCallId: 'c1', isError: true, content: [text('no')] }] },
      ],
    })
    assert.deepEqual(body, expected)
  })

  test('0.2.x: a leading system message, a tool result as a tool message', () => {
    const body = canonicalRequest({
      provider: 'p',
      model: 'm',
      messages: [
        { role: 'system', content: [text('be brief')] },
        { role: 'user', content: [text('go')] },
        { role: 'assistant', content: [call] },
        { role: 'tool', toolCallId: 'c1', isError: true, content: [text('no')] },
      ],
    })
    assert.deepEqual(body, expected)
  })

  test('a system message later in the conversation stays where it is', () => {
    const body = canonicalRequest({
      provider: 'p',
      model: 'm',
      messages: [{ role: 'user', content: [text('go')] }, { role: 'system', content: [text('now')] }],
    })
    assert.equal(body.system, undefined)
    assert.deepEqual(body.messages[1], { role: 'system', content: [text('now')] })
  })
})
