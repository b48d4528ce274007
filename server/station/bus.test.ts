// The station on the bus: with SVC_NATS_URL set, every track that goes on air is announced on
// RADIO.nowplaying, and the message passes its contract on receipt (a real nats-server).
import { connect } from '@nats-io/transport-node'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { ContractBus } from '../../engine/bus/contract_bus.js'
import { natsConnection } from '../../engine/bus/nats.node.js'
import { RADIO_SUBJECTS } from '../../engine/contracts/station.js'
import { BLOCKS } from '../../engine/station/schedule.js'
import { demoLibrary, startNats, startServer, type RunningNats, type RunningServer } from '../../testing/services.js'

let nats: RunningNats
let server: RunningServer
const heard: Record<string, any>[] = []
const warnings: string[] = []
let close: () => Promise<void>

beforeAll(async () => {
  nats = await startNats()
  const nc = await connect({ servers: nats.url })
  close = () => nc.close()
  new ContractBus(natsConnection(nc), 'listener', (w) => warnings.push(w)).subscribe(RADIO_SUBJECTS.nowplaying, (m) => heard.push(m))
  await nc.flush()
  const { dir } = await demoLibrary(14, 4)
  server = await startServer(['--music', dir], { SVC_NATS_URL: nats.url, SVC_STATION_PACE: '4', SVC_STATION_CROSSFADE_S: '2' })
})
afterAll(async () => {
  await server?.stop()
  await close?.()
  await nats?.stop()
})

test('each track on air is announced on RADIO.nowplaying, valid by its contract, with the block on now', async () => {
  await expect.poll(() => heard.length).toBeGreaterThanOrEqual(2)
  expect(warnings).toEqual([])
  const [first, second] = heard
  expect(first.track.title).not.toBe(second.track.title)
  for (const m of heard) {
    expect(Object.keys(BLOCKS)).toContain(m.block)
    expect(m.sender).toMatch(/\S/)
    expect(typeof m.gain_db).toBe('number')
  }
})
