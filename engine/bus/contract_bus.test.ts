// The bus contract against a real nats-server: every subject's valid example passes; missing,
// mistyped and renamed fields are refused on publish (nothing is sent) and dropped with a warning on
// receipt; the consumer marks stale data stale.
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startNats, type RunningNats } from '../../testing/services.js'
import { CONTRACTS } from '../contracts/subjects.js'
import { CrystalError } from '../errors.js'
import { ContractBus, LiveValues } from './contract_bus.js'
import { natsConnection } from './nats.node.js'

const EXAMPLES: Record<string, [string, Record<string, unknown>]> = {
  'SVC.consciousness': [
    'SVC.consciousness',
    { phi: 0.42, xi: 0.1, mean_order: 0.7, order: 0.72, mean_phase: 1.2, num_clusters: 2, consciousness_level: 'aware', dreaming: false },
  ],
  'SVC.dreams': [
    'SVC.dreams',
    {
      mode: 'deep',
      samples: 20,
      memories_strengthened: 14,
      hallucinations: 6,
      energy_before: 3.2,
      energy_after: 2.1,
      pruned_fraction: 0.5,
    },
  ],
  'QUEEN.phase.<agent>': ['QUEEN.phase.alpha', { agent: 'alpha', phase: 0.3, frequency: 1.1, order: 0.9 }],
  'queen.event.dream.start': ['queen.event.dream.start', { mode: 'light', reason: 'idle for 10 minutes' }],
  'queen.event.dream.end': ['queen.event.dream.end', { mode: 'light', duration_ms: 1200, memories_strengthened: 3, hallucinations: 1 }],
  'SVC.exemplar.<agent_id>.<cluster_id>': [
    'SVC.exemplar.alpha.c1',
    { agent_id: 'alpha', cluster_id: 'c1', size: 12, frequency: 0.8, coherence: 0.95, phases: [0.1, 0.2, 0.3] },
  ],
  'svc.crystal.events': [
    'svc.crystal.events',
    { event: 'round.finished', node: 'alpha', kind: 'process', round: 3, material: 'vacuum', registered: 2, announced: 1 },
  ],
  'svc.crystal.explore.request': ['svc.crystal.explore.request', { material: 'silicon', generations: 2 }],
  'svc.crystal.explore.progress': [
    'svc.crystal.explore.progress',
    {
      node: 'alpha',
      kind: 'process',
      round: 2,
      material: 'vacuum',
      generation: 1,
      generations: 3,
      best_fitness: 0.61,
      mean_fitness: 0.42,
      qd_score: 1.83,
      coverage: 0.05,
      elites: 3,
    },
  ],
  'RADIO.market.propose': [
    'RADIO.market.propose',
    { agent_id: 'alice', token: 'alice:secret', text: 'propose: it snows | by 2099-01-01 | category weather' },
  ],
  'RADIO.market.settled': [
    'RADIO.market.settled',
    {
      market_id: 'MKT-000001',
      question: 'it snows',
      tier: 'play',
      outcomes: ['yes', 'no'],
      resolution: [0.25, 0.75],
      paid_out: 7500,
      refunded: 1200,
      ledger_head: 'b'.repeat(64),
    },
  ],
  'RADIO.market.cancelled': [
    'RADIO.market.cancelled',
    {
      market_id: 'MKT-000002',
      question: 'it hails',
      tier: 'labs',
      outcomes: ['yes', 'no'],
      reason: 'N/A',
      refunded_to_traders: 5100,
      refunded_to_funder: 6932,
      ledger_head: 'c'.repeat(64),
    },
  ],
  'RADIO.nowplaying': [
    'RADIO.nowplaying',
    {
      track: { id: 'A/B/01 x.mp3', artist: 'A', album: 'B', title: 'x', duration_s: 40, bpm: 120, key: 'A' },
      block: 'Morning Drift',
      programme: null,
      gain_db: 3.5,
      listeners: 2,
      icecast_listeners: null,
    },
  ],
  'RADIO.alert.disk': ['RADIO.alert.disk', { path: '/', used_fraction: 0.83, threshold: 0.8 }],
  'RADIO.alert.prune': [
    'RADIO.alert.prune',
    { log_path: '/var/log/prune.log', last_modified: '2026-11-20T00:00:00.000Z', stale_after_s: 86400 },
  ],
  'svc.crystal.primitive.discovered': [
    'svc.crystal.primitive.discovered',
    {
      primitive: {
        id: 'CRY-000001',
        uuid: '0f0e0d0c-0b0a-4908-8706-050403020100',
        class: 'echo_ring',
        persistence: 0.5,
        noise_tolerance: 0.4,
        material: 'vacuum',
        lineage: [],
        hash: 'a'.repeat(64),
        signature: [1, 0],
        provenance: null,
        genome: { pulses: [{ x: 0.5, y: 0.5, radius: 0.1, amplitude: 1, frequency: 0, phase: 0 }], resonate_steps: 100, dream: 'none' },
        discovered_at: '2026-11-20T00:00:00.000Z',
        metrics: {},
      },
    },
  ],
}

/** The three ways the issue names to break a message: a missing field, a wrong type, a renamed field. */
function broken(body: Record<string, unknown>): [string, Record<string, unknown>][] {
  const [field] = Object.keys(body)
  const { [field]: value, ...rest } = body
  return [
    ['missing field', rest],
    ['wrong type', { ...body, [field]: typeof value === 'string' ? 42 : 'forty-two' }],
    ['renamed field', { ...rest, [`${field}_renamed`]: value }],
  ]
}

let nats: RunningNats
let nc: NatsConnection
beforeAll(async () => {
  nats = await startNats()
  nc = await connect({ servers: nats.url })
})
afterAll(async () => {
  await nc?.close()
  await nats?.stop()
})

const settle = () => nc.flush().then(() => new Promise((r) => setTimeout(r, 50)))

describe('the bus contract', () => {
  test('there is an example for every subject', () => {
    expect(Object.keys(EXAMPLES).sort()).toEqual(CONTRACTS.map((c) => c.pattern).sort())
  })

  for (const [pattern, [subject, body]] of Object.entries(EXAMPLES)) {
    test(`${pattern}: the valid example goes through; broken ones are refused on publish and dropped on receipt`, async () => {
      const warnings: string[] = []
      const bus = new ContractBus(natsConnection(nc), 'test-node', (w) => warnings.push(w))
      const received: Record<string, unknown>[] = []
      const sub = bus.subscribe(subject, (m) => received.push(m))
      const raw: string[] = []
      const rawSub = nc.subscribe(subject, {
        callback: (_e, m) => {
          raw.push(m.string())
        },
      })
      await settle()

      bus.publish(subject, body)
      await settle()
      expect(received).toHaveLength(1)
      expect(received[0]).toMatchObject({ schema_version: 1, sender: 'test-node', ...body })

      for (const [how, bad] of broken(body)) {
        expect(() => bus.publish(subject, bad), how).toThrow(CrystalError)
        expect(() => bus.publish(subject, bad), how).toThrow(`not publishing an invalid message on ${subject}`)
        // and on receipt: sent raw, past the contract
        nc.publish(subject, JSON.stringify({ schema_version: 1, ts: new Date().toISOString(), sender: 'rogue', ...bad }))
      }
      nc.publish(subject, 'not json')
      await settle()
      expect(raw).toHaveLength(1 + 4) // the valid one, and the four sent raw; none of the refused ones
      expect(received).toHaveLength(1)
      expect(bus.dropped.get(subject)).toBe(4)
      expect(warnings).toHaveLength(4)
      expect(warnings[0]).toMatch(new RegExp(`^warning: dropped an invalid message on ${subject.replace(/\./g, '\\.')} \\(1 so far\\): `))
      expect(warnings.at(-1)).toContain('not JSON')
      sub.unsubscribe()
      rawSub.unsubscribe()
    })
  }

  test('a subject token must agree with the message (QUEEN.phase.<agent>)', () => {
    const bus = new ContractBus(natsConnection(nc), 'n', () => {})
    expect(() => bus.publish('QUEEN.phase.beta', EXAMPLES['QUEEN.phase.<agent>'][1])).toThrow(
      '/agent: is "alpha" but the subject says "beta"',
    )
    expect(() => bus.publish('SVC.unknown', {})).toThrow('no contract for subject SVC.unknown')
  })

  test('explore progress: figures out of range or of another round are refused with their path', () => {
    const bus = new ContractBus(natsConnection(nc), 'n', () => {})
    const [subject, body] = EXAMPLES['svc.crystal.explore.progress']
    expect(() => bus.publish(subject, { ...body, coverage: 1.5 })).toThrow('/coverage: Expected number to be less or equal to 1')
    expect(() => bus.publish(subject, { ...body, generation: 0 })).toThrow('/generation: Expected integer to be greater or equal to 1')
    expect(() => bus.publish(subject, { ...body, kind: 'server' })).toThrow('/kind: ')
    expect(() => bus.publish(subject, { ...body, registered_total: 2 })).toThrow('/registered_total: ')
  })

  test('the JSON Schema files are the contracts (npm run schema writes them)', () => {
    for (const c of CONTRACTS) {
      const file = JSON.parse(
        readFileSync(new URL(`../contracts/json/${c.pattern.replace(/[<>]/g, '')}.schema.json`, import.meta.url), 'utf8'),
      )
      const { $schema, ...rest } = file
      expect($schema).toContain('json-schema.org')
      expect(rest).toEqual(JSON.parse(JSON.stringify(c.schema)))
    }
  })
})

describe('the consumer', () => {
  test('keeps the last value and its last-seen time per subject, and marks it stale after three missed periods', async () => {
    let now = 1_000_000
    const live = new LiveValues(() => now)
    const bus = new ContractBus(natsConnection(nc), 'n', () => {})
    live.follow(bus, 'QUEEN.phase.*', 100)
    await settle()
    bus.publish('QUEEN.phase.alpha', EXAMPLES['QUEEN.phase.<agent>'][1])
    bus.publish('QUEEN.phase.gamma', { ...EXAMPLES['QUEEN.phase.<agent>'][1], agent: 'gamma', phase: 2 })
    await settle()
    expect(live.values().map((v) => [v.subject, v.stale])).toEqual([
      ['QUEEN.phase.alpha', false],
      ['QUEEN.phase.gamma', false],
    ])
    expect(live.values()[1].value.phase).toBe(2)
    now += 300
    expect(live.values().every((v) => !v.stale)).toBe(true)
    now += 1
    expect(live.values().every((v) => v.stale && v.age === 301)).toBe(true)
  })
})
