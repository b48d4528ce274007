// A window's detection split over two worker-thread jobs (engine/discovery/detector.ts runJob; the pool
// on the GPU path runs the cells job, gathers, then the first job, likely on another thread): the first
// job takes what the cells job measured of the stability map instead of measuring it again, and finds
// the same structure as a first job that measures it itself.
import { expect, test } from 'vitest'
import { pulsedEngine } from '../../testing/backends.js'
import type { PackedMeasured, Structure } from '../detect/detect.js'
import { type CellsAnswer, jobOf, onShared, runJob } from './detector.js'
import { recordWindows } from './evaluate.js'

const N = 32
const FIELDS = 4

/** What a worker thread is sent: as postMessage makes it (a copy of anything not on shared memory). */
const sent = (m: PackedMeasured | undefined) => structuredClone(m)

test("a window's first job takes the parts its cells job measured: the same structure, and no component measured again", async () => {
  const engine = await pulsedEngine('cpu', N, FIELDS)
  const { windows } = await recordWindows(engine, 1).finally(() => engine.destroy())
  let structures = 0
  for (const w of windows) {
    const cells = (await runJob('cells', jobOf(w, 1))) as CellsAnswer
    expect(cells.measured?.parts.length).toBeGreaterThan(0)
    // packed as typed arrays on memory the threads share, as the cells are: no copy on the way to the main thread and back
    const views = [cells.reads.lists, cells.reads.ends, cells.reads.modes, ...Object.values(cells.measured!)]
    expect(views.every((v) => ArrayBuffer.isView(v) && v.buffer instanceof SharedArrayBuffer)).toBe(true)
    // all of it on one buffer: one SharedArrayBuffer an answer
    expect(new Set(views.map((v) => v.buffer)).size).toBe(1)
    const bare = (await runJob('first', jobOf(w, 1))) as Structure | undefined
    const held = (await runJob('first', jobOf(w, 1, sent(cells.measured)))) as Structure | undefined
    expect(held).toEqual(bare)
    if (!bare) continue
    // the features in the same order too: the registry's JSON lists them so
    expect(Object.keys(held!.features)).toEqual(Object.keys(bare.features))
    structures++
    // the control: parts doctored on the way (their masses doubled) show through, so they were not measured again
    const doctored = sent(cells.measured)!
    doctored.masses.forEach((m, k) => (doctored.masses[k] = 2 * m))
    const taken = (await runJob('first', jobOf(w, 1, doctored))) as Structure
    expect(taken.mass).toBe(2 * bare.mass)
  }
  expect(structures).toBeGreaterThan(0)
})

test('onShared copies arrays of either kind onto one shared buffer, each 8-byte aligned, values kept', () => {
  const odd = Int32Array.from([1, -2, 3])
  const floats = Float64Array.from([0.5, -1e300])
  const empty = new Int32Array(0)
  const [a, b, c, d] = onShared([odd, floats, empty, Int32Array.from([7])] as const)
  expect([...a, ...b, ...c, ...d]).toEqual([1, -2, 3, 0.5, -1e300, 7])
  expect([a.byteOffset, b.byteOffset, c.byteOffset, d.byteOffset]).toEqual([0, 16, 32, 32])
  expect(new Set([a, b, c, d].map((v) => v.buffer)).size).toBe(1)
  expect(a.buffer).toBeInstanceOf(SharedArrayBuffer)
  // copies: the originals stay apart
  a[0] = 9
  expect(odd[0]).toBe(1)
})
