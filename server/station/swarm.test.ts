// The station and the swarm, with a real nats-server and the built server: values published on
// SVC.consciousness, QUEEN.phase.* and SVC.dreams reach /api/state, /api/swarm and /api/dreams and
// go stale after three periods of silence; the voice DJ speaks over a change of track when the order
// parameter is low, and a listener finds its voice in the stream (not when the order is high: the control).
import SwaggerParser from '@apidevtools/swagger-parser'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import FFT from 'fft.js'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ContractBus } from '../../engine/bus/contract_bus.js'
import { natsConnection } from '../../engine/bus/nats.node.js'
import { scheduleAt } from '../../engine/station/schedule.js'
import { call, demoLibrary, startNats, startServer, type RunningNats, type RunningServer } from '../../testing/services.js'
import { RATE } from './audio.js'
import { DJ_ORDER_BELOW, voice } from './dj.js'
import { listen, longestSilenceMs } from './listener.js'

const PERIOD_MS = 1000
const ORACLE = 'swarm-test-oracle'
let nats: RunningNats
let server: RunningServer
let nc: NatsConnection
let bus: ContractBus

beforeAll(async () => {
  nats = await startNats()
  nc = await connect({ servers: nats.url })
  bus = new ContractBus(natsConnection(nc), 'test-swarm', () => {})
  const { dir } = await demoLibrary(14, 4)
  server = await startServer(['--music', dir], {
    SVC_NATS_URL: nats.url,
    // the server's own publisher stays quiet for the test's length: the test is the swarm here
    SVC_CONSCIOUSNESS_PERIOD_MS: '3600000',
    SVC_STATION_SWARM_PERIOD_MS: String(PERIOD_MS),
    SVC_STATION_PACE: '4',
    SVC_STATION_CROSSFADE_S: '2',
    // the DJ's manners (five minutes apart, a tenth of the airtime) would keep it quiet in a test this short
    SVC_STATION_DJ_MIN_INTERVAL_S: '0',
    SVC_STATION_DJ_MAX_SHARE: '1',
    HUB_ORACLE_TOKEN: ORACLE,
  })
})
afterAll(async () => {
  await server?.stop()
  await nc?.close()
  await nats?.stop()
})

const consciousness = (order: number, dreaming: boolean) => ({
  phi: 0.42,
  xi: 1.5,
  mean_order: 0.3,
  order,
  mean_phase: 0.1,
  num_clusters: 2,
  consciousness_level: 'aware',
  dreaming,
})
const state = async () => (await call(server.url, 'GET', '/api/state')).body

/** Publishes SVC.consciousness every 100 ms (order and dream state as the block on now lets the DJ speak) until stopped. */
function keepPublishing(order: number): () => void {
  const send = () => {
    const speakWhen = scheduleAt(new Date()).block.speak_when
    if (speakWhen !== 'awake') bus.publish('queen.event.dream.start', { mode: speakWhen, reason: 'test' })
    bus.publish('SVC.consciousness', consciousness(order, speakWhen !== 'awake'))
  }
  send()
  const timer = setInterval(send, 100)
  return () => clearInterval(timer)
}

/** What the station shows while the test's swarm publishes. */
async function fresh(): Promise<void> {
  await expect.poll(async () => (await state()).swarm.queen.agents, { timeout: 10_000 }).toBe(2)
  const s = await state()
  expect(s.swarm.consciousness.phi).toMatchObject({ value: 0.42, stale: false })
  expect(s.swarm.consciousness.xi).toMatchObject({ value: 1.5, stale: false })
  expect(s.swarm.consciousness.order).toMatchObject({ value: 0.9, stale: false })
  expect(s.swarm.consciousness.level).toBe('aware')
  expect(s.swarm.medium).toBe('awake')
  // the queen's phase: the circular mean of 1 and 2 radians
  expect(s.swarm.queen.phi.value).toBeCloseTo(1.5, 6)
  expect(s.swarm.queen.order.value).toBeCloseTo(0.7, 6)
  const swarm = (await call(server.url, 'GET', '/api/swarm')).body
  expect(swarm.agents.map((a: { agent: string }) => a.agent)).toEqual(['a1', 'a2'])
  expect(swarm.consciousness).toMatchObject({ phi: 0.42, sender: 'test-swarm', stale: false })
  await expect.poll(async () => (await call(server.url, 'GET', '/api/swarm')).body.dropped).toBe(1)
  const dreams = (await call(server.url, 'GET', '/api/dreams')).body
  expect(dreams.dreams[0]).toMatchObject({ mode: 'deep', memories_strengthened: 3, sender: 'test-swarm' })
}

describe('state from the bus', () => {
  test("the station's routes are in the OpenAPI document, which validates", async () => {
    const doc = (await call(server.url, 'GET', '/openapi.json')).body
    await SwaggerParser.validate(structuredClone(doc))
    for (const path of ['/api/state', '/api/swarm', '/api/dreams', '/api/station', '/player', '/stream'])
      expect(Object.keys(doc.paths)).toContain(path)
  })

  test('before anything is published every swarm value is null and stale', async () => {
    const s = await state()
    expect(s.swarm.bus).toBe(true)
    expect(s.swarm.consciousness.phi).toEqual({ value: null, age_s: null, stale: true })
    expect(s.swarm.queen.phi).toEqual({ value: null, age_s: null, stale: true })
  })

  test('published values appear in /api/state, /api/swarm and /api/dreams; after three periods of silence they are stale', async () => {
    // published every 100 ms while the fresh values are checked, so a slow machine does not age them
    const send = () => {
      bus.publish('SVC.consciousness', consciousness(0.9, false))
      bus.publish('QUEEN.phase.a1', { agent: 'a1', phase: 1, frequency: 0.5, order: 0.8 })
      bus.publish('QUEEN.phase.a2', { agent: 'a2', phase: 2, frequency: 0.5, order: 0.6 })
    }
    send()
    const timer = setInterval(send, 100)
    bus.publish('SVC.dreams', {
      mode: 'deep',
      samples: 40,
      memories_strengthened: 3,
      hallucinations: 1,
      energy_before: 2,
      energy_after: 1.5,
      pruned_fraction: 0.25,
    })
    // not JSON of the contract: dropped and counted, the values kept
    nc.publish('SVC.consciousness', '{"phi": "high"}')
    try {
      await fresh()
    } finally {
      clearInterval(timer)
    }
    // silence: stale once three periods have passed, and not before
    await expect.poll(async () => (await state()).swarm.consciousness.phi.stale, { timeout: 20_000, interval: 200 }).toBe(true)
    const later = await state()
    expect(later.swarm.consciousness.phi.value).toBe(0.42)
    expect(later.swarm.consciousness.phi.age_s).toBeGreaterThan((3 * PERIOD_MS) / 1000)
    expect(later.swarm.queen.phi.stale).toBe(true)
    expect(later.swarm.medium).toBeNull()
    // dream reports come when dreams happen: old, never stale
    expect((await call(server.url, 'GET', '/api/dreams')).body.dreams[0].age_s).toBeGreaterThan((3 * PERIOD_MS) / 1000)
  })
})

/** Where `voice` sits best in `x` (cross-correlation by FFT): the lag, the normalised correlation
 * there and the voice's gain in the mix (1: as loud as the reference). */
function find(x: Float32Array, v: Float32Array): { lag: number; rho: number; gain: number } {
  let n = 1
  while (n < x.length + v.length) n *= 2
  const fft = new FFT(n)
  const spectrum = (s: Float32Array) => {
    const input = new Float64Array(n)
    input.set(s)
    const out = new Float64Array(2 * n)
    fft.realTransform(out, input)
    fft.completeSpectrum(out)
    return out
  }
  const X = spectrum(x)
  const V = spectrum(v)
  const P = new Float64Array(2 * n)
  for (let k = 0; k < n; k++) {
    // X times the conjugate of V
    P[2 * k] = X[2 * k] * V[2 * k] + X[2 * k + 1] * V[2 * k + 1]
    P[2 * k + 1] = X[2 * k + 1] * V[2 * k] - X[2 * k] * V[2 * k + 1]
  }
  const r = new Float64Array(2 * n)
  fft.inverseTransform(r, P)
  let lag = 0
  for (let t = 0; t + v.length <= x.length; t++) if (r[2 * t] > r[2 * lag]) lag = t
  let vv = 0
  let xx = 0
  for (let i = 0; i < v.length; i++) (vv += v[i] * v[i]), (xx += x[lag + i] * x[lag + i])
  const dot = r[2 * lag]
  return { lag, rho: dot / Math.sqrt(vv * xx), gain: dot / vv }
}

describe('the voice DJ', () => {
  let control: Awaited<ReturnType<typeof listen>>
  test(`the control: with the order at 0.9 (not below ${DJ_ORDER_BELOW}) the DJ stays quiet across track changes`, async () => {
    const stop = keepPublishing(0.9)
    try {
      control = await listen(`${server.url}/stream`, 40)
    } finally {
      stop()
    }
    expect(control.titles.length).toBeGreaterThanOrEqual(2)
    expect((await state()).dj).toMatchObject({ enabled: true, spoken: 0, last: null })
  })

  test(`with the order at 0.2 the DJ speaks over the change of track, the top market's odds included: the listener finds the voice at -16 LUFS, no dead air; not in the control`, async () => {
    // a market on the server's own market engine, moved towards "no" by a trade
    const market = (
      await call(
        server.url,
        'POST',
        '/api/markets',
        {
          question: 'Will the station speak?',
          outcomes: ['yes', 'no'],
          tier: 'labs',
          closes_at: new Date(Date.now() + 86_400_000).toISOString(),
          b: 50,
        },
        { authorization: `Bearer ${ORACLE}` },
      )
    ).body
    const ada = (await call(server.url, 'POST', '/api/agents/register', { id: 'ada', display_name: 'Ada', kind: 'human' })).body
    expect(
      (
        await call(
          server.url,
          'POST',
          `/api/markets/${market.id}/trade`,
          { trader_id: 'ada', outcome: 'no', shares: 30 },
          { authorization: `Bearer ${ada.token}` },
        )
      ).status,
    ).toBe(200)
    const odds = Math.round((await call(server.url, 'GET', `/api/markets/${market.id}`)).body.prices[1] * 100)
    expect(odds).toBeGreaterThan(50)
    const stop = keepPublishing(0.2)
    let heard
    try {
      heard = await listen(`${server.url}/stream`, 40)
    } finally {
      stop()
    }
    const s = await state()
    expect(s.dj.spoken).toBeGreaterThanOrEqual(1)
    expect(s.dj.last.order).toBe(0.2)
    // the first utterance, which the listener heard whole (the last may run past the minute's end)
    const said = [...server.stderr().matchAll(/the DJ says "(.+?)" \(([\d.]+) s/g)].map((m) => ({
      text: m[1],
      duration_s: Number(m[2]),
    }))[0]
    expect(said.text).toMatch(
      new RegExp(
        `^That was .+ by .+\\. Next, .+ by .+\\. This is .+ on Resonant Crystal\\. On the markets: Will the station speak\\? no, at ${odds} percent\\.$`,
      ),
    )
    // espeak-ng's own rendering of the same words, brought to the stream's rate and -16 LUFS
    const reference = await voice(said.text)
    expect(said.duration_s).toBeCloseTo(reference.left.length / RATE, 2)
    const found = find(heard.left, reference.left)
    const missing = find(control.left, reference.left)
    process.stderr.write(
      `DJ voice in the stream: correlation ${found.rho.toFixed(3)}, gain ${(20 * Math.log10(found.gain)).toFixed(2)} dB; control (order high): correlation ${missing.rho.toFixed(3)}\n`,
    )
    expect(found.rho, 'the voice in the stream').toBeGreaterThan(0.8)
    // as loud as the reference (the music is ducked 12 dB beneath it): within 1 dB
    expect(Math.abs(20 * Math.log10(found.gain))).toBeLessThan(1)
    expect(longestSilenceMs(heard)).toBeLessThan(50)
    // it is spoken in the change: a new title arrives while the voice plays
    expect(heard.titles.some((t) => t.at > found.lag - 2 * RATE && t.at < found.lag + reference.left.length)).toBe(true)
    // the control: the same words are not in what the listener heard with the order high
    expect(missing.rho).toBeLessThan(0.2)
  })
})
