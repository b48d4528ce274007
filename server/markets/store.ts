// The market engine's storage: SQLite (better-sqlite3; WAL, synchronous=FULL) under the data dir, and
// the only code that knows its tables. Writes go through a group commit: the jobs that arrive in one
// turn of the event loop run in one transaction (each in its own savepoint), and each is answered
// only after that transaction's COMMIT has reached the disk.
import canonicalize from 'canonicalize'
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { AgentReply, ConservationReply, CreateMarketBody, MarketReply, TradeBody } from '../../engine/contracts/markets.js'
import { CrystalError } from '../../engine/errors.js'
import { entryText, GENESIS, verifyChain, type LedgerEntry, type LedgerKind, type Verdict } from '../../engine/markets/ledger.js'
import { escrowMinor, payoutPerShare, prices, quote, timeWeighted, type PricePoint } from '../../engine/markets/lmsr.js'
import { parseProposal } from '../../engine/markets/proposal.js'
import { reputation, traderForecast, type Reputation } from '../../engine/markets/reputation.js'
import { openSqlite, type Sqlite } from './sqlite.js'

/** The house account that funds labs markets (minted on demand) and takes their remainders; it holds no token. */
export const HOUSE_ID = 'oracle'
/** A play market resolves to its time-weighted prices over this last stretch before the close (or its whole life if shorter). */
export const PLAY_WINDOW_MS = 86_400_000
export const DEFAULT_B = 100
/** At most this many points (plus the last) of a market's price history in a reply: every k-th trade. */
export const HISTORY_POINTS = 200

export interface MarketStoreOptions {
  dataDir: string
  /** Minor units minted for each new agent. */
  startingBalance: number
  now?: () => number
  /** Opens an existing database to read and check it (`crystal markets check`), beside a running server. */
  readonly?: boolean
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const iso = (ms: number) => new Date(ms).toISOString()

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }
interface AgentRow { id: string; owner: string; display_name: string; kind: string; salt: Buffer | null; token_hash: Buffer | null; balance: number; created_at: number }
interface MarketRow { id: string; question: string; outcomes: string; category: string | null; tier: 'play' | 'labs'; b: number; q: string; escrow: number; pool: number; volume: number; trades: number; proposer_id: string | null; proposer_owner: string | null; funder_id: string; created_at: number; closes_at: number; resolved_at: number | null; resolution: string | null }

const SCHEMA = `
CREATE TABLE IF NOT EXISTS agents (id TEXT PRIMARY KEY, owner TEXT NOT NULL, display_name TEXT NOT NULL, kind TEXT NOT NULL, salt BLOB, token_hash BLOB, balance INTEGER NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS markets (id TEXT PRIMARY KEY, serial INTEGER UNIQUE NOT NULL, question TEXT NOT NULL, outcomes TEXT NOT NULL, category TEXT, tier TEXT NOT NULL, b REAL NOT NULL, q TEXT NOT NULL, escrow INTEGER NOT NULL, pool INTEGER NOT NULL, volume INTEGER NOT NULL DEFAULT 0, trades INTEGER NOT NULL DEFAULT 0, proposer_id TEXT, proposer_owner TEXT, funder_id TEXT NOT NULL, created_at INTEGER NOT NULL, closes_at INTEGER NOT NULL, resolved_at INTEGER, resolution TEXT);
CREATE TABLE IF NOT EXISTS positions (agent_id TEXT NOT NULL, market_id TEXT NOT NULL, outcome INTEGER NOT NULL, shares INTEGER NOT NULL, PRIMARY KEY (agent_id, market_id, outcome));
CREATE TABLE IF NOT EXISTS trades (id INTEGER PRIMARY KEY, market_id TEXT NOT NULL, n INTEGER NOT NULL, agent_id TEXT NOT NULL, outcome INTEGER NOT NULL, shares INTEGER NOT NULL, cost INTEGER NOT NULL, prices TEXT NOT NULL, ts INTEGER NOT NULL, ledger_seq INTEGER NOT NULL, client_ref TEXT);
CREATE UNIQUE INDEX IF NOT EXISTS trades_client_ref ON trades (agent_id, client_ref) WHERE client_ref IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS trades_market ON trades (market_id, n);
CREATE INDEX IF NOT EXISTS trades_agent ON trades (agent_id, market_id);
CREATE TABLE IF NOT EXISTS ledger (seq INTEGER PRIMARY KEY, ts TEXT NOT NULL, kind TEXT NOT NULL, agent_id TEXT, market_id TEXT, amount INTEGER NOT NULL, detail TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
`

export class MarketStore {
  readonly file: string
  private readonly db: Sqlite
  private readonly now: () => number
  private readonly queue: { job: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void }[] = []
  private scheduled = false
  /** One transaction over a batch; each job in a savepoint (a nested transaction), so that a refused job leaves no trace and the others stand. */
  private readonly batch: (jobs: (() => unknown)[]) => Outcome[]
  private readonly s: ReturnType<typeof statements>

  constructor(private readonly o: MarketStoreOptions) {
    this.file = join(o.dataDir, 'markets.sqlite')
    if (o.readonly && !existsSync(this.file)) throw new CrystalError('not_found', `no market database at ${this.file} (the server creates it on its first start)`, { file: this.file })
    mkdirSync(o.dataDir, { recursive: true })
    this.db = openSqlite(this.file, { readonly: o.readonly, busyTimeoutMs: 5000 })
    this.now = o.now ?? Date.now
    if (!o.readonly) {
      this.db.exec('PRAGMA journal_mode = WAL')
      // FULL: a commit in WAL mode is on the disk when it returns, so an acknowledged trade survives a crash
      this.db.exec('PRAGMA synchronous = FULL')
      this.db.exec(SCHEMA)
    }
    this.s = statements(this.db)
    const savepoint = this.db.transaction((job: () => unknown) => job())
    this.batch = this.db.transaction((jobs: (() => unknown)[]) =>
      jobs.map((job): Outcome => {
        try {
          return { ok: true, value: savepoint(job) }
        } catch (error) {
          return { ok: false, error }
        }
      }),
    )
    if (!o.readonly && !this.s.agent.get(HOUSE_ID)) this.s.insertAgent.run(HOUSE_ID, HOUSE_ID, 'the house (funds labs markets)', 'lab', null, null, this.now())
  }

  close(): void {
    this.db.close()
  }

  /** Runs `job` inside the next group commit; resolves with its value once the commit is durable. */
  write<T>(job: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ job, resolve: resolve as (v: unknown) => void, reject })
      if (!this.scheduled) {
        this.scheduled = true
        setImmediate(() => this.flush())
      }
    })
  }

  private flush(): void {
    this.scheduled = false
    const batch = this.queue.splice(0)
    let results: Outcome[]
    try {
      results = this.batch(batch.map((b) => b.job))
    } catch (error) {
      for (const b of batch) b.reject(error)
      return
    }
    batch.forEach((b, k) => {
      const r = results[k]
      if (r.ok) b.resolve(r.value)
      else b.reject(r.error)
    })
  }

  // ---- the ledger

  private append(kind: LedgerKind, agent_id: string | null, market_id: string | null, amount: number, detail: object): number {
    const head = this.s.head.get()
    const e = { seq: (head?.seq ?? 0) + 1, ts: iso(this.now()), kind, agent_id, market_id, amount, detail: canonicalize(detail) ?? '{}', prev_hash: head?.hash ?? GENESIS }
    this.s.insertLedger.run({ ...e, hash: sha256(entryText(e)) })
    if (agent_id !== null) this.s.addBalance.run(amount, agent_id)
    return e.seq
  }

  ledger(after: number, limit: number): { entries: LedgerEntry[]; next_after: number | null } {
    const entries = this.s.ledgerPage.all(after, limit)
    return { entries, next_after: entries.length === limit ? entries[entries.length - 1].seq : null }
  }

  verify(): Verdict {
    return verifyChain(this.s.ledgerAll.iterate(), sha256)
  }

  // ---- agents

  /** A new agent with its bearer token (`<id>:<secret>`, returned only here); linked to `owner`'s household when registered with a household token. */
  register(body: { id?: string; display_name: string; kind: string }, owner?: string): Promise<{ agent: AgentReply; token: string }> {
    return this.write(() => {
      const id = body.id ?? `agent-${randomBytes(6).toString('hex')}`
      if (this.s.agent.get(id)) throw new CrystalError('conflict', `the agent id ${id} is taken; register another id (or none, to be given one)`, { field: 'id' })
      const secret = randomBytes(24).toString('base64url')
      const salt = randomBytes(16)
      this.s.insertAgent.run(id, owner ?? id, body.display_name, body.kind, salt, hashToken(salt, secret), this.now())
      this.append('mint', id, null, this.o.startingBalance, { reason: 'starting balance' })
      return { agent: this.agent(id), token: `${id}:${secret}` }
    })
  }

  /** The agent a bearer token belongs to, or an unauthorized error; `id`, when given, must be that agent. */
  authenticate(token: string | undefined, id?: string): AgentRow {
    const cut = token?.lastIndexOf(':') ?? -1
    const who = cut > 0 ? token!.slice(0, cut) : ''
    const row = who ? this.s.agent.get(who) : undefined
    // the hash is compared even for an unknown id, so that the time taken does not say which ids exist
    const salt = row?.salt ?? Buffer.alloc(16)
    const given = hashToken(salt, cut > 0 ? token!.slice(cut + 1) : '')
    const ok = !!row?.token_hash && timingSafeEqual(given, row.token_hash)
    if (!ok) throw new CrystalError('unauthorized', id ? `this route needs Authorization: Bearer <the token of ${id}>` : 'this route needs Authorization: Bearer <an agent token>')
    if (id !== undefined && row!.id !== id) throw new CrystalError('forbidden', `the token is ${row!.id}'s, not ${id}'s`, { field: 'trader_id' })
    return row!
  }

  agent(id: string): AgentReply {
    const a = this.s.agent.get(id)
    if (!a) throw new CrystalError('not_found', `no agent ${id}`, { field: 'id' })
    const positions = this.s.agentPositions.all(id).map((p) => ({ market_id: p.market_id, outcome: (JSON.parse(p.outcomes) as string[])[p.outcome], shares: p.shares }))
    return { id: a.id, display_name: a.display_name, kind: a.kind, owner: a.owner, balance: a.balance, positions, reputation: this.reputations(id).get(id) ?? reputation([]), created_at: iso(a.created_at) }
  }

  /** Reputation over resolved markets (engine/markets/reputation), of one agent or of all. */
  reputations(agentId: string | null = null): Map<string, Reputation> {
    const byAgent = new Map<string, { forecast: number[]; outcome: number[] }[]>()
    let key = ''
    let points: PricePoint[] = []
    let last: { agent_id: string; resolution: string; closed: number } | undefined
    const finish = () => {
      if (!last || points.length === 0) return
      const list = byAgent.get(last.agent_id) ?? []
      list.push({ forecast: traderForecast(points, last.closed), outcome: JSON.parse(last.resolution) })
      byAgent.set(last.agent_id, list)
    }
    for (const r of this.s.scored.iterate({ agent: agentId })) {
      const k = `${r.agent_id}\u0000${r.market_id}`
      if (k !== key) {
        finish()
        key = k
        points = []
      }
      points.push({ t: r.ts, p: JSON.parse(r.prices) })
      last = r
    }
    finish()
    return new Map([...byAgent].map(([id, scored]) => [id, reputation(scored)]))
  }

  leaderboard(limit = 100): { rank: number; id: string; display_name: string; balance: number; reputation: Reputation }[] {
    const reps = this.reputations()
    const rows = this.db.prepare<[string], AgentRow>('SELECT * FROM agents WHERE id <> ?').all(HOUSE_ID)
    return rows
      .map((a) => ({ id: a.id, display_name: a.display_name, balance: a.balance, reputation: reps.get(a.id) ?? reputation([]) }))
      .sort((x, y) => y.reputation.skill - x.reputation.skill || y.balance - x.balance || x.id.localeCompare(y.id))
      .slice(0, limit)
      .map((r, k) => ({ rank: k + 1, ...r }))
  }

  // ---- markets

  /** Opens a market funded by `funder` (escrow b ln n from their balance); a labs market is funded by the house. */
  createMarket(body: CreateMarketBody, proposer: AgentRow | null): Promise<MarketReply> {
    return this.write(() => {
      const closes = Date.parse(body.closes_at)
      if (!(closes > this.now())) throw new CrystalError('bad_argument', `closes_at ${body.closes_at} is not in the future`, { field: 'closes_at' })
      const b = body.b ?? DEFAULT_B
      const n = body.outcomes.length
      const escrow = escrowMinor(b, n)
      const funder = body.tier === 'labs' ? HOUSE_ID : proposer!.id
      const serial = this.s.nextSerial.get()!.n
      const id = `MKT-${String(serial).padStart(6, '0')}`
      this.s.insertMarket.run({ id, serial, question: body.question, outcomes: JSON.stringify(body.outcomes), category: body.category ?? null, tier: body.tier, b, q: JSON.stringify(new Array(n).fill(0)), escrow, proposer_id: proposer?.id ?? null, proposer_owner: proposer?.owner ?? null, funder_id: funder, created_at: this.now(), closes_at: closes })
      if (funder === HOUSE_ID) this.append('mint', HOUSE_ID, id, escrow, { reason: 'escrow for a labs market' })
      else if (this.s.agent.get(funder)!.balance < escrow) throw new CrystalError('insufficient_funds', `opening this market escrows b ln n = ${escrow} minor units, and ${funder} holds ${this.s.agent.get(funder)!.balance}`, { field: 'b' })
      this.append('escrow', funder, id, -escrow, { b, outcomes: n })
      return this.market(id, false)
    })
  }

  /** A proposal (document 2's format) opens a yes/no play market escrowed by its proposer. */
  propose(proposer: AgentRow, text: string, b = DEFAULT_B): Promise<MarketReply> {
    const p = parseProposal(text, this.now())
    return this.createMarket({ question: p.claim, outcomes: ['yes', 'no'], b, tier: 'play', closes_at: iso(p.closes_at), category: p.category }, proposer)
  }

  private row(id: string): MarketRow {
    const m = this.s.market.get(id)
    if (!m) throw new CrystalError('not_found', `no market ${id}`, { field: 'id' })
    return m
  }

  private reply(m: MarketRow, history: boolean): MarketReply {
    const q = JSON.parse(m.q) as number[]
    const status = m.resolved_at !== null ? 'resolved' : this.now() >= m.closes_at ? 'closed' : 'open'
    const out: MarketReply = {
      id: m.id, question: m.question, outcomes: JSON.parse(m.outcomes), category: m.category, tier: m.tier, status, b: m.b, q, prices: prices(q, m.b),
      volume: m.volume, trades: m.trades, escrow: m.escrow, pool: m.pool, proposer_id: m.proposer_id, created_at: iso(m.created_at), closes_at: iso(m.closes_at),
      resolved_at: m.resolved_at === null ? null : iso(m.resolved_at), resolution: m.resolution === null ? null : JSON.parse(m.resolution),
    }
    if (history) {
      // every step-th trade and the last: a chart's worth, however many trades there were
      const step = Math.max(1, Math.ceil(m.trades / HISTORY_POINTS))
      const wanted = Array.from({ length: Math.ceil(m.trades / step) }, (_, k) => 1 + k * step)
      if (m.trades > 0 && wanted[wanted.length - 1] !== m.trades) wanted.push(m.trades)
      out.history = [{ ts: iso(m.created_at), prices: prices(new Array(q.length).fill(0), m.b) }, ...this.s.sampledHistory.all(m.id, JSON.stringify(wanted)).map((h) => ({ ts: iso(h.ts), prices: JSON.parse(h.prices) }))]
    }
    return out
  }

  market(id: string, history = true): MarketReply {
    return this.reply(this.row(id), history)
  }

  markets(q: { sort?: 'volume' | 'created' | 'closing'; tier?: 'play' | 'labs'; status?: 'open' | 'closed' | 'resolved' }): MarketReply[] {
    const order = { volume: 'volume DESC, serial', created: 'serial DESC', closing: 'closes_at, serial' }[q.sort ?? 'volume']
    const status = { open: 'resolved_at IS NULL AND closes_at > @now', closed: 'resolved_at IS NULL AND closes_at <= @now', resolved: 'resolved_at IS NOT NULL' }
    const where = [q.tier ? 'tier = @tier' : '1', q.status ? status[q.status] : '1'].join(' AND ')
    const rows = this.db.prepare<[{ now: number; tier?: string }], MarketRow>(`SELECT * FROM markets WHERE ${where} ORDER BY ${order} LIMIT 500`).all({ now: this.now(), ...(q.tier ? { tier: q.tier } : {}) })
    return rows.map((m) => this.reply(m, false))
  }

  /** The cost of a trade now, without making it. */
  quote(id: string, outcome: string, shares: number): { cost: number; prices_after: number[] } {
    const m = this.row(id)
    const r = quote(JSON.parse(m.q), m.b, outcomeIndex(m, outcome), shares)
    return { cost: r.cost, prices_after: r.prices }
  }

  /** One trade: the proposer's household is refused, a sale is limited to what is held, a buy to the balance. */
  trade(id: string, trader: AgentRow, body: TradeBody) {
    return this.write(() => {
      const m = this.row(id)
      const ref = body.client_ref ?? null
      const done = ref === null ? undefined : this.s.byClientRef.get(trader.id, ref)
      if (done) {
        if (done.market_id !== id || outcomeIndex(m, body.outcome) !== done.outcome || done.shares !== body.shares) throw new CrystalError('conflict', `client_ref ${ref} already names another trade of ${trader.id} (${done.shares} of outcome ${done.outcome + 1} in ${done.market_id})`, { field: 'client_ref' })
        const balance = this.s.agent.get(trader.id)!.balance
        return { trade_id: done.id, market_id: id, trader_id: trader.id, outcome: body.outcome, shares: done.shares, cost: done.cost, balance, prices: JSON.parse(done.prices) as number[], ledger_seq: done.ledger_seq, client_ref: ref ?? undefined, replayed: true }
      }
      if (m.resolved_at !== null) throw new CrystalError('conflict', `market ${id} is resolved`, { field: 'id' })
      if (this.now() >= m.closes_at) throw new CrystalError('conflict', `market ${id} closed at ${iso(m.closes_at)}`, { field: 'id' })
      const t = this.s.agent.get(trader.id)!
      if (m.proposer_owner !== null && t.owner === m.proposer_owner) throw new CrystalError('forbidden', `${t.id} is of the household of ${m.proposer_id}, who proposed market ${id}: a proposer cannot trade in their own market`, { field: 'trader_id' })
      const k = outcomeIndex(m, body.outcome)
      const held = this.s.position.get(t.id, id, k)?.shares ?? 0
      if (held + body.shares < 0) throw new CrystalError('insufficient_funds', `${t.id} holds ${held} shares of "${body.outcome}" and cannot sell ${-body.shares}`, { field: 'shares' })
      const r = quote(JSON.parse(m.q), m.b, k, body.shares)
      if (r.cost > t.balance) throw new CrystalError('insufficient_funds', `the trade costs ${r.cost} minor units and ${t.id} holds ${t.balance}`, { field: 'shares' })
      this.s.applyTrade.run(JSON.stringify(r.q), r.cost, Math.abs(r.cost), id)
      this.s.upsertPosition.run(t.id, id, k, body.shares)
      const seq = this.append('trade', t.id, id, -r.cost, { outcome: body.outcome, shares: body.shares, prices: r.prices, ...(ref === null ? {} : { client_ref: ref }) })
      const info = this.s.insertTrade.run(id, m.trades + 1, t.id, k, body.shares, r.cost, JSON.stringify(r.prices), this.now(), seq, ref)
      return { trade_id: Number(info.lastInsertRowid), market_id: id, trader_id: t.id, outcome: body.outcome, shares: body.shares, cost: r.cost, balance: t.balance - r.cost, prices: r.prices, ledger_seq: seq, client_ref: ref ?? undefined, replayed: false }
    })
  }

  /** The play markets whose time is up and are not yet settled. */
  due(): string[] {
    return this.s.due.all(this.now()).map((r) => r.id)
  }

  /**
   * Settles a market, once: labs by the oracle's outcome; play, after its close, by the rule (each
   * share pays its outcome's time-weighted price over the last day). Winners are paid, the remainder
   * of the pool goes back to the funder, each as a ledger entry.
   */
  resolve(id: string, outcome: string | undefined) {
    return this.write(() => {
      const m = this.row(id)
      if (m.resolved_at !== null) throw new CrystalError('conflict', `market ${id} was already resolved at ${iso(m.resolved_at)}; settlement pays once`, { field: 'id' })
      const n = (JSON.parse(m.outcomes) as string[]).length
      let resolution: number[]
      if (m.tier === 'labs') {
        if (outcome === undefined) throw new CrystalError('bad_argument', 'a labs market is resolved with {"outcome": "<the outcome that happened>"}', { field: 'outcome' })
        const k = outcomeIndex(m, outcome)
        resolution = Array.from({ length: n }, (_, j) => (j === k ? 1 : 0))
      } else {
        if (outcome !== undefined) throw new CrystalError('bad_argument', 'a play market resolves by its rule (time-weighted prices over its last day), not by a given outcome', { field: 'outcome' })
        if (this.now() < m.closes_at) throw new CrystalError('conflict', `play market ${id} resolves by its rule at its close, ${iso(m.closes_at)}`, { field: 'id' })
        const points = this.s.history.all(id).map((h) => ({ t: h.ts, p: JSON.parse(h.prices) as number[] }))
        resolution = timeWeighted(points, prices(new Array(n).fill(0), m.b), Math.max(m.created_at, m.closes_at - PLAY_WINDOW_MS), m.closes_at)
      }
      const pays = payoutPerShare(resolution)
      const owed = new Map<string, number>()
      for (const h of this.s.holders.all(id)) owed.set(h.agent_id, (owed.get(h.agent_id) ?? 0) + h.shares * pays[h.outcome])
      const paid = [...owed.values()].reduce((a, x) => a + x, 0)
      if (paid > m.pool) throw new CrystalError('internal', `market ${id} owes ${paid} but its pool holds ${m.pool}`)
      for (const [agent, amount] of owed) if (amount > 0) this.append('payout', agent, id, amount, { resolution })
      const refund = m.pool - paid
      if (refund > 0) this.append('refund', m.funder_id, id, refund, { reason: 'what the pool kept after paying the winners' })
      this.s.settle.run(this.now(), JSON.stringify(resolution), id)
      return { market: this.market(id, false), paid_out: paid, refunded: refund, ledger_head: this.s.head.get()!.hash }
    })
  }

  // ---- the money check

  /** minted = balances + escrow + pools, and every balance and pool equal to its ledger replay. */
  conservation(): ConservationReply {
    const one = <T>(sql: string) => this.db.prepare<[], T>(sql).get()!
    const minted = one<{ v: number }>("SELECT COALESCE(SUM(amount), 0) AS v FROM ledger WHERE kind = 'mint'").v
    const balances = one<{ v: number }>('SELECT COALESCE(SUM(balance), 0) AS v FROM agents').v
    const open = one<{ escrow: number; pool: number }>('SELECT COALESCE(SUM(escrow), 0) AS escrow, COALESCE(SUM(pool), 0) AS pool FROM markets WHERE resolved_at IS NULL')
    const settledPools = one<{ v: number }>('SELECT COALESCE(SUM(pool), 0) AS v FROM markets WHERE resolved_at IS NOT NULL').v
    const paid_out = one<{ v: number }>("SELECT COALESCE(SUM(amount), 0) AS v FROM ledger WHERE kind = 'payout'").v
    const refunded = one<{ v: number }>("SELECT COALESCE(SUM(amount), 0) AS v FROM ledger WHERE kind = 'refund'").v
    const mismatches: string[] = []
    if (minted !== balances + open.pool + settledPools) mismatches.push(`minted ${minted} != balances ${balances} + market pools ${open.pool + settledPools}`)
    if (settledPools !== 0) mismatches.push(`settled markets still hold ${settledPools}`)
    for (const r of this.db.prepare<[], { id: string; balance: number; replay: number }>('SELECT a.id, a.balance, COALESCE((SELECT SUM(amount) FROM ledger l WHERE l.agent_id = a.id), 0) AS replay FROM agents a').iterate()) {
      if (r.balance !== r.replay) mismatches.push(`agent ${r.id}: balance ${r.balance}, ledger says ${r.replay}`)
    }
    for (const r of this.db.prepare<[], { id: string; pool: number; replay: number }>("SELECT m.id, m.pool, COALESCE((SELECT -SUM(amount) FROM ledger l WHERE l.market_id = m.id AND l.kind <> 'mint'), 0) AS replay FROM markets m").iterate()) {
      if (r.pool !== r.replay) mismatches.push(`market ${r.id}: pool ${r.pool}, ledger says ${r.replay}`)
    }
    return { ok: mismatches.length === 0, minted, balances, escrow: open.escrow, pools: open.pool - open.escrow, paid_out, refunded, mismatches }
  }
}

function statements(db: Sqlite) {
  return {
    agent: db.prepare<[string], AgentRow>('SELECT * FROM agents WHERE id = ?'),
    insertAgent: db.prepare('INSERT INTO agents (id, owner, display_name, kind, salt, token_hash, balance, created_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?)'),
    addBalance: db.prepare('UPDATE agents SET balance = balance + ? WHERE id = ?'),
    market: db.prepare<[string], MarketRow>('SELECT * FROM markets WHERE id = ?'),
    nextSerial: db.prepare<[], { n: number }>('SELECT COALESCE(MAX(serial), 0) + 1 AS n FROM markets'),
    insertMarket: db.prepare('INSERT INTO markets (id, serial, question, outcomes, category, tier, b, q, escrow, pool, proposer_id, proposer_owner, funder_id, created_at, closes_at) VALUES (@id, @serial, @question, @outcomes, @category, @tier, @b, @q, @escrow, @escrow, @proposer_id, @proposer_owner, @funder_id, @created_at, @closes_at)'),
    applyTrade: db.prepare('UPDATE markets SET q = ?, pool = pool + ?, volume = volume + ?, trades = trades + 1 WHERE id = ?'),
    settle: db.prepare('UPDATE markets SET resolved_at = ?, resolution = ?, pool = 0 WHERE id = ?'),
    position: db.prepare<[string, string, number], { shares: number }>('SELECT shares FROM positions WHERE agent_id = ? AND market_id = ? AND outcome = ?'),
    upsertPosition: db.prepare('INSERT INTO positions (agent_id, market_id, outcome, shares) VALUES (?, ?, ?, ?) ON CONFLICT (agent_id, market_id, outcome) DO UPDATE SET shares = shares + excluded.shares'),
    holders: db.prepare<[string], { agent_id: string; outcome: number; shares: number }>('SELECT agent_id, outcome, shares FROM positions WHERE market_id = ? AND shares > 0 ORDER BY agent_id, outcome'),
    agentPositions: db.prepare<[string], { market_id: string; outcomes: string; outcome: number; shares: number }>('SELECT p.market_id, m.outcomes, p.outcome, p.shares FROM positions p JOIN markets m ON m.id = p.market_id WHERE p.agent_id = ? AND p.shares <> 0 AND m.resolved_at IS NULL ORDER BY p.market_id, p.outcome'),
    insertTrade: db.prepare('INSERT INTO trades (market_id, n, agent_id, outcome, shares, cost, prices, ts, ledger_seq, client_ref) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    byClientRef: db.prepare<[string, string], { id: number; market_id: string; outcome: number; shares: number; cost: number; prices: string; ledger_seq: number }>('SELECT id, market_id, outcome, shares, cost, prices, ledger_seq FROM trades WHERE agent_id = ? AND client_ref = ?'),
    history: db.prepare<[string], { ts: number; prices: string }>('SELECT ts, prices FROM trades WHERE market_id = ? ORDER BY n'),
    // chosen trades by their number in the market (a JSON array): one index lookup each
    sampledHistory: db.prepare<[string, string], { ts: number; prices: string }>('SELECT ts, prices FROM trades WHERE market_id = ? AND n IN (SELECT value FROM json_each(?)) ORDER BY n'),
    head: db.prepare<[], { seq: number; hash: string }>('SELECT seq, hash FROM ledger ORDER BY seq DESC LIMIT 1'),
    insertLedger: db.prepare('INSERT INTO ledger (seq, ts, kind, agent_id, market_id, amount, detail, prev_hash, hash) VALUES (@seq, @ts, @kind, @agent_id, @market_id, @amount, @detail, @prev_hash, @hash)'),
    ledgerPage: db.prepare<[number, number], LedgerEntry>('SELECT * FROM ledger WHERE seq > ? ORDER BY seq LIMIT ?'),
    ledgerAll: db.prepare<[], LedgerEntry>('SELECT * FROM ledger ORDER BY seq'),
    due: db.prepare<[number], { id: string }>("SELECT id FROM markets WHERE tier = 'play' AND resolved_at IS NULL AND closes_at <= ? ORDER BY closes_at"),
    // the trades in resolved markets, of one agent or (with null) of all
    scored: db.prepare<[{ agent: string | null }], { agent_id: string; market_id: string; ts: number; prices: string; resolution: string; closed: number }>(
      'SELECT t.agent_id, t.market_id, t.ts, t.prices, m.resolution, MIN(m.closes_at, m.resolved_at) AS closed FROM trades t JOIN markets m ON m.id = t.market_id WHERE m.resolved_at IS NOT NULL AND (@agent IS NULL OR t.agent_id = @agent) ORDER BY t.agent_id, t.market_id, t.id',
    ),
  }
}

function hashToken(salt: Buffer, secret: string): Buffer {
  // the secret is 192 random bits, so a fast salted hash suffices: there is nothing to guess by brute force
  return createHash('sha256').update(salt).update(secret).digest()
}

function outcomeIndex(m: MarketRow, outcome: string): number {
  const outcomes = JSON.parse(m.outcomes) as string[]
  const k = outcomes.indexOf(outcome)
  if (k < 0) throw new CrystalError('bad_argument', `"${outcome}" is not an outcome of market ${m.id} (${outcomes.map((o) => `"${o}"`).join(', ')})`, { field: 'outcome' })
  return k
}
