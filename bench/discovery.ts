// Discovery: MAP-Elites against random search on the same number of evaluations (QD-score and
// coverage over seeds, 95% bootstrap intervals, three materials); genome evaluations per second, the
// time of a 10 x 12 evolve at N = 96, and recall latency over 10,000 memories.
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { evaluate, RECORD_DT, RECORD_FRAMES } from '../engine/discovery/evaluate.js'
import { type Detector, IN_THREAD, type Window } from '../engine/discovery/detector.js'
import type { Material } from '../engine/contracts/material.js'
import { heldOf } from '../engine/discovery/practice.js'
import { HeldPlanes, type PlaneData, WindowSpectra, windowPlanes } from '../engine/detect/spectra.js'
import { discover, type DiscoveryResult, type SearchKind } from '../engine/discovery/discovery.js'
import { CLASS_NAMES, CLASS_TOKENS } from '../engine/contracts/registry.js'
import { randomGenome } from '../engine/discovery/genome.js'
import { rng } from '../engine/util/rng.js'
import { MaterialCatalog } from '../engine/field/materials.js'
import { findAdapter } from '../engine/gpu/device.js'
import type { GpuFieldBackend } from '../engine/gpu/backend.js'
import { GpuLabeller, labelMaps } from '../engine/gpu/components.js'
import type { GpuContext } from '../engine/gpu/context.js'
import { selectBackend } from '../engine/backends/select.js'
import type { FieldBackend } from '../engine/field/backend.js'
import {
  laterUnit,
  laterUnitsOf,
  cellsRead,
  detect,
  listedComponents,
  listedShapes,
  listedTop,
  rankedComponents,
  shapeSums,
  topLists,
  topModes,
  topSums,
} from '../engine/detect/detect.js'
import { partPlaces } from '../engine/detect/placement.js'
import { NO_CANDIDATES } from '../engine/detect/candidates.js'
import type { FieldShapes } from '../engine/detect/sums.js'
import { nodeGpu } from '../engine/gpu/webgpu.node.js'
import { createNodeEngine } from '../engine/node.js'
import { MemoryRegistryStore, Registry } from '../engine/registry/registry.js'
import { benchEnv } from './env.js'

/** The comparison's scale: the issue's (10 seeds of 1,200 evaluations at N = 96) unless the environment asks for less. */
export function searchScale() {
  const e = benchEnv()
  return {
    seeds: e.CRYSTAL_BENCH_SEEDS ?? 10,
    evaluations: e.CRYSTAL_BENCH_EVALUATIONS ?? 1200,
    size: e.CRYSTAL_BENCH_SIZE ?? 96,
    population: 12,
    /** The three materials compared, or those `CRYSTAL_BENCH_MATERIALS` names (comma-separated). */
    materials: e.CRYSTAL_BENCH_MATERIALS?.split(',').map((m) => m.trim()) ?? ['europium_crystal', 'silicon', 'metamaterial'],
  }
}

export interface Interval {
  mean: number
  low: number
  high: number
}

export interface SearchComparison {
  material: string
  seeds: number
  evaluations: number
  size: number
  qd_score: { map_elites: Interval; random: Interval; difference: Interval }
  coverage: { map_elites: Interval; random: Interval; difference: Interval }
  /** The claim holds when MAP-Elites' interval lies wholly above random search's (the issue's test, stricter than the difference's interval above zero). */
  holds: { qd_score: boolean; coverage: boolean }
  /** Per seed, for a reader who wants the raw figures. */
  runs: {
    seed: number
    search: SearchKind
    qd_score: number
    coverage: number
    seconds: number
    elites_by_class: DiscoveryResult['elites_by_class']
  }[]
}

export interface DiscoveryBenchReport {
  search: SearchComparison[]
  evaluations: {
    backend: 'cpu' | 'gpu'
    population: number
    size: number
    resonate_steps: number
    seconds: number
    evaluations_per_second: number
  }[]
  evolve: { generations: number; population: number; size: number; seconds: number; registered: number }
  recall: { memories: number; size: number; k: number; queries: number; p50_ms: number; p95_ms: number; max_ms: number }
  detection: DetectionCost[]
  skipped: string[]
}

const catalog = new MaterialCatalog()

const meanOf = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length

/** Percentile bootstrap (10,000 resamples, seeded) of the mean of xs, or of mean(xs) - mean(ys). */
export function bootstrap(xs: readonly number[], ys?: readonly number[]): Interval {
  const rand = rng(99)
  const draw = (v: readonly number[]) => meanOf(Array.from(v, () => v[Math.floor(rand() * v.length)]))
  const stats = Array.from({ length: 10_000 }, () => draw(xs) - (ys ? draw(ys) : 0)).sort((a, b) => a - b)
  return { mean: meanOf(xs) - (ys ? meanOf(ys) : 0), low: stats[249], high: stats[9749] }
}

/** One search of the comparison: what a worker thread runs. */
export interface SearchRun {
  material: string
  seed: number
  search: SearchKind
  generations: number
  population: number
  size: number
}

/** Runs one search on a single-threaded CPU engine (the runs themselves share the cores). */
export async function runSearch(r: SearchRun): Promise<SearchComparison['runs'][number]> {
  const t0 = performance.now()
  const result = await discover({
    ...r,
    material: catalog.get(r.material),
    register: false,
    registry: new Registry(new MemoryRegistryStore()),
    open: (o) => createNodeEngine({ ...o, backend: 'cpu', threads: 1 }),
  })
  return {
    seed: r.seed,
    search: r.search,
    qd_score: result.qd_score,
    coverage: result.coverage,
    seconds: (performance.now() - t0) / 1000,
    elites_by_class: result.elites_by_class,
  }
}

function inWorker(r: SearchRun): Promise<SearchComparison['runs'][number]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./search_run.js', import.meta.url), { workerData: r })
    worker.once('message', resolve)
    worker.once('error', reject)
    worker.once(
      'exit',
      (code) => code !== 0 && reject(new Error(`the ${r.search} search of ${r.material}, seed ${r.seed}, stopped with exit code ${code}`)),
    )
  })
}

/** The issue's test: MAP-Elites' interval wholly above random search's. */
const holds = (f: { map_elites: Interval; random: Interval }) => f.map_elites.low > f.random.high

/** Both searches on every seed, as many runs at once as the machine has cores. */
export async function compareSearch(material: string, progress: (what: string) => void): Promise<SearchComparison> {
  const { seeds, evaluations, size, population } = searchScale()
  const queue: SearchRun[] = []
  for (let seed = 1; seed <= seeds; seed++)
    for (const search of ['map_elites', 'random'] as const)
      queue.push({ material, seed, search, generations: Math.ceil(evaluations / population), population, size })
  const runs: SearchComparison['runs'] = []
  const lane = async () => {
    for (let r = queue.shift(); r; r = queue.shift()) {
      progress(`${material}: ${r.search}, seed ${r.seed}/${seeds}`)
      runs.push(await inWorker(r))
    }
  }
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), queue.length) }, lane))
  runs.sort((a, b) => a.seed - b.seed || a.search.localeCompare(b.search))
  const of = (search: SearchKind, k: 'qd_score' | 'coverage') => runs.filter((r) => r.search === search).map((r) => r[k])
  const figures = (k: 'qd_score' | 'coverage') => ({
    map_elites: bootstrap(of('map_elites', k)),
    random: bootstrap(of('random', k)),
    difference: bootstrap(of('map_elites', k), of('random', k)),
  })
  const qd_score = figures('qd_score')
  const coverage = figures('coverage')
  return {
    material,
    seeds,
    evaluations: Math.ceil(evaluations / population) * population,
    size,
    qd_score,
    coverage,
    holds: { qd_score: holds(qd_score), coverage: holds(coverage) },
    runs,
  }
}

async function evaluationRate(backend: 'cpu' | 'gpu') {
  const rand = rng(17)
  const bounds = { min_steps: 600, max_steps: 600 }
  const genomes = Array.from({ length: 32 }, () => randomGenome(rand, bounds))
  const t0 = performance.now()
  await evaluate(genomes, {
    size: 96,
    material: catalog.get('europium_crystal'),
    seed: 1,
    open: (o) => createNodeEngine({ ...o, backend }),
  })
  const seconds = (performance.now() - t0) / 1000
  return { backend, population: 32, size: 96, resonate_steps: 600, seconds, evaluations_per_second: 32 / seconds }
}

export async function recallLatency() {
  const size = 64
  const e = await createNodeEngine({ size, material: 'ideal_resonator', seed: 3 })
  try {
    const syllables = ['ka', 'lo', 'mi', 'ren', 'tu', 'sha', 'vel', 'or', 'quin', 'da', 'pe', 'zor', 'ly', 'an', 'thi', 'bo']
    let s = 5
    const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32
    const word = () => syllables[Math.floor(rand() * 16)] + syllables[Math.floor(rand() * 16)]
    const texts = Array.from({ length: 10_000 }, (_, i) => `${word()} ${word()} ${word()} ${i}`)
    for (let i = 0; i < texts.length; i += 250) {
      await e.writeMany(texts.slice(i, i + 250).map((text) => ({ text })))
      await e.step(5)
    }
    await e.recall(texts[0], 10) // the first query builds the encoding index
    const times: number[] = []
    for (let q = 0; q < 50; q++) {
      const t0 = performance.now()
      await e.recall(texts[(q * 977) % texts.length], 10)
      times.push(performance.now() - t0)
    }
    times.sort((a, b) => a - b)
    return { memories: texts.length, size, k: 10, queries: times.length, p50_ms: times[24], p95_ms: times[47], max_ms: times[49] }
  } finally {
    e.destroy()
  }
}

/**
 * The windows evolve records of `count` random genomes (generator seed `seed`, evaluation seed 1) at side
 * `size` on the CPU backend: the clean fields', then their rerun's under noise.
 */
export async function randomGenomeWindows(material: Material, size: number, count: number, seed: number): Promise<Window[]> {
  const rand = rng(seed)
  const genomes = Array.from({ length: count }, () => randomGenome(rand, { min_steps: 60, max_steps: 200 }))
  const windows: Window[] = []
  const keeping: Detector = {
    ...IN_THREAD,
    first: (w, limit) => {
      windows.push(...w)
      return IN_THREAD.first(w, limit)
    },
  }
  await evaluate(genomes, { size, material, seed: 1, open: (o) => createNodeEngine({ ...o, backend: 'cpu' }), detector: keeping })
  return windows
}

/** Detection's host work per window on the GPU path, on one thread (the best of REPEATS passes). */
export interface DetectionCost {
  material: string
  size: number
  windows: number
  /** Naming the cells whose planes detection reads (cellsRead), from the stability maps. */
  cells_ms: number
  /** Finding each window's first structure from the stability maps and what was gathered. */
  structures_ms: number
  /**
   * Windows that still name lists or cells to gather (detection reads more than the device read of
   * their first parts with the window); the control, `named_unserved`: those that name any where the
   * device reads nothing with the window. A batch of F such windows reads its gather unless none names
   * any: at a share p, 1 - (1 - p)^F of batches.
   */
  named: number
  named_unserved: number
  /** How the perturbation's plans meet detection's first structures (perturbationPlans). */
  plans: PerturbationPlans
  /** Of naming the cells: a map's components found and ranked by mass (partsOf's list), on the host. */
  components_ms: number
  /** A map's listed components' shapes and later sums as integers (shapeSums, what measure takes; laterUnitsOf, sustain's), on the host. */
  shapes_ms: number
  /**
   * The same on the device (engine/gpu/components.ts labelMaps): one call over `maps` maps (the windows'
   * repeated to a population of 1,000's 2,000 on a hardware adapter), its upload, kernels and read, a map;
   * `same`: every window's list equal to the host's. `shapes_ms` and `shapes_same`: the same with each
   * listed component's shape and later sums summed too, and the first parts ranked (equal to listedShapes' and
   * listedTop's). `places_ms` and `places_same`: the same with where the first parts' reads fall and
   * their lists and regions made too (equal to partPlaces' and topLists'). Absent without a WebGPU adapter.
   */
  device?: {
    adapter: string
    maps: number
    ms: number
    same: boolean
    shapes_ms: number
    shapes_same: boolean
    places_ms: number
    places_same: boolean
    /**
     * Labelling with the places, lists and regions, and with the first parts' power sums and cells at
     * their modes too (`sums_ms`), the maps and planes already on the device (firstReadsCost); `sums_same`:
     * equal to topSums' and topModes' for every window.
     */
    regions_ms: number
    sums_ms: number
    sums_same: boolean
  }
}

/**
 * How the GPU path's perturbation plans meet detection's first structure, window by window (docs/detection.md,
 * "Every candidate perturbed, before detection names a cell"): the copies its candidates make
 * (the table the device makes where it ranks the parts: candidateTable's), the windows whose structure lay past them and was the
 * part cellsRead plans on (the second batch's), those where it was neither (a read more, `again`), and
 * the windows where detection found nothing but some candidate was perturbed. The control,
 * `rank_zero_wrong`: windows whose structure is not the part of most mass, which a plan on that part
 * alone would have perturbed wrong.
 */
export interface PerturbationPlans {
  copies: number
  past: number
  again: number
  needless: number
  rank_zero_wrong: number
}

/** PerturbationPlans over `windows` (their `held` forms, as the GPU backend holds them: heldOf) at side n. */
async function perturbationPlans(windows: readonly Window[], held: readonly Extract<PlaneData, { kind: 'held' }>[], n: number) {
  const plans: PerturbationPlans = { copies: 0, past: 0, again: 0, needless: 0, rank_zero_wrong: 0 }
  for (const [k, w] of windows.entries()) {
    const top = held[k].top
    const { parts, complete } = top?.candidates ?? NO_CANDIDATES
    plans.copies += parts.length
    const [found] = await detect(w.spectra, w.later, 1)
    if (!found) {
      if (parts.length) plans.needless++
      continue
    }
    const root = found.cells[0]
    if (top?.parts[0]?.root !== root) plans.rank_zero_wrong++
    if (parts.some((p) => p.root === root)) continue
    const { planned } = cellsRead(new WindowSpectra(n, RECORD_DT, RECORD_FRAMES, HeldPlanes.of(held[k])), w.later, 1)
    if (!complete && planned?.cell === root) plans.past++
    else plans.again++
  }
  return plans
}

/** A value as text to compare, its objects' keys sorted: the device's and the twin's objects list theirs in other orders. */
const canonical = (value: unknown) =>
  JSON.stringify(value, (_, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  )

/** A map's shapes as text to compare: its total's units and its parts in their order. */
const shapesText = (shapes: FieldShapes | undefined) =>
  JSON.stringify(shapes && [shapes.units, ...shapes.parts, shapes.later?.unit, ...(shapes.later?.parts ?? [])])

/** The device's part of detectionCost: where a WebGPU adapter is, a backend on it for labelMaps. */
interface DeviceLabelling {
  adapter: string
  software: boolean
  backend: FieldBackend & GpuContext
}

/**
 * What the GPU backend's evolve asks of its detection pool, per window: real windows (the clean fields
 * and their rerun of 48 random genomes at N = 96, recorded on the CPU backend), held as the GPU
 * backend holds them once gathered (practice.ts heldOf), each pass on fresh copies of their maps, so
 * that no part is measured once for all passes.
 */
export async function detectionCost(material: string, device?: DeviceLabelling): Promise<DetectionCost> {
  const REPEATS = 5
  const size = 96
  const windows = await randomGenomeWindows(catalog.get(material), size, 48, 7)
  const held = await Promise.all(windows.map((w) => heldOf(w, 1)))
  const naming = (r: { ends: ArrayLike<number>; modes: ArrayLike<number> }) => r.ends.length > 0 || r.modes.length > 0
  const named = held.filter(naming).length
  const named_unserved = windows.filter((w) => naming(cellsRead(w.spectra, w.later, 1))).length
  const plans = await perturbationPlans(windows, held, size)
  const best = { cells: Infinity, structures: Infinity }
  for (let pass = 0; pass < REPEATS; pass++) {
    const fresh = held.map((d, k) => ({
      spectra: new WindowSpectra(size, RECORD_DT, RECORD_FRAMES, HeldPlanes.of({ ...d, stability: d.stability.slice() })),
      later: windows[k].later,
    }))
    const t0 = performance.now()
    await IN_THREAD.cellsRead(fresh, 1)
    const t1 = performance.now()
    await IN_THREAD.first(fresh, 1)
    const t2 = performance.now()
    best.cells = Math.min(best.cells, (t1 - t0) / held.length)
    best.structures = Math.min(best.structures, (t2 - t1) / held.length)
  }
  // the maps as stability() makes them from the sums held
  const maps = held.map((d) => Float32Array.from(d.stability, (v) => v / RECORD_FRAMES))
  let components_ms = Infinity
  for (let pass = 0; pass < REPEATS; pass++) {
    const t0 = performance.now()
    for (const map of maps) rankedComponents(map, size)
    components_ms = Math.min(components_ms, (performance.now() - t0) / maps.length)
  }
  const listed = maps.map((map) => rankedComponents(map, size).map(({ cells }) => cells))
  let shapes_ms = Infinity
  for (let pass = 0; pass < REPEATS; pass++) {
    const t0 = performance.now()
    listed.forEach((parts, k) => {
      const sums = windows[k].later.sums
      const unit = laterUnit(sums)
      for (const cells of parts) {
        shapeSums(cells, size)
        laterUnitsOf(cells, sums, unit)
      }
    })
    shapes_ms = Math.min(shapes_ms, (performance.now() - t0) / maps.length)
  }
  const cost = {
    ...{ material, size, windows: held.length, named, named_unserved, plans },
    ...{ cells_ms: best.cells, structures_ms: best.structures, components_ms, shapes_ms },
  }
  if (!device) return cost
  const count = device.software ? maps.length : 2000
  const all = new Float32Array(count * size * size)
  // and each window's later sums, summed over its components with their shapes
  const later = new Float32Array(count * size * size)
  // every window's later sums took as many samples (observeHeld's)
  const { taken } = windows[0].later
  for (let k = 0; k < count; k++) {
    all.set(maps[k % maps.length], k * size * size)
    later.set(windows[k % maps.length].later.sums, k * size * size)
  }
  const twins = maps.map((map, k) => [
    JSON.stringify(Array.from(listedComponents(map, size) ?? [])),
    shapesText(listedShapes(map, size, windows[k].later.sums)),
    canonical(listedTop(map, size, windows[k].later)),
  ])
  const time = { lists: Infinity, shapes: Infinity, places: Infinity }
  let [same, shapes_same, places_same] = [true, true, true]
  for (let pass = 0; pass < REPEATS; pass++)
    for (const mode of ['lists', 'shapes', 'places'] as const) {
      const [shapes, places] = [mode !== 'lists', mode === 'places']
      const t0 = performance.now()
      const got = await labelMaps(device.backend, all, size, { shapes, ...(shapes && { later: { sums: later, taken } }), places })
      time[mode] = Math.min(time[mode], (performance.now() - t0) / count)
      // the twins' lists (listedComponents), shapes (listedShapes), places (partPlaces) and first parts' lists (topLists) for every window
      if (shapes) shapes_same &&= maps.every((_, k) => shapesText(got[k].shapes) === twins[k][1] && canonical(got[k].top) === twins[k][2])
      if (places)
        places_same &&= maps.every(
          (map, k) =>
            JSON.stringify(got[k].places) === JSON.stringify(got[k].top?.parts.map((p) => partPlaces(size, p.shape))) &&
            JSON.stringify(got[k].lists) === JSON.stringify(topLists(map, size, got[k].top)),
        )
      same &&= maps.every((_, k) => JSON.stringify(Array.from(got[k].listed ?? [])) === twins[k][0])
    }
  return {
    ...cost,
    device: {
      adapter: device.adapter,
      maps: count,
      ms: time.lists,
      same,
      shapes_ms: time.shapes,
      shapes_same,
      places_ms: time.places,
      places_same,
      // at most 1,000 fields here: their planes are 1.3 GB on the host too
      ...(await firstReadsCost(device.backend, windows, maps, Math.min(count, 1000), REPEATS)),
    },
  }
}

/**
 * What the first parts' detection reads cost on the device (docs/detection.md item 3), `count` maps of
 * the windows' repeated: labelling with the shapes, places, lists and regions, and with their power sums
 * and cells at their modes too (first_sums, first_modes), each a map, the maps and planes already on the
 * device (uploaded once, as the recorder holds them) and one word read to wait on; and whether the
 * sums and modes equal the twins' (topSums, topModes) for every window.
 */
async function firstReadsCost(
  backend: FieldBackend & GpuContext,
  windows: Window[],
  maps: Float32Array[],
  count: number,
  repeats: number,
): Promise<{ regions_ms: number; sums_ms: number; sums_same: boolean }> {
  const { device, transfers } = backend
  const size = windows[0].spectra.n
  const cells = size * size
  const frames = RECORD_FRAMES
  const planes = windowPlanes(frames)
  // the unique windows' planes ([plane][field][cell]), then `count` fields of them repeated
  const planesOf = (fields: number) => {
    const out = new Float32Array(planes * fields * cells)
    for (let f = 0; f < fields; f++) {
      const spectra = windows[f % windows.length].spectra
      for (let c = 0; c < cells; c++) {
        const row = spectra.planesOf(c)
        for (let p = 0; p < planes; p++) out[(p * fields + f) * cells + c] = p === 1 ? maps[f % maps.length][c] * frames : row[p]
      }
    }
    return out
  }
  const unique = planesOf(maps.length)
  const got = await labelMaps(backend, Float32Array.from(maps.flatMap((m) => [...m])), size, {
    shapes: true,
    places: true,
    window: { planes: unique, frames },
  })
  const sums_same = got.every(({ top, lists, sums }, k) => {
    if (!top || !lists) return sums === undefined
    const spec = windows[k].spectra
    return (
      JSON.stringify(sums?.map((p) => [...p.sums])) === JSON.stringify(topSums(spec, top, lists).map((p) => [...p])) &&
      JSON.stringify(sums?.map((p) => [...p.modes])) === JSON.stringify(topModes(spec, top, lists).map((p) => [...p]))
    )
  })
  // on the device once: the maps, the later sums (the maps again: their cost is the shapes'), the planes in chunks
  const all = planesOf(count)
  const planeBytes = count * cells * 4
  const perChunk = Math.max(1, Math.floor(Math.min(device.limits.maxBufferSize, backend.bindingBytes) / planeBytes))
  const made: GPUBuffer[] = []
  const upload = (data: Float32Array) => {
    const buffer = device.createBuffer({ size: data.byteLength, usage: 0x80 | 0x4 | 0x8 })
    transfers.write(buffer, 0, data)
    made.push(buffer)
    return buffer
  }
  const chunks = Array.from({ length: Math.ceil(planes / perChunk) }, (_, c) =>
    upload(all.subarray(c * perChunk * count * cells, Math.min(planes, (c + 1) * perChunk) * count * cells)),
  )
  const mapsOn = { buffer: chunks[Math.floor(1 / perChunk)], base: (1 % perChunk) * count * cells, stride: cells, scale: 1 / frames }
  const labeller = new GpuLabeller(backend)
  const time = { regions: Infinity, sums: Infinity }
  try {
    for (let pass = 0; pass < repeats; pass++)
      for (const mode of ['regions', 'sums'] as const) {
        const t0 = performance.now()
        const encoder = device.createCommandEncoder()
        labeller.encode(encoder, mapsOn, size, count, {
          shapes: true,
          later: { buffer: mapsOn.buffer, base: mapsOn.base, stride: cells, taken: 1 },
          places: true,
          ...(mode === 'sums' && { window: { chunks, perChunk, planes, frames } }),
        })
        transfers.submit(encoder)
        await transfers.readRanges([{ src: labeller.out as GPUBuffer, offset: 0, bytes: 4 }], () => backend.failure())
        time[mode] = Math.min(time[mode], (performance.now() - t0) / count)
      }
  } finally {
    labeller.destroy()
    for (const buffer of made) transfers.destroy(buffer)
  }
  return { regions_ms: time.regions, sums_ms: time.sums, sums_same }
}

export async function runDiscoveryBench(progress: (what: string) => void = () => {}): Promise<DiscoveryBenchReport> {
  const skipped: string[] = []
  const search: SearchComparison[] = []
  for (const material of searchScale().materials) search.push(await compareSearch(material, progress))
  progress('genome evaluations (cpu)')
  const evaluations = [await evaluationRate('cpu')]
  const adapter = await findAdapter(await nodeGpu().catch(() => undefined))
  if (adapter && !adapter.software) {
    progress('genome evaluations (gpu)')
    evaluations.push(await evaluationRate('gpu'))
  } else skipped.push(`gpu evaluations: ${adapter ? 'software adapter only (minutes per population)' : 'no WebGPU adapter'}`)
  progress('evolve 10 x 12 at N = 96')
  const t0 = performance.now()
  const run = await discover({
    material: catalog.get('europium_crystal'),
    generations: 10,
    population: 12,
    size: 96,
    seed: 5,
    registry: new Registry(new MemoryRegistryStore()),
    open: (o) => createNodeEngine(o),
  })
  const evolve = { generations: 10, population: 12, size: 96, seconds: (performance.now() - t0) / 1000, registered: run.registered.length }
  progress('recall over 10,000 memories')
  const recall = await recallLatency()
  const detection: DetectionCost[] = []
  const device = adapter && (await selectBackend({ backend: 'gpu', n: 96, fields: 1, gpu: nodeGpu }).catch(() => undefined))
  try {
    for (const material of searchScale().materials) {
      progress(`detection per window on the GPU path, ${material}`)
      const labelling = adapter &&
        device && { adapter: adapter.name, software: adapter.software, backend: device.backend as GpuFieldBackend }
      detection.push(await detectionCost(material, labelling || undefined))
    }
  } finally {
    device?.backend.destroy()
  }
  return { search, evaluations, evolve, recall, detection, skipped }
}

const ci = (i: Interval, digits: number) => `${i.mean.toFixed(digits)} (${i.low.toFixed(digits)}..${i.high.toFixed(digits)})`

export function discoveryTables(r: DiscoveryBenchReport): Record<string, Record<string, string | number>[]> {
  const s = r.search[0]
  return {
    [`MAP-Elites against random search (same evaluations; ${s ? `${s.seeds} seeds, ${s.evaluations} evaluations, N = ${s.size}` : ''}; 95% bootstrap intervals)`]:
      r.search.flatMap((c) => [
        {
          claim: `QD-score, ${c.material}`,
          figure: ci(c.qd_score.map_elites, 2),
          'control: random search': ci(c.qd_score.random, 2),
          difference: ci(c.qd_score.difference, 2),
          holds: c.holds.qd_score ? 'yes' : 'no',
        },
        {
          claim: `coverage, ${c.material}`,
          figure: ci(c.coverage.map_elites, 3),
          'control: random search': ci(c.coverage.random, 3),
          difference: ci(c.coverage.difference, 3),
          holds: c.holds.coverage ? 'yes' : 'no',
        },
      ]),
    'elites per class, summed over the seeds (how many cells of each class a search filled)': r.search.flatMap((c) =>
      (['map_elites', 'random'] as const).map((search) => ({
        material: c.material,
        search,
        ...Object.fromEntries(
          CLASS_TOKENS.map((k) => [
            CLASS_NAMES[k],
            c.runs.filter((r) => r.search === search).reduce((n, r) => n + (r.elites_by_class[k] ?? 0), 0),
          ]),
        ),
      })),
    ),
    'genome evaluations (N = 96, 600 steps, population 32)': r.evaluations.map((e) => ({
      backend: e.backend,
      seconds: e.seconds.toFixed(2),
      'evaluations/s': e.evaluations_per_second.toFixed(2),
    })),
    'evolve (10 generations of 12, N = 96, europium_crystal)': [{ seconds: r.evolve.seconds.toFixed(2), registered: r.evolve.registered }],
    "detection's host work per window on the GPU path (one thread; the pool's workers share a generation's windows)": r.detection.map(
      (d) => ({
        material: d.material,
        windows: `${d.windows} at N = ${d.size}`,
        'naming more to gather (control: nothing read with the window)': `${d.named} (${d.named_unserved})`,
        "perturbation's copies; structures past the candidates, none of the parts perturbed; needless (control: part of most mass wrong)": `${d.plans.copies}; ${d.plans.past}, ${d.plans.again}; ${d.plans.needless} (${d.plans.rank_zero_wrong})`,
        'cells named, ms': d.cells_ms.toFixed(3),
        'structures found, ms': d.structures_ms.toFixed(3),
        'of cells named: components ranked, ms': d.components_ms.toFixed(3),
        'the same on the device, ms a map': d.device
          ? `${d.device.ms.toFixed(3)} (${d.device.maps} maps${d.device.same ? '' : ', NOT the same'}; ${d.device.adapter})`
          : 'no adapter',
        "the listed components' shapes and later sums as integers, ms": d.shapes_ms.toFixed(3),
        'with the shapes on the device, ms a map': d.device
          ? `${d.device.shapes_ms.toFixed(3)}${d.device.shapes_same ? '' : ' (NOT the same)'}`
          : 'no adapter',
        "and the first parts' places and lists, ms a map": d.device
          ? `${d.device.places_ms.toFixed(3)}${d.device.places_same ? '' : ' (NOT the same)'}`
          : 'no adapter',
        "the same, already on the device; and with the first parts' power sums and modes, ms a map": d.device
          ? `${d.device.regions_ms.toFixed(3)}; ${d.device.sums_ms.toFixed(3)}${d.device.sums_same ? '' : ' (NOT the same)'}`
          : 'no adapter',
      }),
    ),
    'recall top-10 over 10,000 memories (N = 64)': [
      { p50_ms: r.recall.p50_ms.toFixed(1), p95_ms: r.recall.p95_ms.toFixed(1), max_ms: r.recall.max_ms.toFixed(1) },
    ],
  }
}
