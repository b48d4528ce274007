// The memory benchmark (`crystal bench memory`, and part of `npm run bench`); protocol in
// docs/recall.md. Each claim beside its controls, measured in the same run (DESIGN.md section 13):
//   margin    probe of the written texts minus the best of the distractors, over 30 seeds, for the
//             medium against a fair static store (the same encodings summed and read the same way)
//             and the field erased; delays 300 and 3,000; ideal_resonator, europium at 4 K and 300 K
//   dephasing europium kept at 4 K against the same writes warmed to 300 K (paired by seed)
//   capacity  memories at which exact top-1 recall falls below 95%, by N, against the field erased
import { textWavefront } from '../engine/encode/text.js'
import type { Engine } from '../engine/field/engine.js'
import { createNodeEngine } from '../engine/node.js'
import { negLaplacian } from '../engine/recall/adjoint.js'
import { MemoryReader } from '../engine/recall/recall.js'
import { benchEnv } from './env.js'

export const MEMORY_BENCH = {
  size: 64,
  seeds: 30,
  written: 8,
  distractors: 40,
  write_gap: 10,
  delays: [300, 3000],
  media: [
    { material: 'ideal_resonator', temperature_k: 0 },
    { material: 'europium_crystal', temperature_k: 4 },
    { material: 'europium_crystal', temperature_k: 300 },
  ],
  capacity: {
    sizes: [64, 128, 256],
    long_sizes: [512],
    noise: [0, 0.001],
    queries: 40,
    target: 0.95,
    growth: 1.5,
    material: 'ideal_resonator',
  },
} as const

/** A difference's mean over seeds and its 95% interval (Student t). */
export interface Interval {
  mean: number
  low: number
  high: number
}

export interface MarginRow {
  material: string
  temperature_k: number
  delay: number
  medium: number
  static_store: number
  erased: number
  vs_static: Interval
  vs_erased: Interval
  /** The claim (medium beats the control) holds where the interval clears zero. */
  beats_static: boolean
  beats_erased: boolean
}

/** Cold europium's margin against the same writes dephased (warmed to 300 K), paired by seed. */
export interface DephasingRow {
  delay: number
  cold: number
  warm: number
  cold_vs_warm: Interval
  holds: boolean
}

export interface CapacityRow {
  size: number
  noise: number
  /** Largest number of memories tried with exact top-1 >= 95% (0: not even the first). */
  capacity: number
  /** Exact top-1 at each number of memories tried. */
  curve: { memories: number; top1: number }[]
  /** The field erased at the first number tried: top-1 of the same queries. */
  erased_top1: number
  /** What recall itself estimated at the last number tried. */
  estimated_capacity: number | null
}

export interface MemoryBenchReport {
  protocol: typeof MEMORY_BENCH
  margins: MarginRow[]
  dephasing: DephasingRow[]
  capacity: CapacityRow[]
  seconds: number
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tu', 'sha', 'vel', 'or', 'quin', 'da', 'pe', 'zor', 'ly', 'an', 'thi', 'bo']

/** Distinct four-word texts from a syllable alphabet (words recur across texts, as in speech). */
function texts(count: number, seed: number): string[] {
  let s = seed >>> 0
  const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32
  const word = () => SYLLABLES[Math.floor(rand() * 16)] + SYLLABLES[Math.floor(rand() * 16)]
  const out = new Set<string>()
  while (out.size < count) out.add([word(), word(), word(), word()].join(' '))
  return [...out]
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / (xs.length || 1)

/** Mean and 95% interval; t quantile by the Cornish-Fisher expansion (2.043 at 29 df, exact 2.045). */
export function interval(xs: number[]): Interval {
  const m = mean(xs)
  const df = xs.length - 1
  const sd = Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(1, df))
  const z = 1.959964
  const t = z + (z ** 3 + z) / (4 * Math.max(1, df))
  const half = (t * sd) / Math.sqrt(xs.length)
  return { mean: m, low: m - half, high: m + half }
}

/** Written text's score minus the best distractor's, averaged over the written texts. */
function margin(scores: number[], written: number): number {
  const best = Math.max(...scores.slice(written))
  return mean(scores.slice(0, written).map((s) => s - best))
}

async function writeApart(e: Engine, items: readonly string[], gap: number): Promise<void> {
  for (const text of items) {
    await e.write(text)
    await e.step(gap)
  }
}

async function marginSeed(
  medium: (typeof MEMORY_BENCH.media)[number],
  delay: number,
  seed: number,
): Promise<{ medium: number; static_store: number; erased: number }> {
  const { size: n, written, distractors, write_gap } = MEMORY_BENCH
  const all = texts(written + distractors, seed * 7919 + delay)
  const e = await createNodeEngine({ size: n, material: medium.material, temperature_k: 4, seed, timeline_interval: 0 })
  try {
    await writeApart(e, all.slice(0, written), write_gap)
    e.setTemperature(medium.temperature_k) // warmed (or not) after writing, for the whole delay
    await e.step(delay)
    const reader = new MemoryReader(e)
    const live = (await reader.probeMany(all, 0)).map((p) => p.resonance)
    // the fair static store: the same encodings summed, no dynamics, read with the same energy form
    const waves = await Promise.all(all.map((t) => textWavefront(t, n)))
    const store = new Float32Array(n * n)
    for (const w of waves.slice(0, written)) for (let i = 0; i < store.length; i++) store[i] += w[i]
    const qs = negLaplacian(store, n)
    const stored = waves.map((w) => {
      const qw = negLaplacian(w, n)
      return w.reduce((s, v, i) => s + v * qs[i], 0) / w.reduce((s, v, i) => s + v * qw[i], 0)
    })
    await e.scale(new Float32Array(n * n))
    const erased = (await reader.probeMany(all, 0)).map((p) => p.resonance)
    return { medium: margin(live, written), static_store: margin(stored, written), erased: margin(erased, written) }
  } finally {
    e.destroy()
  }
}

async function capacityRow(size: number, noise: number, say: (line: string) => void): Promise<CapacityRow> {
  const { queries, target, growth, material } = MEMORY_BENCH.capacity
  const e = await createNodeEngine({ size, material, noise, seed: 1, timeline_interval: 0 })
  const reader = new MemoryReader(e)
  const pool = texts(20_000, size * 31 + Math.round(noise * 1e6))
  const curve: CapacityRow['curve'] = []
  let erased_top1 = NaN
  let estimated: number | null = null
  try {
    const top1 = async (m: number) => {
      const asked = Array.from({ length: queries }, (_, q) => pool[Math.floor(((q + 0.5) * m) / queries)])
      const results = await reader.recallMany(asked, 1, 0)
      estimated = results[0].capacity
      return mean(results.map((r, q) => (r.hits[0]?.text === asked[q] ? 1 : 0)))
    }
    let m = Math.max(queries, Math.round((size * size) / 256))
    let written = 0
    for (;;) {
      await writeApart(e, pool.slice(written, m), MEMORY_BENCH.write_gap)
      written = m
      const rate = await top1(m)
      curve.push({ memories: m, top1: rate })
      say(`  capacity N = ${size}, noise ${noise}: ${m} memories, top-1 ${rate.toFixed(3)}`)
      if (Number.isNaN(erased_top1)) {
        // the control: the same queries on a copy of this field erased
        const copy = await createNodeEngine({ size, material, seed: 1, timeline_interval: 0 })
        try {
          await copy.resume({
            u: new Float32Array(size * size),
            prev: new Float32Array(size * size),
            step_count: e.step_count,
            memories: e.memories,
            encoding: e.encoding,
          })
          const asked = Array.from({ length: queries }, (_, q) => pool[Math.floor(((q + 0.5) * m) / queries)])
          erased_top1 = mean((await new MemoryReader(copy).recallMany(asked, 1, 0)).map((r, q) => (r.hits[0]?.text === asked[q] ? 1 : 0)))
        } finally {
          copy.destroy()
        }
      }
      if (rate < target || m >= pool.length) break
      m = Math.round(m * growth)
    }
  } finally {
    e.destroy()
  }
  const held = curve.filter((c) => c.top1 >= target)
  return { size, noise, capacity: held.length ? held[held.length - 1].memories : 0, curve, erased_top1, estimated_capacity: estimated }
}

export async function runMemoryBench(say: (line: string) => void = () => {}): Promise<MemoryBenchReport> {
  // read first: a bad value stops the benchmark before its half hour, not after
  const long = benchEnv().CRYSTAL_BENCH_LONG === '1'
  const t0 = performance.now()
  const margins: MarginRow[] = []
  const europium = new Map<string, number[]>()
  for (const medium of MEMORY_BENCH.media) {
    for (const delay of MEMORY_BENCH.delays) {
      const runs = []
      for (let seed = 1; seed <= MEMORY_BENCH.seeds; seed++) runs.push(await marginSeed(medium, delay, seed))
      if (medium.material === 'europium_crystal')
        europium.set(
          `${medium.temperature_k}/${delay}`,
          runs.map((r) => r.medium),
        )
      const vs_static = interval(runs.map((r) => r.medium - r.static_store))
      const vs_erased = interval(runs.map((r) => r.medium - r.erased))
      margins.push({
        material: medium.material,
        temperature_k: medium.temperature_k,
        delay,
        medium: mean(runs.map((r) => r.medium)),
        static_store: mean(runs.map((r) => r.static_store)),
        erased: mean(runs.map((r) => r.erased)),
        vs_static,
        vs_erased,
        beats_static: vs_static.low > 0,
        beats_erased: vs_erased.low > 0,
      })
      say(
        `  margin ${medium.material} ${medium.temperature_k} K, delay ${delay}: medium ${margins.at(-1)!.medium.toFixed(3)}, static ${margins.at(-1)!.static_store.toFixed(3)}`,
      )
    }
  }
  // the texts depend on the seed and the delay only, so the 4 K and 300 K runs pair by seed
  const dephasing = MEMORY_BENCH.delays.map((delay): DephasingRow => {
    const [cold, warm] = [europium.get(`4/${delay}`)!, europium.get(`300/${delay}`)!]
    const cold_vs_warm = interval(cold.map((c, i) => c - warm[i]))
    return { delay, cold: mean(cold), warm: mean(warm), cold_vs_warm, holds: cold_vs_warm.low > 0 }
  })
  const capacity: CapacityRow[] = []
  // N = 512 takes half an hour on 2 cores: only with CRYSTAL_BENCH_LONG=1
  const sizes = [...MEMORY_BENCH.capacity.sizes, ...(long ? MEMORY_BENCH.capacity.long_sizes : [])]
  for (const size of sizes)
    for (const noise of MEMORY_BENCH.capacity.noise) if (noise === 0 || size === 128) capacity.push(await capacityRow(size, noise, say))
  return { protocol: MEMORY_BENCH, margins, dephasing, capacity, seconds: (performance.now() - t0) / 1000 }
}

const ci = (x: Interval) => `${x.mean >= 0 ? '+' : ''}${x.mean.toFixed(3)} (${x.low.toFixed(3)}..${x.high.toFixed(3)})`

/** Rows in the house format: claim, figure, control, difference with its interval, holds. */
export function memoryTable(r: MemoryBenchReport): Record<string, string | number>[] {
  const rows: Record<string, string | number>[] = []
  for (const m of r.margins) {
    const claim = `identity margin, ${m.material} ${m.temperature_k} K, delay ${m.delay}`
    rows.push({
      claim,
      figure: m.medium.toFixed(3),
      control: `fair static store: ${m.static_store.toFixed(3)}`,
      'difference (95% CI)': ci(m.vs_static),
      holds: m.beats_static ? 'yes' : 'no',
    })
    rows.push({
      claim,
      figure: m.medium.toFixed(3),
      control: `field erased: ${m.erased.toFixed(3)}`,
      'difference (95% CI)': ci(m.vs_erased),
      holds: m.beats_erased ? 'yes' : 'no',
    })
  }
  for (const d of r.dephasing) {
    rows.push({
      claim: `identity margin, europium 4 K, delay ${d.delay}`,
      figure: d.cold.toFixed(3),
      control: `dephased (warmed to 300 K): ${d.warm.toFixed(3)}`,
      'difference (95% CI)': ci(d.cold_vs_warm),
      holds: d.holds ? 'yes' : 'no',
    })
  }
  for (const c of r.capacity) {
    const first = c.curve[0]
    rows.push({
      claim: `capacity (exact top-1 >= 95%), N = ${c.size}, noise ${c.noise}`,
      figure: `${c.capacity} memories`,
      control: `field erased: top-1 ${c.erased_top1.toFixed(2)} at ${first.memories}`,
      'difference (95% CI)': `top-1 ${first.top1.toFixed(2)} vs ${c.erased_top1.toFixed(2)} at ${first.memories}`,
      holds: c.capacity > 0 && first.top1 > c.erased_top1 ? 'yes' : 'no',
    })
  }
  return rows
}
