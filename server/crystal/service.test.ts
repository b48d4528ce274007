// The server's snapshots (CrystalService, on the CPU backend: what it averages does not depend on it):
// the sides each one averages the field onto, and a change that fails part way.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, test, vi } from 'vitest'
import { DEFAULT_WORK, settingsFrom } from '../../engine/config.js'
import type { Engine } from '../../engine/field/engine.js'
import { createNodeEngine } from '../../engine/node.js'
import { DEFAULT_LIMITS } from '../../engine/registry/registry.js'
import { downsample } from '../../engine/util/downsample.js'
import { CrystalService, WATCHED_MAX } from './service.js'

/** The field as a state shows it at `side` (JSON has no -0). */
const shown = (u: Float32Array, side: number) => Array.from(downsample(u, 64, side), (v) => Math.round(v * 1e5) / 1e5 + 0)

const open: Engine[] = []
afterEach(() => open.splice(0).forEach((e) => e.destroy()))

/** A service on a fresh CPU engine at N = 64, and a record of the sides its engine averaged the field onto. */
async function served(): Promise<{ service: CrystalService; engine: Engine; averaged: number[] }> {
  const engine = await createNodeEngine({ size: 64, backend: 'cpu', material: 'europium_crystal', seed: 3 })
  open.push(engine)
  const averaged: number[] = []
  const downsampled = engine.downsampled.bind(engine)
  vi.spyOn(engine, 'downsampled').mockImplementation((side, field) => (averaged.push(side), downsampled(side, field)))
  const service = await CrystalService.start({
    engine,
    dataDir: mkdtempSync(join(tmpdir(), 'crystal-service-')),
    backend: engine.backend,
    registryLimits: DEFAULT_LIMITS,
    work: DEFAULT_WORK,
    engineSettings: settingsFrom({}).engine,
  })
  return { service, engine, averaged }
}

test("each snapshot averages the field onto the open feeds' sides and the latest asked, at most WATCHED_MAX; any other side is averaged as it is asked", async () => {
  const { service, engine, averaged } = await served()
  // no one watching: the snapshot reads the books alone
  expect(averaged).toEqual([])
  const stop = service.subscribe(() => {}, 48)
  for (const size of [8, 16, 24, 32, 40, 56]) await service.state(size)
  expect(averaged).toEqual([8, 16, 24, 32, 40, 56])
  averaged.length = 0
  await service.step(5)
  // the feed's side first, then the latest asked: 4 sides, not 7
  expect(WATCHED_MAX).toBe(4)
  expect(averaged).toEqual([48, 56, 40, 32])
  // those come from the snapshot; another is averaged as asked, of the field as it is after the change
  averaged.length = 0
  const state = JSON.parse(await service.state(56))
  expect(averaged).toEqual([])
  const { u } = await engine.read([0])
  expect(state.field).toEqual(shown(u, 56))
  expect(JSON.parse(await service.state(8)).step).toBe(5)
  expect(averaged).toEqual([8])
  // the feed closed: its side is one asked no more
  stop()
  averaged.length = 0
  await service.step(5)
  expect(averaged).not.toContain(48)
})

test('a change that fails part way still moves the snapshot: the state shows the field it left, at its step', async () => {
  const { service, engine } = await served()
  await service.mutate((e) => e.write('the river keeps its stones'))
  expect(JSON.parse(await service.state(16)).step).toBe(0)
  await expect(
    service.mutate(async (e) => {
      await e.step(50)
      throw new Error('the change failed after 50 steps')
    }),
  ).rejects.toThrow('after 50 steps')
  // a side not asked before: averaged of the live field, which must be the snapshot's
  const state = JSON.parse(await service.state(32))
  const { u } = await engine.read([0])
  expect([state.step, engine.step_count, state.books.step]).toEqual([50, 50, 50])
  expect(state.field).toEqual(shown(u, 32))
  expect(state.memories).toBe(1)
})
