// The windows detection practises on (engine/discovery/practice.ts): structures of several classes, and
// the same ones found from either backend's form of the window, as the workers find them.
import { expect, test } from 'vitest'
import { FramePlanes } from '../cpu/spectra.js'
import { CLASS_RULES, components, detect, fieldTotal, MIN_AREA_CELLS, outshone, structureMask, sustainOf } from '../detect/detect.js'
import { HeldPlanes, WindowSpectra } from '../detect/spectra.js'
import { runJob, sent } from './detector.js'
import { RECORD_DT, RECORD_FRAMES } from './evaluate.js'
import { practiceJobs, speckleWindow } from './practice.js'

test('the practice windows hold structures of several classes, found alike from the frames and from what the GPU gathers', async () => {
  const [frames, held] = await practiceJobs(96, RECORD_FRAMES, RECORD_DT)
  if (frames.source.kind !== 'frames' || held.source.kind !== 'held') throw new Error('one window of each kind')
  const spectra = (source: FramePlanes | HeldPlanes) => new WindowSpectra(96, RECORD_DT, RECORD_FRAMES, source)
  const fromFrames = await detect(spectra(new FramePlanes(frames.source.frames)), { sums: frames.later, taken: frames.taken })
  const fromHeld = await detect(spectra(HeldPlanes.of(held.source)), { sums: held.later, taken: held.taken })
  expect(new Set(fromFrames.map((s) => s.class)).size).toBeGreaterThanOrEqual(3)
  expect(fromHeld.map((s) => [s.class, s.hash])).toEqual(fromFrames.map((s) => [s.class, s.hash]))
  // the held window's first parts' sums, as the device makes them (PlaneSource.top), are what detection
  // measures them by: the same structures above; a later sum and the inner disc's count changed there move its
  // sustain and its annularity
  const top = held.source.top
  if (!top) throw new Error('the held window has its first parts')
  const [first] = top.parts
  const changed = {
    ...first,
    shape: { ...first.shape, inner: first.shape.inner - 1 },
    later: first.later && { ...first.later, units: first.later.units * 1.25 },
  }
  const fromChanged = await detect(spectra(HeldPlanes.of({ ...held.source, top: { ...top, parts: [changed, ...top.parts.slice(1)] } })), {
    sums: held.later,
    taken: held.taken,
  })
  const at = (found: typeof fromHeld) => found.find((s) => s.cells[0] === first.root)
  expect(at(fromHeld)).toBeDefined()
  expect(at(fromChanged)?.features.sustain).toBeCloseTo(1.25 * (at(fromHeld)?.features.sustain ?? 0), 12)
  expect(at(fromChanged)?.features.annularity).toBeGreaterThan(at(fromHeld)?.features.annularity ?? Infinity)
  // as a worker runs them: the cells job, then the first job
  expect(await runJob('cells', held)).toHaveProperty('reads')
  expect(await runJob('first', held)).toEqual(await runJob('first', frames))
})

test("the speckled window is like a random genome's: dozens of parts, most too faint to stand out, some fading; a structure found from what the GPU gathers, at a limit of 1 and of every part", async () => {
  const jobs = await practiceJobs(96, RECORD_FRAMES, RECORD_DT)
  expect(jobs).toHaveLength(4)
  const { spectra, later } = speckleWindow(96, RECORD_FRAMES, RECORD_DT)
  const map = spectra.stability()
  const parts = components(structureMask(map), 96).filter((c) => c.length >= MIN_AREA_CELLS)
  const { total } = fieldTotal(map)
  const faint = parts.filter((c) =>
    outshone(
      c.reduce((a, i) => a + map[i], 0),
      c.length,
      total,
      map.length,
    ),
  )
  expect(parts.length).toBeGreaterThanOrEqual(20)
  expect(faint.length).toBeGreaterThan(parts.length / 2)
  expect(parts.some((c) => sustainOf(c, map, later) < CLASS_RULES.persists)).toBe(true)
  const found = await detect(spectra, later)
  expect(found.length).toBeGreaterThanOrEqual(2)
  for (const [k, limit] of [
    [2, 1],
    [3, Infinity],
  ]) {
    expect(jobs[k].limit).toBe(limit)
    expect(await runJob('first', jobs[k])).toEqual(sent(found[0]))
  }
})
