// Load on a local server (autocannon, 10 connections, 5 s each): requests per second and latency for
// GET /crystal/state, GET /primitives with 5,000 primitives held, and POST /crystal/step (10 steps,
// N = 128). Target: GET /crystal/state at 2,000 requests/s or more with p99 under 20 ms on 2 cores.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FileRegistryStore } from '../engine/registry/file_store.node.js'
import { Registry } from '../engine/registry/registry.js'
import { candidate, startServer } from './harness.js'

export interface ServerBenchRow {
  route: string
  requests_per_second: number
  p50_ms: number
  p99_ms: number
  errors: number
  non_2xx: number
}

export interface ServerBenchReport {
  primitives: number
  field_size: number
  connections: number
  seconds: number
  rows: ServerBenchRow[]
}

const CAPS = { SVC_CRYSTAL_BUCKET_CAP: '5000', SVC_CRYSTAL_MAX_PRIMITIVES: '5000' }

export async function runServerBench(progress: (what: string) => void = () => {}): Promise<ServerBenchReport> {
  const dataDir = mkdtempSync(join(tmpdir(), 'crystal-bench-server-'))
  progress('registering 5,000 primitives ...')
  await new Registry(new FileRegistryStore(dataDir), { bucket_cap: 5000, max_primitives: 5000, novelty_threshold: 0.97 }).register(
    Array.from({ length: 5000 }, (_, i) => candidate(i + 1)),
  )
  // a development tool: loaded only when this benchmark runs
  const { default: autocannon } = await import('autocannon')
  const server = await startServer(['--size', '128'], CAPS, dataDir)
  const connections = 10
  const seconds = 5
  const rows: ServerBenchRow[] = []
  try {
    const cases = [
      { route: 'GET /crystal/state', path: '/crystal/state', method: 'GET' as const },
      { route: 'GET /primitives (5,000 held)', path: '/primitives', method: 'GET' as const },
      {
        route: 'POST /crystal/step (10 steps, N = 128)',
        path: '/crystal/step',
        method: 'POST' as const,
        body: JSON.stringify({ steps: 10 }),
      },
    ]
    for (const c of cases) {
      progress(`${c.route} ...`)
      await fetch(server.url + c.path, { method: c.method, body: c.body, headers: c.body ? { 'content-type': 'application/json' } : {} }) // warm: caches, JIT
      const r = await autocannon({
        url: server.url + c.path,
        method: c.method,
        body: c.body,
        headers: c.body ? { 'content-type': 'application/json' } : {},
        connections,
        duration: seconds,
      })
      rows.push({
        route: c.route,
        requests_per_second: r.requests.average,
        p50_ms: r.latency.p50,
        p99_ms: r.latency.p99,
        errors: r.errors,
        non_2xx: r.non2xx,
      })
    }
  } finally {
    await server.stop()
  }
  return { primitives: 5000, field_size: 128, connections, seconds, rows }
}

export function serverTable(r: ServerBenchReport): Record<string, string | number>[] {
  return r.rows.map((x) => ({
    route: x.route,
    'requests/s': x.requests_per_second.toFixed(0),
    'p50 ms': x.p50_ms,
    'p99 ms': x.p99_ms,
    errors: x.errors + x.non_2xx,
  }))
}
