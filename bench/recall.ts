// `crystal bench recall`: recall's latency on the CPU and the GPU side by side, per N, over the same
// memories: M texts written in batches at MOMENTS moments, 5 steps apart, so the sweep runs back
// over MOMENTS readings; on the CPU also the first question after the field changed (recall keeps
// what it read of each moment while the field stands still). Beside it: the query's own encoding time (host work on either backend) and
// that time in CPU field steps of the same N on one thread,
// the bytes the GPU read back per recall (the field's size is the control), whether both
// backends rank the same memories, and one write's time on each (encoding and adding the wave).
import { textWavefront } from '../engine/encode/text.js'
import type { Engine } from '../engine/field/engine.js'
import { createNodeEngine } from '../engine/node.js'
import type { RecallResult } from '../engine/contracts/api.js'
import { medianMs, planSides, readBack, timed, type SideBySideOptions } from './dream.js'

export interface RecallBenchOptions extends SideBySideOptions {
  /** Memories written (default 200, 20 above N = 512: a text's encoding takes 0.2 to 0.3 s at N = 2048 on this CPU under load). */
  memories?: number
}

/** Above `large_n` the default is `large_memories`: at N = 2048 one text's encoding takes 0.2 to 0.3 s here. */
export const RECALL_DEFAULTS = { memories: 200, large_n: 512, large_memories: 20, moments: 40, k: 10, gap: 5 }

export interface RecallRow {
  n: number
  memories: number
  readings: number
  /** The query's encoding (the WebAssembly kernel), median. */
  encode_ms: number
  /** The same by the kernel's TypeScript twin, the control. */
  encode_twin_ms: number
  /** One CPU field step of the same N on one thread, the encoding's yardstick (its target is 8 of them). */
  cpu_step_ms: number
  /** Questions asked again of a field that stands still: recall keeps what it read of each moment. */
  cpu_ms: number
  /** The first question after the field changed (one step): each moment read and split again. */
  cpu_changed_ms: number
  gpu_ms: number | null
  /** One write of a new text (encoding on the host, then the wave added to the field), median. */
  cpu_write_ms: number
  gpu_write_ms: number | null
  gpu_bytes_read: number | null
  field_bytes: number
  /** Both backends return the same memories in the same order for the first query. */
  same_ranking: boolean | null
  /** Hits that ranking holds (0 would make the comparison empty). */
  hits_compared: number
  /** Largest |score_gpu - score_cpu| over those hits, relative to the top score. */
  score_diff: number | null
}

export interface RecallBenchReport {
  conditions: { material: string; k: number; moments: number; gap_steps: number }
  gpu_adapter: string | null
  gpu_software: boolean | null
  rows: RecallRow[]
  skipped: string[]
}

const MATERIAL = 'ideal_resonator'
const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tu', 'sha', 'vel', 'or', 'quin', 'da', 'pe', 'zor', 'ly', 'an', 'thi', 'bo']

function texts(count: number): string[] {
  let s = 5
  const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32
  const word = () => SYLLABLES[Math.floor(rand() * 16)] + SYLLABLES[Math.floor(rand() * 16)]
  return Array.from({ length: count }, (_, i) => `${word()} ${word()} ${word()} ${i}`)
}

export async function runRecallBench(o: RecallBenchOptions, say: (line: string) => void = () => {}): Promise<RecallBenchReport> {
  const plan = await planSides(o)
  const { moments, k, gap } = RECALL_DEFAULTS
  const rows: RecallRow[] = []
  for (const n of plan.sizes) {
    const count = o.memories ?? (n > RECALL_DEFAULTS.large_n ? RECALL_DEFAULTS.large_memories : RECALL_DEFAULTS.memories)
    const written = texts(count)
    say(`recall: N = ${n}, writing ${count} memories ...`)
    const cpu = await createNodeEngine({ backend: 'cpu', size: n, material: MATERIAL, seed: 3, timeline_interval: 0 })
    let gpu: Engine | undefined
    try {
      const batch = Math.ceil(count / moments)
      for (let i = 0; i < count; i += batch) {
        await cpu.writeMany(written.slice(i, i + batch).map((text) => ({ text })))
        await cpu.step(gap)
      }
      if (plan.gpuSizes.includes(n)) {
        gpu = await createNodeEngine({ backend: 'gpu', size: n, material: MATERIAL, seed: 3, timeline_interval: 0 })
        const { u, prev } = await cpu.read()
        await gpu.resume({ u, prev, step_count: cpu.step_count, memories: cpu.memories })
      }
      const queries = [0, 1, 2].map((q) => written[(q * 977) % count].split(' ').slice(0, 2).join(' '))
      // the query's encoding by the WebAssembly kernel, and by its TypeScript twin (the same bits) as
      // the control, alternating over the three queries
      let e = 0
      const encode = (await medianMs(async () => void (await textWavefront(queries[e++ % 3], n)), 1)).ms
      const twin = (await medianMs(async () => void (await textWavefront(queries[e++ % 3], n, 'typescript')), 1)).ms
      const stepper = await createNodeEngine({ backend: 'cpu', size: n, material: MATERIAL, threads: 1, timeline_interval: 0 })
      const step = await medianMs(async () => void (await stepper.step(1)), 1).finally(() => stepper.destroy())
      // the first recall on each side builds its null patterns; it is timed, counted and compared
      const wanted = await Promise.all(queries.map((t) => cpu.recall(t, k)))
      let q = 0
      const c = await medianMs(async () => void (await cpu.recall(queries[q++ % queries.length], k)), o.seconds)
      let g: { ms: number } | undefined
      let bytes: number | null = null
      let same: boolean | null = null
      let diff: number | null = null
      const compared = wanted[0].hits.length
      if (gpu) {
        say(`recall: N = ${n} on the GPU ...`)
        const before = gpu.transfers()
        let got: RecallResult | undefined
        const first = await timed(async () => void (got = await gpu!.recall(queries[0], k)))
        bytes = readBack(before, gpu.transfers())
        same = got!.hits.map((h) => h.memory).join() === wanted[0].hits.map((h) => h.memory).join()
        diff = Math.max(
          0,
          ...got!.hits.map((h, j) => Math.abs(h.score - (wanted[0].hits[j]?.score ?? 0)) / Math.abs(wanted[0].hits[0]?.score || 1)),
        )
        q = 1
        g = await medianMs(async () => void (await gpu!.recall(queries[q++ % queries.length], k)), o.seconds, first)
      }
      // the first question after a step reads and splits every moment again (the step is not timed)
      const changed: number[] = []
      for (let r = 0; r < 5; r++) {
        await cpu.step(1)
        changed.push(await timed(async () => void (await cpu.recall(queries[r % queries.length], k))))
      }
      changed.sort((a, b) => a - b)
      // writes last, so that the recalls above read the memories as written
      let w = 0
      const cw = await medianMs(async () => void (await cpu.write(`written last ${w++}`)), o.seconds)
      const gw = gpu ? await medianMs(async () => void (await gpu!.write(`written last ${w++}`)), o.seconds) : undefined
      say(
        `recall: N = ${n} done: ${c.ms.toFixed(1)} ms a recall and ${cw.ms.toFixed(1)} ms a write on the CPU${g ? `, ${g.ms.toFixed(1)} and ${gw!.ms.toFixed(1)} ms on the GPU (${plan.adapter!.name})` : ''}`,
      )
      const readings = new Set(cpu.memories.map((m) => m.step)).size
      rows.push({
        n,
        memories: count,
        readings,
        encode_ms: encode,
        encode_twin_ms: twin,
        cpu_step_ms: step.ms,
        cpu_ms: c.ms,
        cpu_changed_ms: changed[2],
        gpu_ms: g?.ms ?? null,
        cpu_write_ms: cw.ms,
        gpu_write_ms: gw?.ms ?? null,
        gpu_bytes_read: bytes,
        field_bytes: 2 * n * n * 4,
        same_ranking: same,
        hits_compared: compared,
        score_diff: diff,
      })
    } finally {
      cpu.destroy()
      gpu?.destroy()
    }
  }
  return {
    conditions: { material: MATERIAL, k, moments, gap_steps: gap },
    gpu_adapter: plan.adapter?.name ?? null,
    gpu_software: plan.adapter?.software ?? null,
    rows,
    skipped: plan.skipped,
  }
}

export function recallTable(r: RecallBenchReport): Record<string, string | number>[] {
  return r.rows.map((x) => ({
    N: x.n,
    memories: x.memories,
    readings: x.readings,
    'query encode ms': x.encode_ms.toFixed(1),
    'encode in CPU steps (1 thread)': (x.encode_ms / x.cpu_step_ms).toFixed(1),
    'control: TS twin encode in CPU steps': (x.encode_twin_ms / x.cpu_step_ms).toFixed(1),
    'cpu ms/recall': x.cpu_ms.toFixed(1),
    'cpu ms/recall after a step': x.cpu_changed_ms.toFixed(1),
    'gpu ms/recall': x.gpu_ms === null ? '-' : x.gpu_ms.toFixed(1),
    'cpu ms/write': x.cpu_write_ms.toFixed(1),
    'gpu ms/write': x.gpu_write_ms === null ? '-' : x.gpu_write_ms.toFixed(1),
    'gpu bytes read/recall': x.gpu_bytes_read ?? '-',
    'control: field bytes': x.field_bytes,
    'same ranking': x.same_ranking === null ? '-' : `${x.same_ranking ? 'yes' : 'NO'} (${x.hits_compared} hits)`,
    'score diff / top': x.score_diff === null ? '-' : x.score_diff.toExponential(1),
  }))
}
