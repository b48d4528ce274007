// `npm run bench`: cell-updates per second of the field step on each backend, through the engine as
// users drive it: the full equation (graphene_model at 300 K: noise, saturation, viscosity, a leaky
// sponge) with the energy ledger every step and a timeline sample every 10 steps. On the GPU each
// single-field size runs twice more, without the timeline and then also with the step's tile sums
// through shared memory instead of subgroups (where the adapter has them): the step alone and its
// variants, in one run, to set beside a plain kernel of the same update on the same machine.
import { availableParallelism, cpus } from 'node:os'
import type { BackendChoice } from '../engine/field/backend.js'
import { createNodeEngine } from '../engine/node.js'
import { nodeGpu } from '../engine/gpu/webgpu.node.js'
import { findAdapter, keptDevice } from '../engine/gpu/device.js'
import { DEFAULT_SIZES, SOFTWARE_MAX_N } from './dream.js'
import { STEPS_PER_DISPATCH } from '../engine/field/params.js'

/** Steps between timeline samples as users run the engine. */
const TIMELINE = 10

interface Case {
  backend: 'cpu' | 'gpu'
  n: number
  fields: number
  threads?: number
  /** Steps between timeline samples: 10 as users run it, 0 for the step and its books alone. */
  timeline_interval: number
  /** GPU only: false forces the step's tile sums through shared memory where subgroups are offered. */
  subgroups?: boolean
  /** GPU only: the control, a plain WGSL kernel of the same update without the books (plainStep). */
  plain?: boolean
  /** GPU only, no timeline: steps a dispatch (EngineOptions.gpu_steps_per_dispatch; default the engine's). */
  steps_per_dispatch?: number
}

interface Result extends Case {
  steps: number
  seconds: number
  cell_updates_per_second: number
  /** The GPU step's tile sums: subgroups or shared memory ('-' on the CPU). */
  tile_sums?: string
}

export interface FieldBenchOptions {
  /** `auto` runs both backends. */
  backend: BackendChoice
  /** Time budget of one measurement. */
  seconds: number
  /** Sides to run (default 128, 512, 2048; the GPU skips N > 512 on a software adapter unless they are named). */
  sizes?: number[]
}

export interface FieldBenchReport {
  machine: {
    cpu?: string
    cores: number
    node: string
    gpu_adapter: string | null
    gpu_software: boolean | null
    /** The adapter offers subgroups (the GPU step's default tile sums). */
    gpu_subgroups: boolean | null
  }
  /** timeline_interval: as users run it; each result says its own (0: no timeline). */
  conditions: { material: string; temperature_k: number; timeline_interval: number }
  results: Result[]
  skipped: string[]
}

async function measure(c: Case, budget: number): Promise<Result> {
  if (c.plain) return measurePlain(c, budget)
  const engine = await createNodeEngine({
    backend: c.backend,
    size: c.n,
    fields: c.fields,
    material: 'graphene_model',
    threads: c.threads,
    timeline_interval: c.timeline_interval,
    gpu_subgroups: c.subgroups,
    gpu_steps_per_dispatch: c.steps_per_dispatch,
  })
  try {
    for (let f = 0; f < c.fields; f++) await engine.write(`benchmark pattern ${f}`, 0.8, f)
    await engine.step(10) // warm-up: JIT, pipelines, first submit
    await engine.books() // its steps done before the clock starts
    let steps = 10
    let seconds = 0
    // Double the run until it lasts long enough to time, within the budget.
    for (;;) {
      const t0 = performance.now()
      await engine.step(steps)
      await engine.books() // a read: the GPU has done the steps (step(n) may return while the last are queued)
      seconds = (performance.now() - t0) / 1000
      if (seconds >= budget / 4 || seconds * 2 > budget) break
      steps *= 2
    }
    return { ...c, steps, seconds, cell_updates_per_second: (c.n * c.n * c.fields * steps) / seconds }
  } finally {
    engine.destroy()
  }
}

const label = (c: Case) =>
  `${c.backend} N = ${c.n}${c.fields > 1 ? ` x ${c.fields} fields` : ''}${c.backend === 'cpu' ? `, ${c.threads} thread${c.threads === 1 ? '' : 's'}` : ''}` +
  `${c.plain ? ', plain WGSL kernel (the control: no books, no sponge)' : ''}${c.timeline_interval || c.plain ? '' : ', no timeline'}` +
  `${c.subgroups === false ? ', shared-memory tile sums' : ''}` +
  `${c.steps_per_dispatch ? `, ${c.steps_per_dispatch} step${c.steps_per_dispatch === 1 ? '' : 's'} a dispatch` : ''}`

/** How the GPU step summed its tiles' ledger terms. */
const tileSums = (c: Case, subgroupsOffered: boolean) =>
  c.backend === 'cpu' || c.plain ? '-' : c.subgroups !== false && subgroupsOffered ? 'subgroups' : 'shared memory'

export async function runFieldBench(o: FieldBenchOptions, say: (line: string) => void = () => {}): Promise<FieldBenchReport> {
  const cases: Case[] = []
  const threads = [1, Math.min(2, availableParallelism())]
  if (o.backend !== 'gpu') {
    for (const n of o.sizes ?? DEFAULT_SIZES)
      for (const t of threads) cases.push({ backend: 'cpu', n, fields: 1, threads: t, timeline_interval: TIMELINE })
    for (const t of threads) cases.push({ backend: 'cpu', n: 96, fields: 64, threads: t, timeline_interval: TIMELINE })
  }
  const adapter = o.backend === 'cpu' ? undefined : await findAdapter(await nodeGpu().catch(() => undefined))
  const skipped: string[] = []
  if (adapter) {
    // A software adapter (SwiftShader) runs about 0.5 M cell-updates/s: N = 2048 would take minutes a step.
    for (const n of o.sizes ?? DEFAULT_SIZES) {
      if (adapter.software && !o.sizes && n > SOFTWARE_MAX_N)
        skipped.push(`gpu N=${n}: software adapter (name the size with --sizes to run it anyway)`)
      else {
        cases.push({ backend: 'gpu', n, fields: 1, timeline_interval: TIMELINE }, { backend: 'gpu', n, fields: 1, timeline_interval: 0 })
        if (adapter.subgroups) cases.push({ backend: 'gpu', n, fields: 1, timeline_interval: 0, subgroups: false })
        cases.push({ backend: 'gpu', n, fields: 1, timeline_interval: 0, plain: true })
      }
    }
    cases.push({ backend: 'gpu', n: 96, fields: 64, timeline_interval: TIMELINE })
    // evolve's defaults' batch: one step a dispatch against several (shaders/field_steps.wgsl)
    for (const steps of [1, STEPS_PER_DISPATCH])
      cases.push({ backend: 'gpu', n: 96, fields: 24, timeline_interval: 0, steps_per_dispatch: steps })
  } else if (o.backend !== 'cpu') skipped.push('gpu: no WebGPU adapter')
  const results: Result[] = []
  for (const c of cases) {
    say(`field: ${label(c)} ...`)
    const r = await measure(c, o.seconds)
    say(
      `field: ${label(c)}: ${(r.cell_updates_per_second / 1e6).toFixed(1)} M cell-updates/s (${r.steps} steps in ${r.seconds.toFixed(2)} s)`,
    )
    results.push({ ...r, tile_sums: tileSums(c, adapter?.subgroups ?? false) })
  }
  return {
    machine: {
      cpu: cpus()[0]?.model,
      cores: availableParallelism(),
      node: process.version,
      gpu_adapter: adapter?.name ?? null,
      gpu_software: adapter?.software ?? null,
      gpu_subgroups: adapter?.subgroups ?? null,
    },
    conditions: { material: 'graphene_model', temperature_k: 300, timeline_interval: TIMELINE },
    results,
    skipped,
  }
}

export function fieldTable(r: FieldBenchReport): Record<string, string | number>[] {
  return r.results.map((x) => ({
    backend: x.backend,
    device: x.backend === 'gpu' ? `${r.machine.gpu_adapter}${r.machine.gpu_software ? ' (software)' : ''}` : (r.machine.cpu ?? '-'),
    N: x.n,
    fields: x.fields,
    threads: x.backend === 'cpu' ? (x.threads ?? 1) : '-',
    timeline: x.timeline_interval ? `every ${x.timeline_interval}` : 'off',
    'tile sums': x.tile_sums ?? '-',
    'step kernel':
      x.backend === 'cpu'
        ? 'WASM SIMD'
        : x.plain
          ? 'plain WGSL (control)'
          : `engine${x.steps_per_dispatch ? `, ${x.steps_per_dispatch} a dispatch` : ''}`,
    steps: x.steps,
    'M cell-updates/s': (x.cell_updates_per_second / 1e6).toFixed(1),
    'G cell-updates/s': (x.cell_updates_per_second / 1e9).toFixed(3),
  }))
}

/**
 * The control for the GPU step: shared/gpu/stencil_ref.py's CUDA kernel in plain WGSL, the same
 * update (saturation, viscosity, damping, hash noise) with no books, no sponge and no tile sums, in
 * 32 x 8 workgroups of one cell an invocation, dispatched as the engine dispatches its steps (one a
 * step, 256 a submit, the bind groups rotating). What the engine's step reaches beside it is what its
 * books and sponge cost; what it reaches beside the CUDA kernel is what WebGPU (Dawn, Vulkan) costs.
 */
const PLAIN_STEP = /* wgsl */ `
struct P { n: u32, key: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> up: array<f32>;
@group(0) @binding(2) var<storage, read> u: array<f32>;
@group(0) @binding(3) var<storage, read_write> un: array<f32>;
@compute @workgroup_size(32, 8)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let n = p.n;
  let x = g.x;
  let y = g.y;
  if (x >= n || y >= n) { return; }
  let i = y * n + x;
  let uc = u[i];
  let pc = up[i];
  let l = (select(0.0, u[i - 1u], x > 0u) + select(0.0, u[i + 1u], x < n - 1u)) + (select(0.0, u[i - n], y > 0u) + select(0.0, u[i + n], y < n - 1u)) - 4.0 * uc;
  let lp = (select(0.0, up[i - 1u], x > 0u) + select(0.0, up[i + 1u], x < n - 1u)) + (select(0.0, up[i - n], y > 0u) + select(0.0, up[i + n], y < n - 1u)) - 4.0 * pc;
  let vel = uc - pc;
  let u2 = uc * uc;
  let sat = 0.05 * u2 * uc / (1.0 + u2);
  var h = (i * 0x9E3779B1u) ^ p.key;
  h ^= h >> 16u;
  h *= 0x7feb352du;
  h ^= h >> 15u;
  let noise = 1e-4 * (f32(h >> 8u) * (1.0 / 16777216.0) - 0.5);
  un[i] = uc + vel + 0.25 * l + 0.01 * (l - lp) - 0.001 * vel - sat + noise;
}`

async function measurePlain(c: Case, budget: number): Promise<Result> {
  const kept = await keptDevice(await nodeGpu())
  if (!kept) throw new Error('no WebGPU adapter')
  const { device } = kept
  const n = c.n
  const module = device.createShaderModule({ code: PLAIN_STEP })
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } })
  const PER_SUBMIT = 256
  const fields = [0, 1, 2].map(() => device.createBuffer({ size: n * n * 4, usage: 0x80 | 0x8 }))
  const start = new Float32Array(n * n).map((_, i) => 0.01 * Math.sin(i * 0.37))
  for (const b of fields) device.queue.writeBuffer(b, 0, start)
  // one noise key for every step: the hash is computed all the same
  const uniforms = device.createBuffer({ size: 16, usage: 0x40 | 0x8 })
  device.queue.writeBuffer(uniforms, 0, new Uint32Array([n, 7, 0, 0]))
  const groups = [0, 1, 2].map((r) =>
    device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: uniforms } },
        { binding: 1, resource: { buffer: fields[r] } },
        { binding: 2, resource: { buffer: fields[(r + 1) % 3] } },
        { binding: 3, resource: { buffer: fields[(r + 2) % 3] } },
      ],
    }),
  )
  const run = async (steps: number) => {
    for (let done = 0; done < steps; done += PER_SUBMIT) {
      const encoder = device.createCommandEncoder()
      const pass = encoder.beginComputePass()
      pass.setPipeline(pipeline)
      for (let s = 0; s < Math.min(PER_SUBMIT, steps - done); s++) {
        pass.setBindGroup(0, groups[(done + s) % 3])
        pass.dispatchWorkgroups(Math.ceil(n / 32), Math.ceil(n / 8))
      }
      pass.end()
      device.queue.submit([encoder.finish()])
    }
    await device.queue.onSubmittedWorkDone()
  }
  try {
    await run(10)
    let steps = 10
    let seconds = 0
    for (;;) {
      const t0 = performance.now()
      await run(steps)
      seconds = (performance.now() - t0) / 1000
      if (seconds >= budget / 4 || seconds * 2 > budget) break
      steps *= 2
    }
    return { ...c, steps, seconds, cell_updates_per_second: (n * n * steps) / seconds }
  } finally {
    for (const b of [...fields, uniforms]) b.destroy()
  }
}
