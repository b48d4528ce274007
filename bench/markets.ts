// `crystal bench markets`: acknowledged (durable) trades per second through HTTP from 50 concurrent
// clients, with p50/p99 latency; GET of a market (with its history) while 10 clients trade in it, its
// p99 beside those trades per second; and in the same run two controls: the same GET with nobody
// trading (the HTTP ceiling with no write), and one-transaction-per-commit on the same disk (what a
// design without group commit could not exceed). Afterwards the ledger must verify and money be
// conserved. The rate limit is off here: it is a per-client policy, not the engine's capacity.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { call, startServer } from './harness.js'
import { openSqlite } from '../server/markets/sqlite.js'

/** Trading clients beside the reads (issue 24's case: GET p99 under 10 ms with 10 trading clients), and the clients reading. */
const TRADERS_BESIDE_READS = 10
const READERS = 4

export interface MarketsBenchRow {
  case: string
  per_second: number
  p50_ms: number | null
  p99_ms: number | null
  errors: number
}

export interface MarketsBenchReport {
  connections: number
  seconds: number
  rows: MarketsBenchRow[]
  acknowledged: number
  ledger_trades: number
  ledger_ok: boolean
  conserved: boolean
  load_average: number[]
}

/** Single-row transactions, each committed (and fsynced) on its own: the disk's commit rate. */
function commitsPerSecond(dir: string, seconds: number): number {
  const db = openSqlite(join(dir, 'commits.sqlite'))
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = FULL')
  db.exec('CREATE TABLE t (x INTEGER)')
  const insert = db.prepare('INSERT INTO t VALUES (?)')
  const start = performance.now()
  let n = 0
  while (performance.now() - start < seconds * 1000) insert.run(n++)
  const rate = n / ((performance.now() - start) / 1000)
  db.close()
  return rate
}

export async function runMarketsBench(progress: (what: string) => void = () => {}, seconds = 5): Promise<MarketsBenchReport> {
  const { default: autocannon } = await import('autocannon')
  const { loadavg } = await import('node:os')
  const oracle = 'bench-oracle'
  const server = await startServer([], { HUB_ORACLE_TOKEN: oracle, SVC_MARKETS_START_BALANCE: '100000000', SVC_MARKETS_RATE_LIMIT: '0' })
  const connections = 50
  const rows: MarketsBenchRow[] = []
  try {
    const m = (
      await call(
        server.url,
        'POST',
        '/api/markets',
        {
          question: 'bench',
          outcomes: ['a', 'b', 'c', 'd'],
          tier: 'labs',
          closes_at: new Date(Date.now() + 3_600_000).toISOString(),
          b: 1000,
        },
        { authorization: `Bearer ${oracle}` },
      )
    ).body
    const traders: { id: string; token: string }[] = []
    for (let k = 0; k < connections; k++) {
      const r = await call(server.url, 'POST', '/api/agents/register', { id: `bench-${k}`, display_name: `bench ${k}`, kind: 'bot' })
      traders.push({ id: `bench-${k}`, token: r.body.token })
    }
    let next = 0
    const trading = (clients: number) =>
      autocannon({
        url: `${server.url}/api/markets/${m.id}/trade`,
        method: 'POST',
        connections: clients,
        duration: seconds,
        setupClient: (client) => {
          const t = traders[next++ % traders.length]
          client.setHeadersAndBody(
            { 'content-type': 'application/json', authorization: `Bearer ${t.token}` },
            JSON.stringify({ trader_id: t.id, outcome: 'abcd'[next % 4], shares: 1 }),
          )
        },
      })
    const reading = () => autocannon({ url: `${server.url}/api/markets/${m.id}`, connections: READERS, duration: seconds })
    progress(`trades: ${connections} clients, ${seconds} s ...`)
    const trades = await trading(connections)
    rows.push({
      case: `POST trade, ${connections} clients (acknowledged after COMMIT)`,
      per_second: trades.requests.average,
      p50_ms: trades.latency.p50,
      p99_ms: trades.latency.p99,
      errors: trades.errors + trades.non2xx,
    })
    progress(`GET the market while ${TRADERS_BESIDE_READS} clients trade, ${seconds} s ...`)
    const [busyReads, besideTrades] = await Promise.all([reading(), trading(TRADERS_BESIDE_READS)])
    rows.push({
      case: `GET the market (${READERS} readers) while ${TRADERS_BESIDE_READS} clients trade`,
      per_second: busyReads.requests.average,
      p50_ms: busyReads.latency.p50,
      p99_ms: busyReads.latency.p99,
      errors: busyReads.errors + busyReads.non2xx,
    })
    rows.push({
      case: `POST trade, ${TRADERS_BESIDE_READS} clients, beside those reads`,
      per_second: besideTrades.requests.average,
      p50_ms: besideTrades.latency.p50,
      p99_ms: besideTrades.latency.p99,
      errors: besideTrades.errors + besideTrades.non2xx,
    })
    progress(`control: reads of the same market with nobody trading, ${seconds} s ...`)
    const reads = await reading()
    rows.push({
      case: `control: GET the market (${READERS} readers), no trading`,
      per_second: reads.requests.average,
      p50_ms: reads.latency.p50,
      p99_ms: reads.latency.p99,
      errors: reads.errors + reads.non2xx,
    })
    progress('control: one commit per transaction on this disk ...')
    rows.push({
      case: 'control: one fsynced commit per trade (disk limit)',
      per_second: commitsPerSecond(mkdtempSync(join(tmpdir(), 'crystal-bench-commits-')), 2),
      p50_ms: null,
      p99_ms: null,
      errors: 0,
    })
    const market = (await call(server.url, 'GET', `/api/markets/${m.id}`)).body
    const verify = (await call(server.url, 'GET', '/api/ledger/verify')).body
    const conserved = (await call(server.url, 'GET', '/api/ledger/conservation')).body
    return {
      connections,
      seconds,
      rows,
      acknowledged: trades['2xx'] + besideTrades['2xx'],
      ledger_trades: market.trades,
      ledger_ok: verify.ok,
      conserved: conserved.ok,
      load_average: loadavg(),
    }
  } finally {
    await server.stop()
  }
}

export function marketsTable(r: MarketsBenchReport): Record<string, string | number>[] {
  return r.rows.map((x) => ({
    case: x.case,
    'per second': x.per_second.toFixed(0),
    'p50 ms': x.p50_ms ?? '',
    'p99 ms': x.p99_ms ?? '',
    errors: x.errors,
  }))
}
