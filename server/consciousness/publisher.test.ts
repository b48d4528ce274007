// The publisher (engine/consciousness/publisher.ts) end to end: `crystal serve` with SVC_NATS_URL
// publishes the consciousness subjects from the live field, valid by the contract, and keeps
// publishing while it dreams.
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { spawn, spawnSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { ContractBus } from '../../engine/bus/contract_bus.js'
import { natsConnection } from '../../engine/bus/nats.node.js'
import { CRYSTAL_BIN } from '../../bench/harness.js'
import { call, startNats, startServer, type RunningNats, type RunningServer } from '../../testing/services.js'

let nats: RunningNats
let nc: NatsConnection
let server: RunningServer
const seen: { subject: string; message: Record<string, unknown>; at: number }[] = []
const warnings: string[] = []

beforeAll(async () => {
  nats = await startNats()
  nc = await connect({ servers: nats.url })
  const bus = new ContractBus(natsConnection(nc), 'listener', (w) => warnings.push(w))
  for (const subject of ['SVC.>', 'QUEEN.>', 'queen.>'])
    bus.subscribe(subject, (message, concrete) => seen.push({ subject: concrete, message, at: Date.now() }))
  await nc.flush()
  // on the CPU backend whatever the adapter: on a GPU a deep dream at this size can end inside one 10 ms
  // period, leaving nothing published during it to check
  server = await startServer(
    ['--size', '256', '--material', 'ideal_resonator'],
    { SVC_NATS_URL: nats.url, SVC_CONSCIOUSNESS_PERIOD_MS: '10', SVC_CRYSTAL_NODE: 'node-x' },
    undefined,
    [CRYSTAL_BIN, '--backend', 'cpu', 'serve'],
  )
})
afterAll(async () => {
  await server?.stop()
  await nc?.close()
  await nats?.stop()
})

describe('the consciousness publisher', () => {
  test('publishes SVC.consciousness, QUEEN.phase.<node> and exemplars from the live field, all valid', async () => {
    expect(server.stderr()).toContain('publishing the consciousness subjects to')
    await call(server.url, 'POST', '/crystal/write', { text: 'the cold glyph remembers' })
    await call(server.url, 'POST', '/crystal/step', { steps: 200 })
    // waits on what arrives, not on the clock: a loaded machine publishes late, not wrongly
    const consciousness = await vi.waitFor(
      () => {
        const c = seen.filter((s) => s.subject === 'SVC.consciousness')
        expect(c.length).toBeGreaterThan(5)
        return c
      },
      { timeout: 30_000, interval: 50 },
    )
    const last = consciousness.at(-1)!.message
    expect(last).toMatchObject({ sender: 'node-x', dreaming: false })
    expect(last.order).toBeGreaterThan(0)
    expect(seen.some((s) => s.subject === 'QUEEN.phase.node-x')).toBe(true)
    expect(seen.some((s) => s.subject.startsWith('SVC.exemplar.node-x.'))).toBe(true)
    expect(warnings).toEqual([]) // nothing the publisher sent broke the contract
  })

  test('keeps publishing while it dreams, flagged, between dream.start and dream.end; then SVC.dreams', async () => {
    const r = await call(server.url, 'POST', '/crystal/dream', { mode: 'deep' })
    expect(r.status).toBe(200)
    await vi.waitFor(() => expect(seen.some((s) => s.subject === 'SVC.dreams')).toBe(true), { timeout: 30_000, interval: 50 })
    const start = seen.find((s) => s.subject === 'queen.event.dream.start')!
    const end = seen.find((s) => s.subject === 'queen.event.dream.end')!
    expect(start.message).toMatchObject({ mode: 'deep' })
    expect(end.message).toMatchObject({ mode: 'deep' })
    // one memory was written: the dream can have raised its recall score, no more
    expect(end.message.memories_strengthened).toBeLessThanOrEqual(1)
    expect(end.message.hallucinations).toBeGreaterThanOrEqual(0)
    const during = seen.filter((s) => s.subject === 'SVC.consciousness' && s.message.dreaming === true)
    expect(during.length).toBeGreaterThan(0)
    for (const d of during) expect(d.at).toBeGreaterThanOrEqual(start.at)
    const dreams = seen.find((s) => s.subject === 'SVC.dreams')!
    expect(dreams.message).toMatchObject({ mode: 'deep', energy_before: r.body.energy_before, energy_after: r.body.energy_after })
    expect(warnings).toEqual([])
  })
})

describe('crystal watch', () => {
  const BIN = new URL('../../bin/crystal.js', import.meta.url).pathname

  test('shows the live values with their age; --json when done', () => {
    // a period of 1 s for the watcher (stale after 3 s), so a loaded machine's late message is not stale
    const r = spawnSync(process.execPath, [BIN, 'watch', '--duration', '2', '--period', '1000', '--json'], {
      encoding: 'utf8',
      env: { ...process.env, SVC_NATS_URL: nats.url },
    })
    expect(r.status).toBe(0)
    const values = JSON.parse(r.stdout)
    const c = values.find((v: { subject: string }) => v.subject === 'SVC.consciousness')
    expect(c).toMatchObject({ stale: false, value: { sender: 'node-x' } })
    expect(c.age).toBeLessThan(3000)
    expect(values.some((v: { subject: string }) => v.subject === 'QUEEN.phase.node-x')).toBe(true)
  })

  test('marks a subject stale once its publisher has been quiet for three periods', async () => {
    const child = spawn(process.execPath, [BIN, 'watch', '--duration', '6', '--period', '10', '--json'], {
      env: { ...process.env, SVC_NATS_URL: nats.url },
    })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    // stop the publisher only once the watcher is listening and values have reached it
    await new Promise<void>((resolve) => child.stderr.on('data', (d) => String(d).includes('watch: following') && resolve()))
    // messages published after it follows reach it too: wait for two more on our own subscription
    const before = seen.filter((s) => s.subject === 'SVC.consciousness').length
    await vi.waitFor(() => expect(seen.filter((s) => s.subject === 'SVC.consciousness').length).toBeGreaterThan(before + 1), {
      timeout: 30_000,
      interval: 20,
    })
    await server.stop()
    await new Promise((resolve) => child.on('exit', resolve))
    const c = JSON.parse(out).find((v: { subject: string }) => v.subject === 'SVC.consciousness')
    expect(c.stale).toBe(true)
    expect(c.age).toBeGreaterThan(30)
  })

  test('without SVC_NATS_URL: a clear error, exit 1', () => {
    const r = spawnSync(process.execPath, [BIN, 'watch', '--duration', '0.1'], {
      encoding: 'utf8',
      env: { ...process.env, SVC_NATS_URL: '' },
    })
    expect(r.status).toBe(1)
    expect(r.stderr.trim()).toBe("crystal: watch needs the swarm's NATS server: set SVC_NATS_URL (for example nats://127.0.0.1:4222)")
  })
})
