// A window's detection split over two worker-thread jobs (engine/discovery/detector.ts runJob; the pool
// on the GPU path runs the cells job, gathers, then the first job, likely on another thread): the first
// job takes what the cells job measured of the stability map instead of measuring it again, and finds
// the same structure as a first job that measures it itself.
import { expect, test } from 'vitest'
import { pulsedEngine } from '../../testing/backends.js'
import { type CellsAnswer, IN_THREAD, jobOf, onShared, received, runJob, type SentStructure } from './detector.js'
import { recordWindows } from './evaluate.js'

const N = 32
const FIELDS = 4

/** What a worker thread is sent: as postMessage makes it (a copy of anything not on shared memory). */
const posted = <T>(m: T): T => structuredClone(m)

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
    const bare = (await runJob('first', jobOf(w, 1))) as SentStructure | undefined
    const held = (await runJob('first', jobOf(w, 1, posted(cells.measured)))) as SentStructure | undefined
    expect(held).toEqual(bare)
    if (!bare) continue
    // the features in the same order too: the registry's JSON lists them so
    expect(Object.keys(held!.features)).toEqual(Object.keys(bare.features))
    structures++
    // the control: parts doctored on the way (their masses doubled) show through, so they were not measured again
    const doctored = posted(cells.measured)!
    doctored.masses.forEach((m, k) => (doctored.masses[k] = 2 * m))
    const taken = (await runJob('first', jobOf(w, 1, doctored))) as SentStructure
    expect(taken.mass).toBe(2 * bare.mass)
  }
  expect(structures).toBeGreaterThan(0)
})

test("a first job's structure crosses threads with its cells and signature typed, and is received as the structure detection made: the same keys in the same order, arrays of the same numbers", async () => {
  const engine = await pulsedEngine('cpu', N, FIELDS)
  const { windows } = await recordWindows(engine, 1).finally(() => engine.destroy())
  let structures = 0
  for (const w of windows) {
    const made = (await IN_THREAD.first([w], 1))[0]
    const answer = posted((await runJob('first', jobOf(w, 1))) as SentStructure | undefined)
    if (!made) {
      expect(answer).toBeUndefined()
      continue
    }
    expect(answer!.cells).toBeInstanceOf(Int32Array)
    expect(answer!.signature).toBeInstanceOf(Float64Array)
    const back = received(answer)!
    expect(back).toEqual(made)
    expect(Array.isArray(back.cells) && Array.isArray(back.signature)).toBe(true)
    expect(Object.keys(back)).toEqual(Object.keys(made))
    expect(Object.is(back.signature[0], made.signature[0])).toBe(true)
    structures++
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
