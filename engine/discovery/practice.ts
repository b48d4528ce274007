// Windows made up for detection to practise on. A worker thread's code runs several times slower until
// V8 has compiled it for what it is handed: on the 2-core development machine a window's cells took
// 3.9 to 4.8 ms and its structure 2.3 to 3.0 ms in a fresh thread, 0.6 and 0.4 ms warm
// (docs/detection.md). At evolve's defaults a generation hands the pool 24 windows, in chunks of 6 to
// a few workers, so those workers stayed that slow for most of a run. The pool lets them practise on
// these while they wait for the first generation (DetectPool.warm): a window as each backend's
// recorder hands it over, and a speckled one like a random genome's field (real windows took a thread
// practised on the first alone some 3 times its warm time on their first pass).
import { FramePlanes } from '../cpu/spectra.js'
import {
  cellsRead,
  detect,
  type Later,
  listedComponents,
  listedTop,
  topLists,
  topModes,
  topSums,
  type WindowReads,
} from '../detect/detect.js'
import { type HeldReads, ListIndex, type PlaneData, sharedFloats, WindowSpectra } from '../detect/spectra.js'
import { type CellsAnswer, type DetectJob, jobOf, type PracticeTask, runTask, type Window } from './detector.js'

let made: { key: string; jobs: Promise<DetectJob[]> } | undefined

/**
 * A round of practice on this thread: the practice windows (made at the first round) detected as a
 * worker detects a generation's, their cells and their structures, every part of them.
 */
export async function practise({ n, frames, dt }: PracticeTask): Promise<unknown[]> {
  const key = `${n}/${frames}/${dt}`
  if (made?.key !== key) made = { key, jobs: practiceJobs(n, frames, dt) }
  const [framed, ...held] = await made.jobs
  // as the pool runs them: the CPU backend's first jobs alone, the GPU backend's after their cells
  // job, handed what it measured
  const cells = (await runTask({ op: 'cells', jobs: held })) as CellsAnswer[]
  await runTask({ op: 'first', jobs: [framed, ...held.map((h, k) => ({ ...h, measured: cells[k].measured }))] })
  return []
}

/**
 * Frames of side n, `dt` steps apart, of what detection classes: a standing disc, a ring whose phase
 * turns round its centre (a winding), two blobs at another pair of frequencies, over a faint floor.
 * The later window's map is the window's own a little faded (the structures hold), as sums of one sample.
 */
export function practiceWindow(n: number, frames: number, dt: number): Window {
  const cells = n * n
  const all = sharedFloats(frames * cells)
  const series = Array.from({ length: frames }, (_, t) => all.subarray(t * cells, (t + 1) * cells))
  const bump = (x: number, y: number, cx: number, cy: number, r: number) => Math.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (r * n) ** 2)
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      const disc = bump(x, y, 0.25 * n, 0.3 * n, 0.07)
      const [dx, dy] = [x - 0.65 * n, y - 0.35 * n]
      const ring = Math.exp(-(((Math.hypot(dx, dy) - 0.14 * n) / (0.03 * n)) ** 2))
      const angle = Math.atan2(dy, dx)
      const left = bump(x, y, 0.3 * n, 0.75 * n, 0.05)
      const right = bump(x, y, 0.55 * n, 0.75 * n, 0.05)
      const floor = 0.01 * Math.sin(12.9898 * x + 78.233 * y)
      for (let t = 0; t < frames; t++) {
        const w = (2 * Math.PI * t) / frames
        series[t][y * n + x] =
          disc * Math.cos(3 * w) + ring * Math.cos(5 * w - angle) + left * Math.cos(2 * w) + right * Math.cos(4 * w) + floor
      }
    }
  }
  const spectra = new WindowSpectra(n, dt, frames, new FramePlanes(series))
  const later = sharedFloats(cells)
  spectra.stability().forEach((v, i) => (later[i] = 0.9 * v))
  return { spectra, later: { sums: later, taken: 1 } }
}

/**
 * The practice window twice, as detection is handed a window on each backend: its frames (the CPU
 * backend's), and its stability sums with what detection reads beyond them gathered (the GPU
 * backend's, gathered here as shaders/gather.wgsl gathers them where the fields live); then the
 * speckled window as the GPU backend holds it, asked for one structure (as evolve asks) and for all.
 */
export async function practiceJobs(n: number, frames: number, dt: number): Promise<DetectJob[]> {
  const window = practiceWindow(n, frames, dt)
  const speckled = speckleWindow(n, frames, dt)
  return [
    jobOf(window, Infinity),
    { ...jobOf(window, Infinity), source: await heldOf(window) },
    ...(await Promise.all([1, Infinity].map(async (limit) => ({ ...jobOf(speckled, limit), source: await heldOf(speckled, limit) })))),
  ]
}

/**
 * A window like a random genome's field: 24 standing waves of many wavenumbers and frequencies, whose
 * map breaks into some 30 parts of every shape, most too faint to stand out, some fading in the later
 * window: the paths real windows take that the window above does not.
 */
export function speckleWindow(n: number, frames: number, dt: number): Window {
  const cells = n * n
  const all = sharedFloats(frames * cells)
  const series = Array.from({ length: frames }, (_, t) => all.subarray(t * cells, (t + 1) * cells))
  // fixed pseudo-random numbers: the fractional parts of multiples of the golden ratio
  const r = (k: number) => (k * 0.6180339887498949) % 1
  const waves = Array.from({ length: 24 }, (_, k) => {
    const [p, q, o] = [0.6 * r(4 * k + 1), 0.6 * r(4 * k + 2), 6 * r(4 * k + 3)]
    const bin = 1 + Math.floor(8 * r(4 * k + 4))
    return {
      shape: Float64Array.from({ length: cells }, (_, i) => Math.cos(p * (i % n) + q * Math.floor(i / n) + o)),
      beat: Float64Array.from({ length: frames }, (_, t) => Math.cos((2 * Math.PI * bin * t) / frames)),
    }
  })
  for (let t = 0; t < frames; t++) {
    const frame = series[t]
    for (const { shape, beat } of waves) for (let i = 0; i < cells; i++) frame[i] += shape[i] * beat[t]
  }
  const spectra = new WindowSpectra(n, dt, frames, new FramePlanes(series))
  const later = sharedFloats(cells)
  spectra.stability().forEach((v, i) => (later[i] = v * (0.55 + 0.45 * Math.sin((i % n) / 9))))
  return { spectra, later: { sums: later, taken: 1 } }
}

/**
 * A window of frames as the GPU backend holds it once detection's cells are gathered (`limit`: as
 * detection is asked): its stability sums, its map's components listed, its first parts with what
 * detection reads of them (TopPart.reads), and what else detection reads, made from the frames.
 */
export async function heldOf({ spectra, later }: Window, limit = Infinity): Promise<Extract<PlaneData, { kind: 'held' }>> {
  const n = spectra.n
  const stability = sharedFloats(n * n)
  stability.forEach((_, c) => (stability[c] = spectra.source.plane(1, c)))
  // its map's components listed and its first parts summed and read, as the GPU backend's recorder
  // lists, sums and reads them (the map as stability() makes it; topSums and topModes, the kernels' twins)
  const map = Float32Array.from(stability, (v) => v / (spectra.frames || 1))
  const listed = listedComponents(map, n)
  const top = listedTop(map, n, later, listed)
  const lists = topLists(map, n, top)
  if (top && lists) {
    const [sums, modes] = [topSums(spectra, top, lists), topModes(spectra, top, lists)]
    top.parts.forEach((part, k) => (part.reads = { sums: sums[k], modes: modes[k] }))
  }
  // what detection names beside those, as it names them on the GPU backend
  const held = new WindowSpectra(n, spectra.dt, spectra.frames, {
    plane: (p, cell) => spectra.source.plane(p, cell),
    listed: () => listed,
    top: () => top,
  })
  const reads = cellsRead(held, later, limit)
  return { kind: 'held', field: 0, stability, listed, top, ...(await gathered(spectra, later, reads, limit)) }
}

/**
 * What the GPU backend gathers of a window for `reads`: each list's power sums, then each cell read at
 * its mode's bin (the bin detection asks for, found by detecting once on the planes) with its planes
 * 0, 2 bin and 2 bin + 1.
 */
async function gathered(spectra: WindowSpectra, later: Later, reads: WindowReads, limit: number): Promise<HeldReads> {
  const cells = spectra.n * spectra.n
  const lists = new ListIndex()
  const listed = Array.from(reads.ends, (end, l) => reads.lists.subarray(l ? reads.ends[l - 1] : 0, end))
  for (const list of listed) lists.add(list)
  const bins = new Map<number, number>()
  const asking = new WindowSpectra(spectra.n, spectra.dt, spectra.frames, {
    plane: (p, cell) => spectra.source.plane(p, cell),
    modePlanes: (cell, mode, bin) => void bins.set(lists.get(mode)! * cells + cell, bin),
  })
  await detect(asking, later, limit)
  const powersLength = listed.length * spectra.bins
  const out = sharedFloats(powersLength + 2 * reads.modes.length)
  listed.forEach((list, l) => out.set(spectra.powerSums(list), l * spectra.bins))
  for (let k = 0; k < reads.modes.length; k += 2) {
    const [cell, l] = [reads.modes[k], reads.modes[k + 1]]
    const bin = bins.get(l * cells + cell) ?? 1
    const planes = [bin, spectra.source.plane(0, cell), spectra.source.plane(2 * bin, cell), spectra.source.plane(2 * bin + 1, cell)]
    out.set(planes, powersLength + 2 * k)
  }
  return {
    gathered: out,
    bins: spectra.bins,
    lists: reads.lists,
    ends: reads.ends,
    powersFrom: 0,
    modes: reads.modes,
    modesFrom: powersLength,
  }
}
