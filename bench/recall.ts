// `crystal bench recall`: recall's latency on the CPU and the GPU side by side, per N, over the same
// memories: M texts written in batches at MOMENTS moments, 5 steps apart, so the sweep runs back
// over MOMENTS readings. Each backend's engine writes the memories itself (a write keeps the text's
// pattern for recall), and each is timed three ways: the first question (it makes the null
// patterns, reads and splits every moment of several memories), questions asked again of a field
// that stands still (recall keeps what it read of each moment), and the first question after the
// field changed (one step: each moment read and split again). Beside each, on the GPU, what one
// recall did there: uploads (writes, bytes), read-backs (reads, bytes), submits and kernel
// dispatches. Also: the query's own encoding time (host work on either backend) and that time in
// CPU field steps of the same N on one thread, whether both backends rank the same memories, and
// one write's time on each (encoding and adding the wave).
import { ENCODING_VERSION, textWavefront } from '../engine/encode/text.js'
import type { TransferCounts } from '../engine/field/backend.js'
import type { Engine } from '../engine/field/engine.js'
import { createNodeEngine } from '../engine/node.js'
import type { RecallResult } from '../engine/contracts/api.js'
import { medianMs, planSides, timed, type SideBySideOptions } from './dream.js'

export interface RecallBenchOptions extends SideBySideOptions {
  /** Memories written (default 200, 20 above N = 512: a write takes about 0.5 s at N = 2048 on this CPU under load). */
  memories?: number
}

/** Above `large_n` the default is `large_memories`: at N = 2048 one write takes about 0.5 s here. */
export const RECALL_DEFAULTS = { memories: 200, large_n: 512, large_memories: 20, moments: 40, k: 10, gap: 5 }

/** What one recall did on the GPU: the counters' difference (engine/gpu/transfers.ts). */
export type RecallCounts = TransferCounts

/** One backend's recall times (ms) and, on the GPU, what each kind of question did there. */
export interface RecallSide {
  /** The first question of all. */
  first_ms: number
  /** Questions asked again of a field that stands still, median. */
  again_ms: number
  /** The first question after the field changed (one step, untimed), median. */
  changed_ms: number
  counts: { first: RecallCounts; again: RecallCounts; changed: RecallCounts } | null
}

export interface RecallRow {
  n: number
  memories: number
  readings: number
  /** The query's encoding (the WebAssembly kernel, the encoding new fields use), median. */
  encode_ms: number
  /** The same by the kernel's TypeScript twin, the control. */
  encode_twin_ms: number
  /** The same text in encoding version 2 (older media), by its WebAssembly kernel: the other control. */
  encode_v2_ms: number
  /** One CPU field step of the same N on one thread, the encoding's yardstick (its target is 8 of them). */
  cpu_step_ms: number
  /** null: the CPU side did not run (`--backend gpu`). */
  cpu: RecallSide | null
  gpu: RecallSide | null
  /** One write of a new text (encoded on the host by the CPU engine, on the device by the GPU engine; then added to the field), median. */
  cpu_write_ms: number | null
  gpu_write_ms: number | null
  /**
   * The same, then the books read (which waits for the device to finish the write: a write returns
   * once its part energies are back and the rest is queued), median.
   */
  gpu_write_books_ms: number | null
  /** One GPU write's traffic (its wavefront stays on the device, kept for recall). */
  gpu_write_counts: RecallCounts | null
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

const difference = (a: TransferCounts, b: TransferCounts): RecallCounts => ({
  bytes_read: b.bytes_read - a.bytes_read,
  reads: b.reads - a.reads,
  bytes_written: b.bytes_written - a.bytes_written,
  writes: b.writes - a.writes,
  submits: b.submits - a.submits,
  dispatches: b.dispatches - a.dispatches,
})

/** What `run` did on the engine's device. */
async function countsOf(e: Engine, run: () => Promise<void>): Promise<RecallCounts> {
  const before = e.transfers()!
  await run()
  return difference(before, e.transfers()!)
}

/** One recall, timed, with what it did on the device (null on the CPU). */
async function counted(e: Engine, query: string, k: number): Promise<{ ms: number; counts: RecallCounts | null; result: RecallResult }> {
  const before = e.transfers()
  let result: RecallResult | undefined
  const ms = await timed(async () => void (result = await e.recall(query, k)))
  const after = e.transfers()
  return { ms, counts: before && after ? difference(before, after) : null, result: result! }
}

/** The three kinds of question on one engine; the first's result is returned for the comparison. */
async function side(e: Engine, queries: readonly string[], k: number, seconds: number): Promise<{ side: RecallSide; first: RecallResult }> {
  const first = await counted(e, queries[0], k)
  const again = await counted(e, queries[1], k)
  let q = 2
  const againMs = await medianMs(async () => void (await e.recall(queries[q++ % queries.length], k)), seconds, again.ms)
  // the first question after a step reads and splits every moment again (the step is not timed)
  const changed: { ms: number; counts: RecallCounts | null }[] = []
  const start = performance.now()
  do {
    await e.step(1)
    changed.push(await counted(e, queries[changed.length % queries.length], k))
  } while (changed.length < 5 && performance.now() - start < (seconds * 1000) / 4)
  const times = changed.map((c) => c.ms).sort((a, b) => a - b)
  return {
    first: first.result,
    side: {
      first_ms: first.ms,
      again_ms: againMs.ms,
      changed_ms: times[Math.floor(times.length / 2)],
      counts: first.counts && { first: first.counts, again: again.counts!, changed: changed[0].counts! },
    },
  }
}

export async function runRecallBench(o: RecallBenchOptions, say: (line: string) => void = () => {}): Promise<RecallBenchReport> {
  const plan = await planSides(o)
  const { moments, k, gap } = RECALL_DEFAULTS
  const rows: RecallRow[] = []
  for (const n of plan.sizes) {
    if (!plan.cpu && !plan.gpuSizes.includes(n)) continue
    const count = o.memories ?? (n > RECALL_DEFAULTS.large_n ? RECALL_DEFAULTS.large_memories : RECALL_DEFAULTS.memories)
    const written = texts(count)
    const engines: Engine[] = []
    // each engine writes the same memories the same way (a write keeps each text's pattern for recall)
    const open = async (backend: 'cpu' | 'gpu') => {
      say(`recall: N = ${n}, writing ${count} memories on the ${backend.toUpperCase()} ...`)
      const e = await createNodeEngine({ backend, size: n, material: MATERIAL, seed: 3, timeline_interval: 0 })
      engines.push(e)
      const batch = Math.ceil(count / moments)
      for (let i = 0; i < count; i += batch) {
        await e.writeMany(written.slice(i, i + batch).map((text) => ({ text })))
        await e.step(gap)
      }
      return e
    }
    try {
      const cpu = plan.cpu ? await open('cpu') : undefined
      const gpu = plan.gpuSizes.includes(n) ? await open('gpu') : undefined
      const queries = [0, 1, 2].map((q) => written[(q * 977) % count].split(' ').slice(0, 2).join(' '))
      // the query's encoding by the WebAssembly kernel, and by its TypeScript twin (the same bits) as
      // the control, alternating over the three queries
      let e = 0
      const encode = (await medianMs(async () => void (await textWavefront(queries[e++ % 3], n)), 1)).ms
      const twin = (await medianMs(async () => void (await textWavefront(queries[e++ % 3], n, { kernel: 'typescript' })), 1)).ms
      const v2 = (await medianMs(async () => void (await textWavefront(queries[e++ % 3], n, { version: 2 })), 1)).ms
      const stepper = await createNodeEngine({ backend: 'cpu', size: n, material: MATERIAL, threads: 1, timeline_interval: 0 })
      const step = await medianMs(async () => void (await stepper.step(1)), 1).finally(() => stepper.destroy())
      let c: Awaited<ReturnType<typeof side>> | undefined
      if (cpu) {
        say(`recall: N = ${n} on the CPU ...`)
        c = await side(cpu, queries, k, o.seconds)
      }
      let g: Awaited<ReturnType<typeof side>> | undefined
      if (gpu) {
        say(`recall: N = ${n} on the GPU ...`)
        g = await side(gpu, queries, k, o.seconds)
      }
      const readings = new Set((cpu ?? gpu)!.memories.map((m) => m.step)).size
      const wanted = c?.first.hits
      const got = g?.first.hits
      // writes last, so that the recalls above read the memories as written
      let w = 0
      const cw = cpu && (await medianMs(async () => void (await cpu.write(`written last ${w++}`)), o.seconds))
      const gw = gpu ? await medianMs(async () => void (await gpu.write(`written last ${w++}`)), o.seconds) : undefined
      const gwb = gpu
        ? await medianMs(async () => {
            await gpu.write(`written last ${w++}`)
            await gpu.books()
          }, o.seconds)
        : undefined
      const writeCounts = gpu && (await countsOf(gpu, () => gpu.write(`written last ${w++}`)))
      const ms = (s: RecallSide) => `${s.first_ms.toFixed(1)} / ${s.again_ms.toFixed(1)} / ${s.changed_ms.toFixed(1)}`
      const sides = [
        c && `${ms(c.side)} ms and ${cw!.ms.toFixed(1)} ms a write on the CPU`,
        g && `${ms(g.side)} and ${gw!.ms.toFixed(1)} ms on the GPU (${plan.adapter!.name})`,
      ]
      say(`recall: N = ${n} done: first / again / after a step ${sides.filter(Boolean).join(', ')}`)
      rows.push({
        n,
        memories: count,
        readings,
        encode_ms: encode,
        encode_twin_ms: twin,
        encode_v2_ms: v2,
        cpu_step_ms: step.ms,
        cpu: c?.side ?? null,
        gpu: g?.side ?? null,
        cpu_write_ms: cw?.ms ?? null,
        gpu_write_ms: gw?.ms ?? null,
        gpu_write_books_ms: gwb?.ms ?? null,
        gpu_write_counts: writeCounts ?? null,
        field_bytes: 2 * n * n * 4,
        same_ranking: got && wanted ? got.map((h) => h.memory).join() === wanted.map((h) => h.memory).join() : null,
        hits_compared: wanted?.length ?? 0,
        score_diff:
          got && wanted
            ? Math.max(0, ...got.map((h, j) => Math.abs(h.score - (wanted[j]?.score ?? 0)) / Math.abs(wanted[0]?.score || 1)))
            : null,
      })
    } finally {
      for (const e of engines) e.destroy()
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

/** "uploads (bytes) / reads (bytes) / submits / dispatches" of one recall on the GPU. */
const traffic = (c: RecallCounts) =>
  `${c.writes} (${c.bytes_written.toLocaleString('en-US')}) / ${c.reads} (${c.bytes_read}) / ${c.submits} / ${c.dispatches}`

export function recallTable(r: RecallBenchReport): Record<string, string | number>[] {
  return r.rows.flatMap((x) =>
    (['first', 'again', 'changed'] as const).map((kind) => {
      const ms = (s: RecallSide | null) => (s ? s[`${kind}_ms`].toFixed(1) : '-')
      return {
        N: x.n,
        memories: x.memories,
        readings: x.readings,
        question: { first: 'first', again: 'again (field still)', changed: 'after a step' }[kind],
        'cpu ms': ms(x.cpu),
        'gpu ms': ms(x.gpu),
        'gpu uploads (bytes) / reads (bytes) / submits / dispatches': x.gpu?.counts ? traffic(x.gpu.counts[kind]) : '-',
        'control: field bytes': x.field_bytes,
        'query encode ms': x.encode_ms.toFixed(1),
        'encode in CPU steps (1 thread)': (x.encode_ms / x.cpu_step_ms).toFixed(1),
        'control: TS twin encode in CPU steps': (x.encode_twin_ms / x.cpu_step_ms).toFixed(1),
        [`encoding ${ENCODING_VERSION}; control: version 2 encode in CPU steps`]: (x.encode_v2_ms / x.cpu_step_ms).toFixed(1),
        'cpu ms/write': x.cpu_write_ms === null ? '-' : x.cpu_write_ms.toFixed(1),
        'gpu ms/write': x.gpu_write_ms === null ? '-' : x.gpu_write_ms.toFixed(1),
        'gpu ms/write, books read': x.gpu_write_books_ms === null ? '-' : x.gpu_write_books_ms.toFixed(1),
        'gpu write: uploads (bytes) / reads (bytes) / submits / dispatches': x.gpu_write_counts ? traffic(x.gpu_write_counts) : '-',
        'same ranking': x.same_ranking === null ? '-' : `${x.same_ranking ? 'yes' : 'NO'} (${x.hits_compared} hits)`,
        'score diff / top': x.score_diff === null ? '-' : x.score_diff.toExponential(1),
      }
    }),
  )
}
