// `npm run bench`: cell-updates per second of the field step on each backend, through the engine as
// users drive it: the full equation (graphene_model at 300 K: noise, saturation, viscosity, a leaky
// sponge) with the energy ledger every step and a timeline sample every 10 steps.
// Prints a table and writes bench/results/field.json (and a timestamped copy).
import { mkdirSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { createNodeEngine } from '../engine/node.js'
import { findAdapter } from '../engine/gpu/device.js'
import { nodeGpu } from '../engine/gpu/webgpu.node.js'

interface Case {
  backend: 'cpu' | 'gpu'
  n: number
  fields: number
  threads?: number
}

interface Result extends Case {
  steps: number
  seconds: number
  cell_updates_per_second: number
}

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'all' },
    seconds: { type: 'string', default: '2' },
    out: { type: 'string', default: 'bench/results' },
  },
})
const budget = Number(args.seconds)

async function measure(c: Case): Promise<Result> {
  const engine = await createNodeEngine({ backend: c.backend, size: c.n, fields: c.fields, material: 'graphene_model', threads: c.threads })
  try {
    for (let f = 0; f < c.fields; f++) await engine.write(`benchmark pattern ${f}`, 0.8, f)
    await engine.step(10) // warm-up: JIT, pipelines, first submit
    let steps = 10
    let seconds = 0
    // Double the run until it lasts long enough to time, within the budget.
    for (;;) {
      const t0 = performance.now()
      await engine.step(steps)
      seconds = (performance.now() - t0) / 1000
      if (seconds >= budget / 4 || seconds * 2 > budget) break
      steps *= 2
    }
    return { ...c, steps, seconds, cell_updates_per_second: (c.n * c.n * c.fields * steps) / seconds }
  } finally {
    engine.destroy()
  }
}

const cases: Case[] = []
const threads = [1, Math.min(2, availableParallelism())]
if (args.backend === 'all' || args.backend === 'cpu') {
  for (const n of [128, 512, 2048]) for (const t of threads) cases.push({ backend: 'cpu', n, fields: 1, threads: t })
  for (const t of threads) cases.push({ backend: 'cpu', n: 96, fields: 64, threads: t })
}
const adapter = args.backend === 'cpu' ? undefined : await findAdapter(await nodeGpu())
const skipped: string[] = []
if (adapter) {
  // A software adapter (SwiftShader) runs about 0.5 M cell-updates/s: N = 2048 would take minutes a step.
  for (const n of [128, 512, 2048]) {
    if (adapter.software && n > 512) skipped.push(`gpu N=${n}: software adapter`)
    else cases.push({ backend: 'gpu', n, fields: 1 })
  }
  cases.push({ backend: 'gpu', n: 96, fields: 64 })
} else if (args.backend !== 'cpu') skipped.push('gpu: no WebGPU adapter')

const results: Result[] = []
for (const c of cases) {
  const r = await measure(c)
  results.push(r)
  process.stderr.write('.')
}
process.stderr.write('\n')

const rows = results.map((r) => ({
  backend: r.backend,
  'N': r.n,
  fields: r.fields,
  threads: r.backend === 'cpu' ? r.threads : '-',
  steps: r.steps,
  'M cell-updates/s': (r.cell_updates_per_second / 1e6).toFixed(1),
}))
console.log(`field step, full equation (graphene_model, 300 K), timeline every 10 steps; ${cpus()[0]?.model ?? 'cpu'} x ${availableParallelism()}`)
if (adapter) console.log(`GPU adapter: ${adapter.name}${adapter.software ? ' (software)' : ''}`)
console.table(rows)
for (const s of skipped) console.log(`skipped ${s}`)

const report = {
  benchmark: 'field_step',
  date: new Date().toISOString(),
  machine: { cpu: cpus()[0]?.model, cores: availableParallelism(), node: process.version, gpu_adapter: adapter?.name ?? null, gpu_software: adapter?.software ?? null },
  conditions: { material: 'graphene_model', temperature_k: 300, timeline_interval: 10 },
  results,
  skipped,
}
mkdirSync(args.out!, { recursive: true })
writeFileSync(`${args.out}/field.json`, JSON.stringify(report, null, 2) + '\n')
writeFileSync(`${args.out}/field-${report.date.replace(/[:.]/g, '-')}.json`, JSON.stringify(report, null, 2) + '\n')
console.log(`wrote ${args.out}/field.json`)
