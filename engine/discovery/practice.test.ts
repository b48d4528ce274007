// The windows detection practises on (engine/discovery/practice.ts): structures of several classes, and
// the same ones found from either backend's form of the window, as the workers find them.
import { expect, test } from 'vitest'
import { FramePlanes } from '../cpu/spectra.js'
import { detect } from '../detect/detect.js'
import { HeldPlanes, WindowSpectra } from '../detect/spectra.js'
import { runJob } from './detector.js'
import { RECORD_DT, RECORD_FRAMES } from './evaluate.js'
import { practiceJobs } from './practice.js'

test('the practice windows hold structures of several classes, found alike from the frames and from what the GPU gathers', async () => {
  const [frames, held] = await practiceJobs(96, RECORD_FRAMES, RECORD_DT)
  if (frames.source.kind !== 'frames' || held.source.kind !== 'held') throw new Error('one window of each kind')
  const spectra = (source: FramePlanes | HeldPlanes) => new WindowSpectra(96, RECORD_DT, RECORD_FRAMES, source)
  const fromFrames = await detect(spectra(new FramePlanes(frames.source.frames)), frames.later)
  const fromHeld = await detect(spectra(HeldPlanes.of(held.source)), held.later)
  expect(new Set(fromFrames.map((s) => s.class)).size).toBeGreaterThanOrEqual(3)
  expect(fromHeld.map((s) => [s.class, s.hash])).toEqual(fromFrames.map((s) => [s.class, s.hash]))
  // as a worker runs them: the cells job, then the first job
  expect(await runJob('cells', held)).toHaveProperty('reads')
  expect(await runJob('first', held)).toEqual(await runJob('first', frames))
})
