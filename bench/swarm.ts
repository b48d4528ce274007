// The archivist under a swarm: 50 explorer clients (each its own NATS connection) announce 10,000
// discoveries in total, through JetStream, to one `crystal archive`. Two phases, each with a fresh
// server and archivist: a flood (as fast as the clients can announce) gives the merge rate; a steady
// 1,000 announcements a second (the target rate) gives the announce-to-archived latency (p50, p99).
// Targets on 2 cores: at least 1,000 merged per second, p99 under 250 ms.
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLASS_TOKENS, type Primitive } from '../engine/contracts/registry.js'
import { DISCOVERY_STREAM, SUBJECTS } from '../engine/contracts/swarm.js'
import { candidate, CRYSTAL_BIN, startNats } from './harness.js'

export const SWARM_BENCH = { clients: 50, discoveries: 10_000, steady_per_second: 1_000 } as const

export interface SwarmPhase {
  /** Announcements offered per second (Infinity: as fast as the clients can). */
  offered_per_second: number
  merged: number
  merged_per_second: number
  p50_ms: number
  p99_ms: number
  seconds: number
}

export interface SwarmBenchReport {
  clients: number
  discoveries: number
  flood: SwarmPhase
  steady: SwarmPhase
}

const MATERIALS = ['vacuum', 'europium_crystal', 'silicon', 'diamond_nv']

function primitive(i: number): Primitive {
  const c = candidate(i + 1, {
    class: CLASS_TOKENS[i % CLASS_TOKENS.length],
    material: MATERIALS[i % MATERIALS.length],
    persistence: 0.3 + (0.7 * ((i * 7919) % 1000)) / 1000,
  })
  return {
    ...c,
    id: `CRY-${String(i + 1).padStart(6, '0')}`,
    uuid: crypto.randomUUID(),
    provenance: null,
    discovered_at: new Date().toISOString(),
  }
}

export async function runSwarmBench(progress: (what: string) => void = () => {}): Promise<SwarmBenchReport> {
  const { clients, discoveries, steady_per_second } = SWARM_BENCH
  progress(`flood: ${clients} explorer clients announcing ${discoveries} discoveries as fast as they can ...`)
  const flood = await phase(Infinity)
  progress(`steady: the same at ${steady_per_second} a second ...`)
  const steady = await phase(steady_per_second)
  return { clients, discoveries, flood, steady }
}

async function phase(offered_per_second: number): Promise<SwarmPhase> {
  const { clients, discoveries } = SWARM_BENCH
  const nats = await startNats()
  const dataDir = mkdtempSync(join(tmpdir(), 'crystal-bench-swarm-'))
  const setup = await connect({ servers: nats.url })
  await (await jetstreamManager(setup)).streams.add({ name: DISCOVERY_STREAM, subjects: [SUBJECTS.discovered] })
  await setup.close()
  const archivist = spawn(process.execPath, [CRYSTAL_BIN, 'archive', '--json'], {
    env: {
      ...process.env,
      SVC_NATS_URL: nats.url,
      SVC_CRYSTAL_DATA_DIR: dataDir,
      SVC_CRYSTAL_BUCKET_CAP: '100000',
      SVC_CRYSTAL_MAX_PRIMITIVES: '100000',
    },
  })
  const published = new Map<string, number>()
  const latencies: number[] = []
  let firstPublish = 0
  let lastMerge = 0
  let pending = ''
  const done = new Promise<void>((resolve) => {
    archivist.stdout.on('data', (d) => {
      pending += d
      const lines = pending.split('\n')
      pending = lines.pop()!
      const now = performance.now()
      for (const l of lines) {
        const r = JSON.parse(l) as { merged?: string; uuid: string }
        const t = published.get(r.uuid)
        if (r.merged && t !== undefined) {
          latencies.push(now - t)
          lastMerge = now
        }
      }
      if (latencies.length >= discoveries) resolve()
    })
  })
  await new Promise<void>((resolve) => archivist.stderr.on('data', (d) => String(d).includes('merging into') && resolve()))
  try {
    const each = discoveries / clients
    const perClientInterval = (1000 * clients) / offered_per_second
    firstPublish = performance.now()
    await Promise.all(
      Array.from({ length: clients }, async (_, k) => {
        const nc = await connect({ servers: nats.url, name: `explorer-${k}` })
        const js = jetstream(nc)
        for (let j = 0; j < each; j++) {
          const due = firstPublish + j * perClientInterval + (k * perClientInterval) / clients
          const wait = due - performance.now()
          if (wait > 0) await new Promise((r) => setTimeout(r, wait))
          const p = primitive(k * each + j)
          published.set(p.uuid, performance.now())
          await js.publish(
            SUBJECTS.discovered,
            JSON.stringify({ schema_version: 1, ts: new Date().toISOString(), sender: `explorer-${k}`, primitive: p }),
            { msgID: p.uuid },
          )
        }
        await nc.drain()
      }),
    )
    await Promise.race([done, new Promise((r) => setTimeout(r, 120_000))])
  } finally {
    archivist.kill('SIGTERM')
    await new Promise((r) => archivist.on('exit', r))
    await nats.stop()
  }
  latencies.sort((a, b) => a - b)
  const seconds = (lastMerge - firstPublish) / 1000
  return {
    offered_per_second,
    merged: latencies.length,
    merged_per_second: latencies.length / seconds,
    p50_ms: latencies[Math.floor(latencies.length * 0.5)] ?? NaN,
    p99_ms: latencies[Math.floor(latencies.length * 0.99)] ?? NaN,
    seconds,
  }
}

export function swarmTable(r: SwarmBenchReport): Record<string, string | number>[] {
  return [
    {
      phase: 'flood',
      offered: 'as fast as possible',
      merged: `${r.flood.merged} of ${r.discoveries}`,
      'merged/s': r.flood.merged_per_second.toFixed(0),
      'p50 ms': r.flood.p50_ms.toFixed(0),
      'p99 ms': r.flood.p99_ms.toFixed(0),
    },
    {
      phase: 'steady',
      offered: `${r.steady.offered_per_second}/s`,
      merged: `${r.steady.merged} of ${r.discoveries}`,
      'merged/s': r.steady.merged_per_second.toFixed(0),
      'p50 ms': r.steady.p50_ms.toFixed(0),
      'p99 ms': r.steady.p99_ms.toFixed(0),
    },
  ]
}
