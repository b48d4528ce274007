// The benchmarks: `npm run bench` (all of them) and `crystal bench <field|memory|discovery|all>`.
// Each prints a table and writes JSON to bench/results/<name>.json (and a timestamped copy).
import { mkdirSync, writeFileSync } from 'node:fs'
import { writableFolder } from '../engine/util/folder.node.js'
import { availableParallelism, cpus } from 'node:os'
import { join } from 'node:path'
import type { BackendChoice } from '../engine/field/backend.js'
import { discoveryTables, runDiscoveryBench } from './discovery.js'
import { dreamTable, requireAdapter, runDreamBench } from './dream.js'
import { recallTable, runRecallBench } from './recall.js'
import { fieldTable, runFieldBench } from './field.js'
import { marketsTable, runMarketsBench } from './markets.js'
import { memoryTable, runMemoryBench } from './memory.js'
import { observatoryTable, runObservatoryBench } from './observatory.js'
import { runServerBench, serverTable } from './server.js'
import { runSwarmBench, swarmTable } from './swarm.js'
import { runStationBench, stationTable } from './station.js'
import { openTable, runOpenBench } from './open.js'

import type { BenchName } from './names.js'

export { BENCHES, type BenchName } from './names.js'

export interface BenchOptions {
  out: string
  json: boolean
  /** Lines of progress for people (stderr). */
  say: (line: string) => void
  /** Sides for field, dream and recall (default 128, 512, 2048). */
  sizes?: number[]
  /** Memories recall reads over. */
  memories?: number
  /** field: the backends measured (`auto`: both); dream, recall: `cpu` drops the GPU side. */
  backend?: BackendChoice
}

function save(out: string, name: string, report: object): string {
  mkdirSync(out, { recursive: true })
  const stamped = {
    benchmark: name,
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model, cores: availableParallelism(), node: process.version },
    ...report,
  }
  const body = JSON.stringify(stamped, null, 2) + '\n'
  writeFileSync(join(out, `${name}.json`), body)
  writeFileSync(join(out, `${name}-${stamped.date.replace(/[:.]/g, '-')}.json`), body)
  return join(out, `${name}.json`)
}

/** Which sides a side-by-side table holds (`--backend` runs one alone). */
const sidesRun = (cpu: boolean, gpu: boolean) => (cpu && gpu ? 'CPU and GPU side by side' : cpu ? 'the CPU side' : 'the GPU side')

export async function runBench(which: BenchName | 'all', o: BenchOptions): Promise<Record<string, object>> {
  const reports: Record<string, object> = {}
  await writableFolder(o.out, 'the reports folder', 'choose another with --out')
  if (o.backend === 'gpu' && (which === 'all' || ['field', 'dream', 'recall', 'open'].includes(which))) await requireAdapter()
  const show = (title: string, rows: object[]) => {
    if (o.json) return
    console.log(`\n${title}`)
    console.table(rows)
  }
  if (which === 'all' || which === 'field') {
    const r = await runFieldBench({ backend: o.backend ?? 'auto', seconds: 2, sizes: o.sizes }, o.say)
    show(
      `field step, full equation (graphene_model, 300 K), timeline every 10 steps${r.machine.gpu_adapter ? `; GPU: ${r.machine.gpu_adapter}${r.machine.gpu_software ? ' (software)' : ''}` : ''}`,
      fieldTable(r),
    )
    for (const s of r.skipped) o.say(`skipped ${s}`)
    reports.field = r
    o.say(`wrote ${save(o.out, 'field', r)}`)
  }
  if (which === 'all' || which === 'dream') {
    const r = await runDreamBench({ sizes: o.sizes, seconds: 4, backend: o.backend }, o.say)
    show(
      `deep dream (${r.conditions.material}, ${r.conditions.steps_per_dream} steps), ${sidesRun(
        r.rows.some((x) => x.cpu_ms !== null),
        r.rows.some((x) => x.gpu_ms !== null),
      )}${r.gpu_adapter ? `; GPU: ${r.gpu_adapter}${r.gpu_software ? ' (SOFTWARE, not a GPU)' : ''}` : ''}`,
      dreamTable(r),
    )
    for (const s of r.skipped) o.say(`skipped ${s}`)
    reports.dream = r
    o.say(`wrote ${save(o.out, 'dream', r)}`)
  }
  if (which === 'all' || which === 'recall') {
    const r = await runRecallBench({ sizes: o.sizes, seconds: 4, memories: o.memories, backend: o.backend }, o.say)
    show(
      `recall top-${r.conditions.k} (${r.conditions.material}), ${sidesRun(
        r.rows.some((x) => x.cpu !== null),
        r.rows.some((x) => x.gpu !== null),
      )}${r.gpu_adapter ? `; GPU: ${r.gpu_adapter}${r.gpu_software ? ' (SOFTWARE, not a GPU)' : ''}` : ''}`,
      recallTable(r),
    )
    for (const s of r.skipped) o.say(`skipped ${s}`)
    reports.recall = r
    o.say(`wrote ${save(o.out, 'recall', r)}`)
  }
  if (which === 'all' || which === 'memory') {
    o.say('memory: identity margins (30 seeds, 6 media and delays) and capacity by N ...')
    const r = await runMemoryBench(o.say)
    show(`memory: each claim beside its controls (docs/recall.md; ${r.seconds.toFixed(0)} s)`, memoryTable(r))
    reports.memory = r
    o.say(`wrote ${save(o.out, 'memory', r)}`)
  }
  if (which === 'all' || which === 'discovery') {
    const r = await runDiscoveryBench((what) => o.say(`discovery: ${what} ...`))
    for (const [title, rows] of Object.entries(discoveryTables(r))) show(title, rows)
    for (const s of r.skipped) o.say(`skipped ${s}`)
    reports.discovery = r
    o.say(`wrote ${save(o.out, 'discovery', r)}`)
  }
  if (which === 'all' || which === 'server') {
    const r = await runServerBench((what) => o.say(`server: ${what}`))
    show(
      `REST API under load (autocannon, ${r.connections} connections, ${r.seconds} s each; N = ${r.field_size}, ${r.primitives} primitives)`,
      serverTable(r),
    )
    reports.server = r
    o.say(`wrote ${save(o.out, 'server', r)}`)
  }
  if (which === 'all' || which === 'observatory') {
    const r = await runObservatoryBench((what) => o.say(`observatory: ${what}`))
    show('the Observatory in headless Chromium (software WebGL and WebGPU: SwiftShader)', observatoryTable(r))
    reports.observatory = r
    o.say(`wrote ${save(o.out, 'observatory', r)}`)
  }
  if (which === 'all' || which === 'swarm') {
    const r = await runSwarmBench((what) => o.say(`swarm: ${what}`))
    show(`the archivist under ${r.clients} explorer clients (${r.discoveries} discoveries, real nats-server with JetStream)`, swarmTable(r))
    reports.swarm = r
    o.say(`wrote ${save(o.out, 'swarm', r)}`)
  }
  if (which === 'all' || which === 'markets') {
    const r = await runMarketsBench((what) => o.say(`markets: ${what}`))
    show(
      `the market engine: durable trades through HTTP (${r.connections} clients, ${r.seconds} s; ${r.acknowledged} acknowledged, ${r.ledger_trades} on the ledger, ledger ${r.ledger_ok ? 'verifies' : 'BROKEN'}, money ${r.conserved ? 'conserved' : 'NOT conserved'}; load ${r.load_average.map((x) => x.toFixed(1)).join(' ')})`,
      marketsTable(r),
    )
    reports.markets = r
    o.say(`wrote ${save(o.out, 'markets', r)}`)
  }
  if (which === 'all' || which === 'station') {
    const r = await runStationBench((what) => o.say(`station: ${what}`))
    show('the station (demo library, 44.1 kHz stereo, 128 kbps MP3)', stationTable(r))
    reports.station = r
    o.say(`wrote ${save(o.out, 'station', r)}`)
  }
  if (which === 'all' || which === 'open') {
    const r = await runOpenBench(o.say, o.backend)
    show(
      `opening the GPU backend: the device, each kernel's compile, at once against one after another${r.gpu_adapter ? `; GPU: ${r.gpu_adapter}${r.gpu_software ? ' (software)' : ''}` : ''}`,
      openTable(r),
    )
    for (const s of r.skipped) o.say(`skipped ${s}`)
    reports.open = r
    o.say(`wrote ${save(o.out, 'open', r)}`)
  }
  if (o.json) process.stdout.write(JSON.stringify(reports, null, 2) + '\n')
  return reports
}

// `node dist/bench/main.js [name]` (npm run bench); no top-level await: the single executable bundles this as CommonJS
if (import.meta.url === `file://${process.argv[1]}`) {
  const which = (process.argv[2] ?? 'all') as BenchName | 'all'
  void runBench(which, { out: 'bench/results', json: false, say: (l) => process.stderr.write(l + '\n') })
}
