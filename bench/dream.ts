// `crystal bench dream`: a deep dream (200 steps observed, the edit, 100 settled) on the CPU and the
// GPU side by side, per N: milliseconds a dream, bytes read back per dream (the field's own size is
// the control: what the old path read back about a dozen times), and how far the GPU's field lies
// from the CPU twin's after the same dream from the same state.
import { CrystalError } from '../engine/errors.js'
import type { BackendChoice, TransferCounts } from '../engine/field/backend.js'
import type { Engine } from '../engine/field/engine.js'
import { findAdapter, type AdapterChoice } from '../engine/gpu/device.js'
import { nodeGpu } from '../engine/gpu/webgpu.node.js'
import { createNodeEngine } from '../engine/node.js'

/** Sizes run when none are named; a software adapter (SwiftShader) runs the GPU side only up to SOFTWARE_MAX_N unless sizes are named. */
export const DEFAULT_SIZES = [128, 512, 2048]
export const SOFTWARE_MAX_N = 512

export interface SideBySideOptions {
  sizes?: number[]
  /**
   * `cpu` runs the CPU side alone, `gpu` the GPU side alone (no agreement measured: a GPU box asks for
   * its own figures, and the CPU side of recall at N = 2048 takes minutes); `auto` runs both, the CPU
   * side the GPU's control.
   */
  backend?: BackendChoice
  /** Time budget of one measurement, seconds. */
  seconds: number
}

export interface GpuPlan {
  adapter: AdapterChoice | undefined
  /** Sizes the GPU side runs. */
  gpuSizes: number[]
  /** Whether the CPU side runs (not with `--backend gpu`). */
  cpu: boolean
  sizes: number[]
  skipped: string[]
}

/** Which sizes each side runs, and why a GPU size is skipped. */
export async function planSides(o: SideBySideOptions): Promise<GpuPlan> {
  const sizes = o.sizes ?? DEFAULT_SIZES
  const skipped: string[] = []
  if (o.backend === 'cpu') return { adapter: undefined, gpuSizes: [], cpu: true, sizes, skipped: ['gpu: --backend cpu'] }
  const adapter = await findAdapter(await nodeGpu().catch(() => undefined))
  const gpuSizes = sizes.filter((n) => {
    if (!adapter) return false
    if (adapter.software && !o.sizes && n > SOFTWARE_MAX_N) {
      skipped.push(`gpu N=${n}: software adapter ${adapter.name} (name the size with --sizes to run it anyway)`)
      return false
    }
    return true
  })
  if (!adapter) skipped.push('gpu: no WebGPU adapter')
  const cpu = o.backend !== 'gpu'
  if (!cpu) skipped.push('cpu: --backend gpu (the GPU against CPU agreement is not measured)')
  return { adapter, gpuSizes, cpu, sizes, skipped }
}

/**
 * `--backend gpu` with no adapter: stops before any bench runs, saying why (Dawn's own reason where it
 * could not load), rather than running the benches' CPU parts alone.
 */
export async function requireAdapter(): Promise<void> {
  if (!(await findAdapter(await nodeGpu())))
    throw new CrystalError('backend_unavailable', 'no WebGPU adapter was found for --backend gpu', {}, 'use --backend cpu or auto')
}

/** Bytes read back between two counts. */
export const readBack = (a: TransferCounts | null, b: TransferCounts | null) => (a && b ? b.bytes_read - a.bytes_read : null)

/**
 * Repeats `run` until the runs have taken a quarter of the budget (at most 20); the median, in ms.
 * `first` is a run already timed (it counts), so a slow adapter (SwiftShader at N = 512) runs once.
 */
export async function medianMs(run: () => Promise<void>, seconds: number, first?: number): Promise<{ ms: number; runs: number }> {
  const times: number[] = first === undefined ? [] : [first]
  const start = performance.now() - (first ?? 0)
  if (first === undefined) times.push(await timed(run))
  while (times.length < 20 && performance.now() - start < (seconds * 1000) / 4) times.push(await timed(run))
  times.sort((a, b) => a - b)
  return { ms: times[Math.floor(times.length / 2)], runs: times.length }
}

export async function timed(run: () => Promise<void>): Promise<number> {
  const t0 = performance.now()
  await run()
  return performance.now() - t0
}

export interface DreamRow {
  n: number
  /** null: the CPU side did not run (`--backend gpu`). */
  cpu_ms: number | null
  gpu_ms: number | null
  runs: { cpu: number | null; gpu: number | null }
  /** Bytes the GPU read back during one dream, and one copy of the field (u and u_prev) as the control. */
  gpu_bytes_read: number | null
  field_bytes: number
  /** max |u_gpu - u_cpu| / max |u_cpu| after the same first dream from the same state. */
  gpu_vs_cpu: number | null
}

export interface DreamBenchReport {
  conditions: { material: string; mode: 'deep'; steps_per_dream: number; timeline_interval: 0 }
  gpu_adapter: string | null
  gpu_software: boolean | null
  rows: DreamRow[]
  skipped: string[]
}

const MATERIAL = 'graphene_model'

async function prepared(backend: 'cpu' | 'gpu', n: number, from?: Engine): Promise<Engine> {
  const e = await createNodeEngine({ backend, size: n, material: MATERIAL, seed: 1, timeline_interval: 0 })
  if (from) {
    const { u, prev } = await from.read()
    await e.resume({ u, prev, step_count: from.step_count, memories: from.memories, encoding: from.encoding })
  } else {
    for (const [k, x] of [0.3, 0.5, 0.7].entries())
      await e.pulse({ x, y: 0.4 + 0.1 * k, radius: 0.04, amplitude: 1, frequency: 2, phase: k }, 0)
    await e.step(50)
  }
  return e
}

const maxAbs = (a: Float32Array) => a.reduce((m, v) => Math.max(m, Math.abs(v)), 0)

export async function runDreamBench(o: SideBySideOptions, say: (line: string) => void = () => {}): Promise<DreamBenchReport> {
  const plan = await planSides(o)
  const rows: DreamRow[] = []
  for (const n of plan.sizes) {
    if (!plan.cpu && !plan.gpuSizes.includes(n)) continue
    if (plan.cpu) say(`dream: N = ${n} on the CPU ...`)
    const cpu = plan.cpu ? await prepared('cpu', n) : undefined
    const gpu = plan.gpuSizes.includes(n) ? await prepared('gpu', n, cpu) : undefined
    try {
      // the first dream on each side: timed, its transfers counted, and the two fields compared
      const cpuFirst = cpu && (await timed(async () => void (await cpu.dream('deep'))))
      let agreement: number | null = null
      let bytes: number | null = null
      let gpuFirst: number | undefined
      if (gpu) {
        say(`dream: N = ${n} on the GPU ...`)
        const before = gpu.transfers()
        gpuFirst = await timed(async () => void (await gpu.dream('deep')))
        bytes = readBack(before, gpu.transfers())
        if (cpu) {
          const [a, b] = [(await gpu.read()).u, (await cpu.read()).u]
          let d = 0
          for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]))
          agreement = d / maxAbs(b)
        }
      }
      const c = cpu && (await medianMs(async () => void (await cpu.dream('deep')), o.seconds, cpuFirst))
      const g = gpu && gpuFirst !== undefined ? await medianMs(async () => void (await gpu.dream('deep')), o.seconds, gpuFirst) : undefined
      const sides = [c && `${c.ms.toFixed(1)} ms on the CPU`, g && `${g.ms.toFixed(1)} ms on the GPU (${plan.adapter!.name})`]
      say(`dream: N = ${n} done: ${sides.filter(Boolean).join(', ')}`)
      rows.push({
        n,
        cpu_ms: c?.ms ?? null,
        gpu_ms: g?.ms ?? null,
        runs: { cpu: c?.runs ?? null, gpu: g?.runs ?? null },
        gpu_bytes_read: bytes,
        field_bytes: 2 * n * n * 4,
        gpu_vs_cpu: agreement,
      })
    } finally {
      cpu?.destroy()
      gpu?.destroy()
    }
  }
  return {
    conditions: { material: MATERIAL, mode: 'deep', steps_per_dream: 300, timeline_interval: 0 },
    gpu_adapter: plan.adapter?.name ?? null,
    gpu_software: plan.adapter?.software ?? null,
    rows,
    skipped: plan.skipped,
  }
}

const fixed = (v: number | null, digits = 1) => (v === null ? '-' : v.toFixed(digits))

export function dreamTable(r: DreamBenchReport): Record<string, string | number>[] {
  return r.rows.map((x) => ({
    N: x.n,
    'cpu ms/dream': fixed(x.cpu_ms),
    'gpu ms/dream': fixed(x.gpu_ms),
    'gpu bytes read/dream': x.gpu_bytes_read ?? '-',
    'control: field bytes': x.field_bytes,
    'gpu vs cpu (max diff / peak)': x.gpu_vs_cpu === null ? '-' : x.gpu_vs_cpu.toExponential(1),
  }))
}
