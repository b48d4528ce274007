// The alerts on a real nats-server, checked on receipt by their contracts: the disk alert once per
// crossing of its threshold (a threshold above the usage, the control, never fires), the prune alert
// once per stale spell of the log, and for a missing log.
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { mkdtempSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ContractBus } from '../../engine/bus/contract_bus.js'
import { natsConnection } from '../../engine/bus/nats.node.js'
import { RADIO_SUBJECTS } from '../../engine/contracts/station.js'
import { startNats, type RunningNats } from '../../testing/services.js'
import { AlertMonitor, diskUsage } from './alerts.js'

let nats: RunningNats
let nc: NatsConnection
let bus: ContractBus
const got: Record<string, Record<string, any>[]> = { [RADIO_SUBJECTS.disk]: [], [RADIO_SUBJECTS.prune]: [] }
const settle = () => nc.flush().then(() => new Promise((r) => setTimeout(r, 100)))

beforeAll(async () => {
  nats = await startNats()
  nc = await connect({ servers: nats.url })
  bus = new ContractBus(natsConnection(nc), 'station-test', () => {})
  for (const s of [RADIO_SUBJECTS.disk, RADIO_SUBJECTS.prune]) bus.subscribe(s, (m) => got[s].push(m))
  await nc.flush()
})
afterAll(async () => {
  await nc?.close()
  await nats?.stop()
})

describe('alerts', () => {
  test('disk: one alert when usage is over the threshold, not one per check; none under a threshold above the usage', async () => {
    const used = diskUsage('/')
    const control = new AlertMonitor(bus, { disk_path: '/', disk_threshold: 1 })
    control.check()
    await settle()
    expect(got[RADIO_SUBJECTS.disk]).toHaveLength(0)
    const monitor = new AlertMonitor(bus, { disk_path: '/', disk_threshold: used / 2 })
    monitor.check()
    monitor.check()
    await settle()
    expect(got[RADIO_SUBJECTS.disk]).toHaveLength(1)
    expect(got[RADIO_SUBJECTS.disk][0]).toMatchObject({ path: '/', threshold: used / 2 })
    expect(Math.abs(got[RADIO_SUBJECTS.disk][0].used_fraction - used)).toBeLessThan(0.01)
  })

  test('prune: an alert when the log goes stale, none while it is fresh, again after it was fresh and went stale; a missing log is stale', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-prune-'))
    const log = join(dir, 'prune.log')
    writeFileSync(log, 'pruned 12 files\n')
    const monitor = new AlertMonitor(bus, { disk_threshold: 1, prune_log: log, prune_stale_s: 3600 })
    monitor.check() // fresh
    const old = new Date(Date.now() - 2 * 3600_000)
    utimesSync(log, old, old)
    monitor.check()
    monitor.check()
    await settle()
    expect(got[RADIO_SUBJECTS.prune]).toHaveLength(1)
    expect(got[RADIO_SUBJECTS.prune][0]).toMatchObject({ log_path: log, stale_after_s: 3600, last_modified: old.toISOString() })
    utimesSync(log, new Date(), new Date())
    monitor.check()
    utimesSync(log, old, old)
    monitor.check()
    new AlertMonitor(bus, { disk_threshold: 1, prune_log: join(dir, 'missing.log') }).check()
    await settle()
    expect(got[RADIO_SUBJECTS.prune]).toHaveLength(3)
    expect(got[RADIO_SUBJECTS.prune][2]).toMatchObject({ log_path: join(dir, 'missing.log'), last_modified: null })
  })
})
