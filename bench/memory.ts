// The memory benchmark (`crystal bench memory`, and part of `npm run bench`); protocol in
// docs/recall.md. Over 10 seeds on ideal_resonator at N = 64 with a delay of 300 steps, it scores
// three ways of reading a text back out of the evolved field:
//   medium  the text's encoding evolved through the same medium for the same delay (like with like)
//   static  the raw encoding (no evolution)
//   blur    the encoding blurred with a 3 x 3 box BLUR_PASSES times (diffusion as a stand-in for dynamics)
// and reports identity margin, rejection of unrelated texts and noise robustness (from the probe's
// resonance), and capacity: the share of M writes that come first among the distractors when the
// field is read as a superposition of all candidates (least squares), and, for comparison, when each
// candidate is correlated alone (matched filter).
import { textWavefront } from '../engine/encode/text.js'
import { boxBlur } from '../engine/field/blur.js'
import { createNodeEngine } from '../engine/node.js'
import { prepare, resonanceOf, type Prepared } from '../engine/recall/recall.js'
import { superpositionWeights } from '../engine/recall/superposition.js'

export const MEMORY_BENCH = { material: 'ideal_resonator', size: 64, delay: 300, seeds: 10, distractors: 100, unrelated: 100, capacity_writes: 8, noise_levels: [0, 0.001, 0.003, 0.01] } as const
export const BLUR_PASSES = 30
export const MODELS = ['medium', 'static', 'blur'] as const
export type Model = (typeof MODELS)[number]

export interface ModelScores {
  identity_margin: number
  unrelated_mean_resonance: number
  /** Share of unrelated texts resonating below half of what the written text does. */
  rejection_rate: number
  noise: { noise: number; margin: number }[]
  /** Superposition read-out (least squares over all candidates). */
  capacity: number
  /** Matched-filter read-out (each candidate's resonance alone), for comparison. */
  capacity_matched_filter: number
}

export interface MemoryBenchReport {
  protocol: typeof MEMORY_BENCH & { blur_passes: number }
  models: Record<Model, ModelScores>
  seconds: number
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tu', 'sha', 'vel', 'or', 'quin', 'da', 'pe', 'zor', 'ly', 'an', 'thi', 'bo']
const OTHER = ['gru', 'fex', 'wim', 'pax', 'hod', 'nug', 'jex', 'cob', 'yup', 'dov', 'kib', 'sug']

/** Four-word texts from a syllable alphabet; unrelated texts use a disjoint alphabet. */
function texts(count: number, seed: number, alphabet: readonly string[]): string[] {
  let s = seed >>> 0
  const rand = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32)
  const word = () => alphabet[Math.floor(rand() * alphabet.length)] + alphabet[Math.floor(rand() * alphabet.length)]
  const out = new Set<string>()
  while (out.size < count) out.add([word(), word(), word(), word()].join(' '))
  return [...out]
}

/** Evolves each pattern alone through the medium for `delay` steps: one batch, one field each. */
async function evolveAll(patterns: Float32Array[], seed: number): Promise<Float32Array[]> {
  const { size, material, delay } = MEMORY_BENCH
  const e = await createNodeEngine({ size, fields: patterns.length, material, seed, timeline_interval: 0 })
  try {
    for (const [f, p] of patterns.entries()) await e.inject(p, f)
    await e.step(delay)
    const { u } = await e.read()
    return patterns.map((_, f) => u.slice(f * size * size, (f + 1) * size * size))
  } finally {
    e.destroy()
  }
}

/** The live medium after the delay, with the given texts written at its start. */
async function medium(written: string[], seed: number, noise: number): Promise<Float32Array> {
  const { size, material, delay } = MEMORY_BENCH
  const e = await createNodeEngine({ size, material, seed, noise, timeline_interval: 0 })
  try {
    await e.writeMany(written.map((text) => ({ text })))
    await e.step(delay)
    return (await e.read()).u
  } finally {
    e.destroy()
  }
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / (xs.length || 1)

export async function runMemoryBench(onSeed?: (seed: number) => void): Promise<MemoryBenchReport> {
  const t0 = performance.now()
  const { size: n, seeds, distractors, unrelated, capacity_writes, noise_levels } = MEMORY_BENCH
  const acc = Object.fromEntries(
    MODELS.map((m) => [m, { margin: [] as number[], unrelated: [] as number[], rejected: [] as number[], noise: noise_levels.map(() => [] as number[]), capacity: [] as number[], matched: [] as number[] }]),
  )
  for (let seed = 1; seed <= seeds; seed++) {
    const pool = texts(1 + capacity_writes + distractors, seed * 7919, SYLLABLES)
    const [target, ...rest] = pool
    const writes = rest.slice(0, capacity_writes)
    const others = rest.slice(capacity_writes)
    const strangers = texts(unrelated, seed * 104729, OTHER)
    const all = [target, ...writes, ...others, ...strangers]
    const raw = await Promise.all(all.map((t) => textWavefront(t, n)))
    const evolved = await evolveAll(raw, seed)
    const patterns: Record<Model, Float32Array[]> = { medium: evolved, static: raw, blur: raw.map((w) => boxBlur(w, n, BLUR_PASSES)) }
    const index = (t: string) => all.indexOf(t)
    const single = (await Promise.all(noise_levels.map((noise) => medium([target], seed, noise)))).map((f) => prepare(f, n))
    const crowdField = await medium(writes, seed, 0)
    const crowd = prepare(crowdField, n)
    for (const model of MODELS) {
      const ready: Prepared[] = patterns[model].map((p) => prepare(p, n))
      const r = (field: Prepared, t: string) => resonanceOf(field, ready[index(t)]).resonance
      const a = acc[model]
      const margin = (field: Prepared, t: string) => r(field, t) - Math.max(...others.map((d) => r(field, d)))
      noise_levels.forEach((_, k) => a.noise[k].push(margin(single[k], target)))
      a.margin.push(a.noise[0].at(-1)!)
      const strangeness = strangers.map((t) => r(single[0], t))
      a.unrelated.push(mean(strangeness))
      const own = r(single[0], target)
      a.rejected.push(mean(strangeness.map((v) => (v < own / 2 ? 1 : 0))))
      a.matched.push(mean(writes.map((t) => (margin(crowd, t) > 0 ? 1 : 0))))
      const candidates = [...writes, ...others]
      const weights = superpositionWeights(candidates.map((t) => patterns[model][index(t)]), crowdField)
      const bestDistractor = Math.max(...others.map((_, i) => weights[writes.length + i]))
      a.capacity.push(mean(writes.map((_, i) => (weights[i] > bestDistractor ? 1 : 0))))
    }
    onSeed?.(seed)
  }
  const models = Object.fromEntries(
    MODELS.map((m) => {
      const a = acc[m]
      return [
        m,
        {
          identity_margin: mean(a.margin),
          unrelated_mean_resonance: mean(a.unrelated),
          rejection_rate: mean(a.rejected),
          noise: noise_levels.map((noise, k) => ({ noise, margin: mean(a.noise[k]) })),
          capacity: mean(a.capacity),
          capacity_matched_filter: mean(a.matched),
        },
      ]
    }),
  ) as Record<Model, ModelScores>
  return { protocol: { ...MEMORY_BENCH, blur_passes: BLUR_PASSES }, models, seconds: (performance.now() - t0) / 1000 }
}

export function memoryTable(r: MemoryBenchReport): Record<string, string | number>[] {
  return MODELS.map((m) => {
    const s = r.models[m]
    return {
      model: m,
      'identity margin': s.identity_margin.toFixed(3),
      'unrelated (mean res.)': s.unrelated_mean_resonance.toFixed(3),
      'rejection rate': s.rejection_rate.toFixed(2),
      ...Object.fromEntries(s.noise.map((x) => [`margin @ noise ${x.noise}`, x.margin.toFixed(3)])),
      capacity: s.capacity.toFixed(2),
      'capacity (matched filter)': s.capacity_matched_filter.toFixed(2),
    }
  })
}
