// The market engine's storage: SQLite (better-sqlite3; WAL, synchronous=FULL) under the data dir, and
// the only code that knows its tables. Writes go through a group commit: the jobs that arrive in one
// turn of the event loop run in one transaction (each in its own savepoint), and each is answered
// only after that transaction's COMMIT has reached the disk. After each commit the ledger's head (its
// last entry's seq and hash) is written to a file beside the database, atomically, so that a rewrite
// of the chain inside the table is caught against it (`audit`).
import canonicalize from 'canonicalize'
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  NOT_APPLICABLE,
  type AgentReply,
  type ConservationReply,
  type CreateMarketBody,
  type MarketReply,
  type TradeBody,
} from '../../engine/contracts/markets.js'
import { CrystalError } from '../../engine/errors.js'
import { parseInstant } from '../../engine/markets/instant.js'
import { entryText, GENESIS, verifyChain, type LedgerEntry, type LedgerKind, type Verdict } from '../../engine/markets/ledger.js'
import {
  escrowMinor,
  isShareAmount,
  onShareGrid,
  payoutFor,
  payoutPerShare,
  prices,
  quote,
  SHARE_STEP,
  sharesFor,
  timeWeighted,
  type PricePoint,
} from '../../engine/markets/lmsr.js'
import { parseProposal } from '../../engine/markets/proposal.js'
import { MIN_INDEPENDENT_OWNERS, reputation, traderForecast, type Reputation, type Scored } from '../../engine/markets/reputation.js'
import { openSqlite, sqliteFileFault, type Sqlite, type Statement } from './sqlite.js'

/** The house account that funds labs markets (minted on demand) and takes their remainders; it holds no token. */
export const HOUSE_ID = 'oracle'
/** A play market resolves to its time-weighted prices over this last stretch before the close (or its whole life if shorter). */
export const PLAY_WINDOW_MS = 86_400_000
export const DEFAULT_B = 100
/** At most this many points (plus the last) of a market's price history in a reply: every k-th trade. */
export const HISTORY_POINTS = 200

/** How many markets' GET replies are kept as JSON (marketJson): the busiest few are what is read while trading. */
const SENT_KEPT = 64

/** How often a household may draw the faucet, unless told otherwise: once a day. */
export const FAUCET_PERIOD_MS = 86_400_000

export interface MarketStoreOptions {
  dataDir: string
  /** The faucet, the only source of traders' money: minor units minted to a household (an owner) at most once per `faucetPeriodMs`; 0 turns it off. */
  faucetGrant: number
  faucetPeriodMs?: number
  now?: () => number
  /** Opens an existing database to read and check it (`crystal markets check`), beside a running server. */
  readonly?: boolean
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const iso = (ms: number) => new Date(ms).toISOString()
/** The head file's shape, as writeHead() writes it: {seq, hash} of the ledger's last entry (0 and the genesis when empty). */
const isHead = (v: unknown): v is { seq: number; hash: string } =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  Number.isSafeInteger((v as { seq?: unknown }).seq) &&
  (v as { seq: number }).seq >= 0 &&
  typeof (v as { hash?: unknown }).hash === 'string' &&
  /^[0-9a-f]{64}$/.test((v as { hash: string }).hash)

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }
interface AgentRow {
  id: string
  owner: string
  display_name: string
  kind: string
  salt: Buffer | null
  token_hash: Buffer | null
  balance: number
  created_at: number
}
interface MarketRow {
  cancelled: number
  id: string
  question: string
  outcomes: string
  category: string | null
  tier: 'play' | 'labs'
  b: number
  q: string
  escrow: number
  pool: number
  volume: number
  trades: number
  proposer_id: string | null
  proposer_owner: string | null
  funder_id: string
  created_at: number
  closes_at: number
  resolved_at: number | null
  resolution: string | null
}

// The tables, then their indexes: an older database gets its missing columns between the two (an index may name one).
const TABLES = `
CREATE TABLE IF NOT EXISTS agents (id TEXT PRIMARY KEY, owner TEXT NOT NULL, display_name TEXT NOT NULL, kind TEXT NOT NULL, salt BLOB, token_hash BLOB, balance INTEGER NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS markets (id TEXT PRIMARY KEY, serial INTEGER UNIQUE NOT NULL, question TEXT NOT NULL, outcomes TEXT NOT NULL, category TEXT, tier TEXT NOT NULL, b REAL NOT NULL, q TEXT NOT NULL, escrow INTEGER NOT NULL, pool INTEGER NOT NULL, volume INTEGER NOT NULL DEFAULT 0, trades INTEGER NOT NULL DEFAULT 0, proposer_id TEXT, proposer_owner TEXT, funder_id TEXT NOT NULL, created_at INTEGER NOT NULL, closes_at INTEGER NOT NULL, resolved_at INTEGER, resolution TEXT, cancelled INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS positions (agent_id TEXT NOT NULL, market_id TEXT NOT NULL, outcome INTEGER NOT NULL, shares INTEGER NOT NULL, PRIMARY KEY (agent_id, market_id, outcome));
CREATE TABLE IF NOT EXISTS trades (id INTEGER PRIMARY KEY, market_id TEXT NOT NULL, n INTEGER NOT NULL, agent_id TEXT NOT NULL, outcome INTEGER NOT NULL, shares INTEGER NOT NULL, cost INTEGER NOT NULL, prices TEXT NOT NULL, ts INTEGER NOT NULL, ledger_seq INTEGER NOT NULL, client_ref TEXT);
CREATE TABLE IF NOT EXISTS ledger (seq INTEGER PRIMARY KEY, ts TEXT NOT NULL, kind TEXT NOT NULL, agent_id TEXT, market_id TEXT, amount INTEGER NOT NULL, detail TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS faucet (owner TEXT PRIMARY KEY, drawn_at INTEGER NOT NULL);
`
const INDEXES = `
CREATE UNIQUE INDEX IF NOT EXISTS trades_client_ref ON trades (agent_id, client_ref) WHERE client_ref IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS trades_market ON trades (market_id, n);
CREATE INDEX IF NOT EXISTS trades_agent ON trades (agent_id, market_id);
CREATE INDEX IF NOT EXISTS ledger_market ON ledger (market_id, kind);
`

export class MarketStore {
  readonly file: string
  /** The ledger's head, anchored outside the table: {seq, hash}, replaced atomically after each commit. */
  readonly headFile: string
  private readonly db: Sqlite
  private readonly now: () => number
  private readonly queue: { job: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void }[] = []
  private scheduled = false
  /** One transaction over a batch; each job in a savepoint (a nested transaction), so that a refused job leaves no trace and the others stand. */
  private readonly batch: (jobs: (() => unknown)[]) => Outcome[]
  private readonly s: ReturnType<typeof statements>
  /**
   * Read-only, over a database an older version made: the tables and columns it lacks ("markets.cancelled",
   * "faucet"), read as empty tables and default values. The server adds them on its next start.
   */
  readonly olderSchema: string[] = []
  /** Read-only, over a database from before the head file: there is no head to check yet (the server writes it on its next start). */
  readonly preAnchor: boolean = false
  /** Per market: the JSON of its last GET reply and the state of its row it was made from (marketJson). */
  private readonly sent = new Map<string, { version: string; json: string }>()
  /** Per market: the sampling step of its history, and the points read at that step, by trade number. */
  private readonly sampled = new Map<string, { step: number; points: Map<number, { ts: string; prices: number[] }> }>()

  constructor(private readonly o: MarketStoreOptions) {
    this.file = join(o.dataDir, 'markets.sqlite')
    this.headFile = join(o.dataDir, 'markets.head.json')
    if (o.readonly && !existsSync(this.file))
      throw new CrystalError('not_found', `no market database at ${this.file} (the server creates it on its first start)`, {
        file: this.file,
      })
    mkdirSync(o.dataDir, { recursive: true })
    let db: Sqlite | undefined
    // whether this open has begun writing to the file: a damaged database found before then was left as it was
    let writing = false
    try {
      db = this.db = openSqlite(this.file, { readonly: o.readonly, busyTimeoutMs: 5000 })
      this.now = o.now ?? Date.now
      // a database made before the head was anchored has no faucet table (they came together)
      const unanchored = !this.db
        .prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'faucet'")
        .get()!.n
      if (o.readonly) {
        // an older database is read as the current one, in memory: what it lacks, at its defaults (see olderSchema)
        this.olderSchema = upgradeInMemory(this.db)
        this.preAnchor = unanchored
      } else {
        writing = true
        this.db.exec('PRAGMA journal_mode = WAL')
        // FULL: a commit in WAL mode is on the disk when it returns, so an acknowledged trade survives a crash
        this.db.exec('PRAGMA synchronous = FULL')
        this.db.exec(TABLES)
        upgrade(this.db, this.file)
        this.db.exec(INDEXES)
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
      if (!o.readonly && !this.s.agent.get(HOUSE_ID))
        this.s.insertAgent.run(HOUSE_ID, HOUSE_ID, 'the house (funds labs markets)', 'lab', null, null, this.now())
      // a new database, or one from before the anchor, is anchored where it stands; any other is checked against its head file by audit()
      if (!o.readonly && unanchored && !existsSync(this.headFile)) this.writeHead()
    } catch (e) {
      try {
        db?.close()
      } catch {}
      throw this.damaged(e, !writing)
    }
  }

  /**
   * A SQLite error that says the database file is not one, or is a damaged one, as a ledger_corrupt
   * error naming the file (and whether it was left untouched); any other error as it is.
   */
  private damaged(e: unknown, untouched: boolean): unknown {
    const fault = sqliteFileFault(e)
    if (!fault) return e
    const what = fault === 'notadb' ? 'is not a SQLite database' : 'is a damaged SQLite database'
    return new CrystalError(
      'ledger_corrupt',
      `the market database ${this.file} ${what} (${(e as Error).message})${untouched ? '; the file was left untouched' : ''}`,
      { file: this.file },
      'restore it from a backup, or move it and markets.head.json away for the server to start new, empty books',
    )
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
    // the COMMIT has returned: the head it wrote is on the disk, so the anchor may move to it
    this.writeHead()
    batch.forEach((b, k) => {
      const r = results[k]
      if (r.ok) b.resolve(r.value)
      else b.reject(r.error)
    })
  }

  // ---- the ledger

  private append(kind: LedgerKind, agent_id: string | null, market_id: string | null, amount: number, detail: object): number {
    const head = this.s.head.get()
    const e = {
      seq: (head?.seq ?? 0) + 1,
      ts: iso(this.now()),
      kind,
      agent_id,
      market_id,
      amount,
      detail: canonicalize(detail) ?? '{}',
      prev_hash: head?.hash ?? GENESIS,
    }
    this.s.insertLedger.run({ ...e, hash: sha256(entryText(e)) })
    if (agent_id !== null) this.s.addBalance.run(amount, agent_id)
    return e.seq
  }

  ledger(after: number, limit: number): { entries: LedgerEntry[]; next_after: number | null } {
    const entries = this.s.ledgerPage.all(after, limit)
    return { entries, next_after: entries.length === limit ? entries[entries.length - 1].seq : null }
  }

  verify(): Verdict {
    return this.snapshot(() => verifyChain(this.s.ledgerAll.iterate(), sha256))
  }

  /**
   * Reads in one transaction, so they see one state of the books: the writes come from another
   * connection (the writer's thread), and a commit between two reads would look like lost money.
   */
  private snapshot<T>(read: () => T): T {
    return this.db.transaction(read)()
  }

  /** Replaces the head file by write-then-rename, so that it is never seen half written. Not fsynced: one lagging a crash only names an earlier entry, which anchor() accepts. */
  private writeHead(): void {
    const head = this.s.head.get() ?? { seq: 0, hash: GENESIS }
    const tmp = `${this.headFile}.tmp`
    writeFileSync(tmp, JSON.stringify({ seq: head.seq, hash: head.hash }) + '\n')
    renameSync(tmp, this.headFile)
  }

  /**
   * The table's chain against the head file: the entry the file names must be in the table with that
   * hash (entries after it are allowed: the file is written after each commit and may lag a crash).
   * Null when they agree; otherwise what is wrong.
   */
  anchor(): string | null {
    let text: string
    try {
      text = readFileSync(this.headFile, 'utf8')
    } catch (e) {
      const last = this.s.head.get()
      // a database from before the anchor, read before the server's next start: there is no head yet to check
      return last && !this.preAnchor
        ? `the head file ${this.headFile} is missing or unreadable (${(e as Error).message}) while the ledger holds ${last.seq} entries`
        : null
    }
    // a head file that is there is checked, whatever the database's age (the server anchors at start only where there is none)
    let head: unknown
    try {
      head = JSON.parse(text)
    } catch (e) {
      return `the head file ${this.headFile} is malformed (not JSON: ${(e as Error).message.replace(/\s+/g, ' ')})`
    }
    if (!isHead(head)) {
      const shown = JSON.stringify(head)
      return `the head file ${this.headFile} is malformed (expected {"seq": a whole number from 0, "hash": 64 lowercase hex digits}, found ${shown.length > 160 ? `${shown.slice(0, 157)}...` : shown})`
    }
    if (head.seq === 0)
      return head.hash === GENESIS ? null : `the head file ${this.headFile} names entry 0 with a hash other than the genesis`
    const e = this.s.entry.get(head.seq)
    if (!e)
      return `the head file ${this.headFile} names entry ${head.seq}, and the ledger ends at ${this.s.head.get()?.seq ?? 0} (entries were deleted)`
    if (e.hash !== head.hash) return `entry ${head.seq}'s hash is not the one in the head file ${this.headFile} (the chain was rewritten)`
    return null
  }

  /** Everything `crystal markets check` and the server's start check: the chain, its anchor, and money, positions, q and trades replayed from the ledger. Empty when all hold. */
  audit(): { chain: Verdict; anchor: string | null; conservation: ConservationReply; problems: string[] } {
    // the anchor first: it reads the head file before the snapshot starts, so the file can only lag it
    let read: { chain: Verdict; anchor: string | null; conservation: ConservationReply }
    try {
      read = this.snapshot(() => ({ anchor: this.anchor(), chain: this.verify(), conservation: this.conservation() }))
    } catch (e) {
      // a page damaged past the schema shows only when it is read; a read-only store has written nothing
      throw this.damaged(e, this.o.readonly === true)
    }
    const { chain, anchor, conservation } = read
    const problems = [
      ...(chain.ok ? [] : [`the ledger chain breaks at entry ${chain.first_bad}: ${chain.reason}`]),
      ...(anchor ? [anchor] : []),
      ...conservation.mismatches,
    ]
    return { chain, anchor, conservation, problems }
  }

  // ---- agents

  /**
   * A new agent with its bearer token (`<id>:<secret>`, returned only here); linked to `owner`'s
   * household when registered with a household token. With `fund`, it draws the faucet for its
   * household when the household may draw now (otherwise it starts at 0, without an error).
   */
  register(
    body: { id?: string; display_name: string; kind: string },
    owner?: string,
    fund = true,
  ): Promise<{ agent: AgentReply; token: string }> {
    return this.write(() => {
      const id = body.id ?? `agent-${randomBytes(6).toString('hex')}`
      if (this.s.agent.get(id))
        throw new CrystalError('conflict', `the agent id ${id} is taken; register another id (or none, to be given one)`, { field: 'id' })
      const secret = randomBytes(24).toString('base64url')
      const salt = randomBytes(16)
      this.s.insertAgent.run(id, owner ?? id, body.display_name, body.kind, salt, hashToken(salt, secret), this.now())
      if (fund && this.o.faucetGrant > 0 && this.nextDraw(owner ?? id) === null) this.draw(id, owner ?? id)
      return { agent: this.agent(id), token: `${id}:${secret}` }
    })
  }

  /** When `owner`'s household may draw the faucet next (ms), or null when it may now. */
  private nextDraw(owner: string): number | null {
    const last = this.s.faucetDrawn.get(owner)?.drawn_at
    const next = last === undefined ? null : last + (this.o.faucetPeriodMs ?? FAUCET_PERIOD_MS)
    return next !== null && next > this.now() ? next : null
  }

  private draw(id: string, owner: string): void {
    this.s.faucetDraw.run(owner, this.now())
    this.append('mint', id, null, this.o.faucetGrant, { reason: 'faucet', owner })
  }

  /** The faucet: mints the grant to agent `id`, at most once per period for its household; 403 when off, 409 (naming the next time) when drawn too soon. */
  faucet(id: string): Promise<AgentReply> {
    return this.write(() => {
      const a = this.s.agent.get(id)
      if (!a || a.id === HOUSE_ID) throw new CrystalError('not_found', `no agent ${id}`, { field: 'id' })
      if (this.o.faucetGrant <= 0) throw new CrystalError('forbidden', 'the faucet is off on this server (SVC_MARKETS_START_BALANCE=0)')
      const next = this.nextDraw(a.owner)
      if (next !== null)
        throw new CrystalError(
          'conflict',
          `the household of ${a.owner} drew the faucet less than a period ago; it may draw again at ${iso(next)}`,
          { field: 'id' },
        )
      this.draw(id, a.owner)
      return this.agent(id)
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
    if (!ok)
      throw new CrystalError(
        'unauthorized',
        id ? `this route needs Authorization: Bearer <the token of ${id}>` : 'this route needs Authorization: Bearer <an agent token>',
      )
    if (id !== undefined && row!.id !== id)
      throw new CrystalError('forbidden', `the token is ${row!.id}'s, not ${id}'s`, { field: 'trader_id' })
    return row!
  }

  agent(id: string): AgentReply {
    const a = this.s.agent.get(id)
    if (!a) throw new CrystalError('not_found', `no agent ${id}`, { field: 'id' })
    const positions = this.s.agentPositions
      .all(id)
      .map((p) => ({ market_id: p.market_id, outcome: (JSON.parse(p.outcomes) as string[])[p.outcome], shares: p.shares }))
    return {
      id: a.id,
      display_name: a.display_name,
      kind: a.kind,
      owner: a.owner,
      balance: a.balance,
      positions,
      reputation: this.reputations(id).get(id) ?? reputation([]),
      created_at: iso(a.created_at),
    }
  }

  /**
   * Reputation (engine/markets/reputation), of one agent or of all, over the resolved markets with
   * independent activity (traders of MIN_INDEPENDENT_OWNERS households or more), each weighted by
   * what the trader paid into it.
   */
  reputations(agentId: string | null = null): Map<string, Reputation> {
    const byAgent = new Map<string, Scored[]>()
    let key = ''
    let points: PricePoint[] = []
    let stake = 0
    let last: { agent_id: string; resolution: string; closed: number } | undefined
    const finish = () => {
      if (!last || points.length === 0 || stake <= 0) return
      const list = byAgent.get(last.agent_id) ?? []
      list.push({ forecast: traderForecast(points, last.closed), outcome: JSON.parse(last.resolution), stake })
      byAgent.set(last.agent_id, list)
    }
    for (const r of this.s.scored.iterate({ agent: agentId, owners: MIN_INDEPENDENT_OWNERS })) {
      const k = `${r.agent_id}\u0000${r.market_id}`
      if (k !== key) {
        finish()
        key = k
        points = []
        stake = 0
      }
      points.push({ t: r.ts, p: JSON.parse(r.prices) })
      stake += Math.max(0, r.cost)
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
      // the schema's date-time format lets through 2026-02-30 and instants past 9999 in UTC; replies could not write them back
      const closes = parseInstant(body.closes_at, 'closes_at')
      if (!(closes > this.now()))
        throw new CrystalError('bad_argument', `closes_at ${body.closes_at} is not in the future`, { field: 'closes_at' })
      const b = body.b ?? DEFAULT_B
      const n = body.outcomes.length
      const escrow = escrowMinor(b, n)
      const funder = body.tier === 'labs' ? HOUSE_ID : proposer!.id
      const serial = this.s.nextSerial.get()!.n
      const id = `MKT-${String(serial).padStart(6, '0')}`
      this.s.insertMarket.run({
        id,
        serial,
        question: body.question,
        outcomes: JSON.stringify(body.outcomes),
        category: body.category ?? null,
        tier: body.tier,
        b,
        q: JSON.stringify(new Array(n).fill(0)),
        escrow,
        proposer_id: proposer?.id ?? null,
        proposer_owner: proposer?.owner ?? null,
        funder_id: funder,
        created_at: this.now(),
        closes_at: closes,
      })
      if (funder === HOUSE_ID) this.append('mint', HOUSE_ID, id, escrow, { reason: 'escrow for a labs market' })
      else if (this.s.agent.get(funder)!.balance < escrow)
        throw new CrystalError(
          'insufficient_funds',
          `opening this market escrows b ln n = ${escrow} minor units, and ${funder} holds ${this.s.agent.get(funder)!.balance}`,
          { field: 'b' },
        )
      this.append('escrow', funder, id, -escrow, { b, outcomes: n })
      return this.market(id, false)
    })
  }

  /** A proposal (document 2's format) opens a yes/no play market escrowed by its proposer. */
  propose(proposer: AgentRow, text: string, b = DEFAULT_B): Promise<MarketReply> {
    const p = parseProposal(text, this.now())
    return this.createMarket(
      { question: p.claim, outcomes: ['yes', 'no'], b, tier: 'play', closes_at: iso(p.closes_at), category: p.category },
      proposer,
    )
  }

  private row(id: string): MarketRow {
    const m = this.s.market.get(id)
    if (!m) throw new CrystalError('not_found', `no market ${id}`, { field: 'id' })
    return m
  }

  private reply(m: MarketRow, history: boolean): MarketReply {
    const q = JSON.parse(m.q) as number[]
    const status = m.cancelled ? 'cancelled' : m.resolved_at !== null ? 'resolved' : this.now() >= m.closes_at ? 'closed' : 'open'
    const out: MarketReply = {
      id: m.id,
      question: m.question,
      outcomes: JSON.parse(m.outcomes),
      category: m.category,
      tier: m.tier,
      status,
      b: m.b,
      q,
      prices: prices(q, m.b),
      volume: m.volume,
      trades: m.trades,
      escrow: m.escrow,
      pool: m.pool,
      proposer_id: m.proposer_id,
      created_at: iso(m.created_at),
      closes_at: iso(m.closes_at),
      resolved_at: m.resolved_at === null ? null : iso(m.resolved_at),
      resolution: m.resolution === null ? null : JSON.parse(m.resolution),
    }
    if (history) {
      // every step-th trade and the last: a chart's worth, however many trades there were
      const step = Math.max(1, Math.ceil(m.trades / HISTORY_POINTS))
      const wanted = Array.from({ length: Math.ceil(m.trades / step) }, (_, k) => 1 + k * step)
      if (m.trades > 0 && wanted[wanted.length - 1] !== m.trades) wanted.push(m.trades)
      // a trade's row never changes, so the points already read are kept: a GET while trading reads only the new last one
      const kept = this.sampled.get(m.id)
      const cache =
        kept && kept.step === step && kept.points.size <= wanted.length + HISTORY_POINTS
          ? kept
          : { step, points: new Map<number, { ts: string; prices: number[] }>() }
      this.sampled.set(m.id, cache)
      const missing = wanted.filter((n) => !cache.points.has(n))
      if (missing.length > 0)
        for (const h of this.s.sampledHistory.all(m.id, JSON.stringify(missing)))
          cache.points.set(h.n, { ts: iso(h.ts), prices: JSON.parse(h.prices) })
      out.history = [
        { ts: iso(m.created_at), prices: prices(new Array(q.length).fill(0), m.b) },
        ...wanted.map((n) => cache.points.get(n)!),
      ]
    }
    return out
  }

  market(id: string, history = true): MarketReply {
    return this.reply(this.row(id), history)
  }

  /**
   * The market with its history as JSON text, for GET: kept per market and sent again until a trade,
   * a settlement or the close changes what it says (all read from its row, which each GET reads anyway).
   * Building and serialising the 200-point history is most of a GET's work; under trading, reads outnumber trades.
   */
  marketJson(id: string): string {
    const m = this.row(id)
    const version = `${m.trades} ${m.resolved_at} ${m.cancelled} ${m.closes_at} ${this.now() >= m.closes_at}`
    const kept = this.sent.get(id)
    if (kept?.version === version) return kept.json
    const json = JSON.stringify(this.reply(m, true))
    this.sent.delete(id)
    this.sent.set(id, { version, json })
    // the most recently changed markets only: a Map iterates in insertion order, so the first is the oldest
    if (this.sent.size > SENT_KEPT) this.sent.delete(this.sent.keys().next().value!)
    return json
  }

  markets(q: { sort?: 'volume' | 'created' | 'closing'; tier?: 'play' | 'labs'; status?: MarketReply['status'] }): MarketReply[] {
    const order = { volume: 'volume DESC, serial', created: 'serial DESC', closing: 'closes_at, serial' }[q.sort ?? 'volume']
    const status = {
      open: 'resolved_at IS NULL AND closes_at > @now',
      closed: 'resolved_at IS NULL AND closes_at <= @now',
      resolved: 'resolved_at IS NOT NULL AND cancelled = 0',
      cancelled: 'cancelled = 1',
    }
    const where = [q.tier ? 'tier = @tier' : '1', q.status ? status[q.status] : '1'].join(' AND ')
    const rows = this.db
      .prepare<[{ now: number; tier?: string }], MarketRow>(`SELECT * FROM markets WHERE ${where} ORDER BY ${order} LIMIT 500`)
      .all({ now: this.now(), ...(q.tier ? { tier: q.tier } : {}) })
    return rows.map((m) => this.reply(m, false))
  }

  /** The cost of a trade now, without making it; 409 when the market no longer trades. */
  quote(
    id: string,
    outcome: string,
    amount: { shares?: number; spend?: number },
  ): { shares: number; cost: number; prices_after: number[] } {
    const m = this.row(id)
    this.mustTrade(m)
    const k = outcomeIndex(m, outcome)
    const q = JSON.parse(m.q) as number[]
    const shares = sharesOf(q, m.b, k, amount)
    const r = quote(q, m.b, k, shares)
    return { shares, cost: r.cost, prices_after: r.prices }
  }

  /** Refuses a trade or quote in a market that is settled, called off or past its close (409). */
  private mustTrade(m: MarketRow): void {
    if (m.cancelled) throw new CrystalError('conflict', `market ${m.id} was cancelled at ${iso(m.resolved_at!)}`, { field: 'id' })
    if (m.resolved_at !== null) throw new CrystalError('conflict', `market ${m.id} is resolved`, { field: 'id' })
    if (this.now() >= m.closes_at) throw new CrystalError('conflict', `market ${m.id} closed at ${iso(m.closes_at)}`, { field: 'id' })
  }

  /** One trade: the proposer's household is refused, a sale is limited to what is held, a buy to the balance. */
  trade(id: string, trader: AgentRow, body: TradeBody) {
    return this.write(() => {
      const m = this.row(id)
      const ref = body.client_ref ?? null
      const done = ref === null ? undefined : this.s.byClientRef.get(trader.id, ref)
      if (done) {
        if (
          done.market_id !== id ||
          outcomeIndex(m, body.outcome) !== done.outcome ||
          (body.shares !== undefined && done.shares !== onShareGrid(body.shares))
        )
          throw new CrystalError(
            'conflict',
            `client_ref ${ref} already names another trade of ${trader.id} (${done.shares} of outcome ${done.outcome + 1} in ${done.market_id})`,
            { field: 'client_ref' },
          )
        const balance = this.s.agent.get(trader.id)!.balance
        return {
          trade_id: done.id,
          market_id: id,
          trader_id: trader.id,
          outcome: body.outcome,
          shares: done.shares,
          cost: done.cost,
          balance,
          prices: JSON.parse(done.prices) as number[],
          ledger_seq: done.ledger_seq,
          client_ref: ref ?? undefined,
          replayed: true,
        }
      }
      this.mustTrade(m)
      const t = this.s.agent.get(trader.id)!
      if (m.proposer_owner !== null && t.owner === m.proposer_owner)
        throw new CrystalError(
          'forbidden',
          `${t.id} is of the household of ${m.proposer_id}, who proposed market ${id}: a proposer cannot trade in their own market`,
          { field: 'trader_id' },
        )
      const k = outcomeIndex(m, body.outcome)
      const q = JSON.parse(m.q) as number[]
      const shares = sharesOf(q, m.b, k, body)
      const held = this.s.position.get(t.id, id, k)?.shares ?? 0
      if (onShareGrid(held + shares) < 0)
        throw new CrystalError('insufficient_funds', `${t.id} holds ${held} shares of "${body.outcome}" and cannot sell ${-shares}`, {
          field: 'shares',
        })
      const r = quote(q, m.b, k, shares)
      if (r.cost > t.balance)
        throw new CrystalError('insufficient_funds', `the trade costs ${r.cost} minor units and ${t.id} holds ${t.balance}`, {
          field: body.spend === undefined ? 'shares' : 'spend',
        })
      this.s.applyTrade.run(JSON.stringify(r.q), r.cost, Math.abs(r.cost), id)
      this.s.setPosition.run(t.id, id, k, onShareGrid(held + shares))
      const seq = this.append('trade', t.id, id, -r.cost, {
        outcome: body.outcome,
        shares,
        prices: r.prices,
        ...(body.spend === undefined ? {} : { spend: body.spend }),
        ...(ref === null ? {} : { client_ref: ref }),
      })
      const info = this.s.insertTrade.run(id, m.trades + 1, t.id, k, shares, r.cost, JSON.stringify(r.prices), this.now(), seq, ref)
      return {
        trade_id: Number(info.lastInsertRowid),
        market_id: id,
        trader_id: t.id,
        outcome: body.outcome,
        shares,
        cost: r.cost,
        balance: t.balance - r.cost,
        prices: r.prices,
        ledger_seq: seq,
        client_ref: ref ?? undefined,
        replayed: false,
      }
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
      this.mustBeUnsettled(m)
      if (m.tier === 'labs' && outcome === NOT_APPLICABLE) return this.callOff(m, 'resolved N/A')
      const n = (JSON.parse(m.outcomes) as string[]).length
      let resolution: number[]
      if (m.tier === 'labs') {
        if (outcome === undefined)
          throw new CrystalError('bad_argument', 'a labs market is resolved with {"outcome": "<the outcome that happened>"}', {
            field: 'outcome',
          })
        const k = outcomeIndex(m, outcome)
        resolution = Array.from({ length: n }, (_, j) => (j === k ? 1 : 0))
      } else {
        if (outcome !== undefined)
          throw new CrystalError(
            'bad_argument',
            'a play market resolves by its rule (time-weighted prices over its last day), not by a given outcome',
            { field: 'outcome' },
          )
        if (this.now() < m.closes_at)
          throw new CrystalError('conflict', `play market ${id} resolves by its rule at its close, ${iso(m.closes_at)}`, { field: 'id' })
        const points = this.s.history.all(id).map((h) => ({ t: h.ts, p: JSON.parse(h.prices) as number[] }))
        resolution = timeWeighted(
          points,
          prices(new Array(n).fill(0), m.b),
          Math.max(m.created_at, m.closes_at - PLAY_WINDOW_MS),
          m.closes_at,
        )
      }
      const pays = payoutPerShare(resolution)
      const owed = new Map<string, number>()
      for (const [agent, h] of this.holdings(m)) owed.set(agent, payoutFor(h.shares, pays))
      const paid = [...owed.values()].reduce((a, x) => a + x, 0)
      if (paid > m.pool) throw new CrystalError('internal', `market ${id} owes ${paid} but its pool holds ${m.pool}`)
      for (const [agent, amount] of owed) if (amount > 0) this.append('payout', agent, id, amount, { resolution })
      const refund = m.pool - paid
      if (refund > 0) this.append('refund', m.funder_id, id, refund, { reason: 'what the pool kept after paying the winners' })
      this.s.settle.run(this.now(), JSON.stringify(resolution), 0, id)
      return { market: this.market(id, false), paid_out: paid, refunded: refund, ledger_head: this.s.head.get()!.hash }
    })
  }

  private mustBeUnsettled(m: MarketRow): void {
    if (m.resolved_at !== null)
      throw new CrystalError(
        'conflict',
        `market ${m.id} was already ${m.cancelled ? 'cancelled' : 'resolved'} at ${iso(m.resolved_at)}; settlement pays once`,
        { field: 'id' },
      )
  }

  /**
   * Each holder's shares per outcome and net cost in market `m`, replayed from its trade entries on the
   * ledger (the hash-chained record), and refused (ledger_corrupt) when the positions table disagrees:
   * a forged holding is not paid.
   */
  private holdings(m: MarketRow): Map<string, { shares: number[]; cost: number }> {
    const outcomes = JSON.parse(m.outcomes) as string[]
    const out = new Map<string, { shares: number[]; cost: number }>()
    for (const e of this.s.marketTrades.iterate(m.id)) {
      const d = JSON.parse(e.detail) as { outcome: string; shares: number }
      const h = out.get(e.agent_id) ?? { shares: new Array<number>(outcomes.length).fill(0), cost: 0 }
      const k = outcomes.indexOf(d.outcome)
      h.shares[k] = onShareGrid(h.shares[k] + d.shares)
      h.cost -= e.amount
      out.set(e.agent_id, h)
    }
    for (const p of this.s.marketPositions.iterate(m.id)) {
      const replay = out.get(p.agent_id)?.shares[p.outcome] ?? 0
      if (replay !== p.shares)
        throw new CrystalError(
          'ledger_corrupt',
          `market ${m.id}: ${p.agent_id} holds ${p.shares} of "${outcomes[p.outcome]}" in the positions table and ${replay} by the ledger; nothing was settled (run crystal markets check)`,
        )
    }
    return out
  }

  /**
   * Calls a market off (a cancel, or a labs market resolved N/A): every trader gets back what they
   * paid in net, at cost (none is taken from a trader who sold at a profit); if the pool cannot cover
   * that, each is paid the same share of it, rounded down; the funder gets what is left.
   */
  private callOff(m: MarketRow, why: string) {
    const owed = new Map<string, number>()
    for (const [agent, h] of this.holdings(m)) if (h.cost > 0) owed.set(agent, h.cost)
    const total = [...owed.values()].reduce((a, x) => a + x, 0)
    let paid = 0
    for (const [agent, cost] of owed) {
      const amount = total <= m.pool ? cost : Math.floor((cost * m.pool) / total)
      if (amount > 0) this.append('refund', agent, m.id, amount, { reason: `${why}: refund at cost`, cost })
      paid += amount
    }
    const rest = m.pool - paid
    if (rest > 0) this.append('refund', m.funder_id, m.id, rest, { reason: `${why}: the pool's remainder after the refunds` })
    this.s.settle.run(this.now(), null, 1, m.id)
    return { market: this.market(m.id, false), paid_out: paid, refunded: rest, ledger_head: this.s.head.get()!.hash }
  }

  /** Cancels an unsettled market, refunding at cost (callOff). Who may is the routes' rule (the oracle; a play market's proposer). */
  cancel(id: string) {
    return this.write(() => {
      const m = this.row(id)
      this.mustBeUnsettled(m)
      return this.callOff(m, 'cancelled')
    })
  }

  /** Closes an open market now: no more trades; a play market then settles by its rule, a labs market waits for the oracle. */
  closeNow(id: string): Promise<MarketReply> {
    return this.write(() => {
      const m = this.row(id)
      this.mustTrade(m)
      this.s.closeAt.run(this.now(), id)
      return this.market(id, false)
    })
  }

  // ---- the money check

  /** minted = balances + escrow + pools, and every balance, pool, holding, q and trade row equal to its ledger replay. */
  conservation(): ConservationReply {
    return this.snapshot(() => this.books())
  }

  private books(): ConservationReply {
    const one = <T>(sql: string) => this.db.prepare<[], T>(sql).get()!
    const minted = one<{ v: number }>("SELECT COALESCE(SUM(amount), 0) AS v FROM ledger WHERE kind = 'mint'").v
    const balances = one<{ v: number }>('SELECT COALESCE(SUM(balance), 0) AS v FROM agents').v
    const open = one<{ escrow: number; pool: number }>(
      'SELECT COALESCE(SUM(escrow), 0) AS escrow, COALESCE(SUM(pool), 0) AS pool FROM markets WHERE resolved_at IS NULL',
    )
    const settledPools = one<{ v: number }>('SELECT COALESCE(SUM(pool), 0) AS v FROM markets WHERE resolved_at IS NOT NULL').v
    const paid_out = one<{ v: number }>("SELECT COALESCE(SUM(amount), 0) AS v FROM ledger WHERE kind = 'payout'").v
    const refunded = one<{ v: number }>("SELECT COALESCE(SUM(amount), 0) AS v FROM ledger WHERE kind = 'refund'").v
    const mismatches: string[] = []
    if (minted !== balances + open.pool + settledPools)
      mismatches.push(`minted ${minted} != balances ${balances} + market pools ${open.pool + settledPools}`)
    if (settledPools !== 0) mismatches.push(`settled markets still hold ${settledPools}`)
    for (const r of this.db
      .prepare<[], { id: string; balance: number; replay: number }>(
        'SELECT a.id, a.balance, COALESCE((SELECT SUM(amount) FROM ledger l WHERE l.agent_id = a.id), 0) AS replay FROM agents a',
      )
      .iterate()) {
      if (r.balance !== r.replay) mismatches.push(`agent ${r.id}: balance ${r.balance}, ledger says ${r.replay}`)
    }
    for (const r of this.db
      .prepare<[], { id: string; pool: number; replay: number }>(
        "SELECT m.id, m.pool, COALESCE((SELECT -SUM(amount) FROM ledger l WHERE l.market_id = m.id AND l.kind <> 'mint'), 0) AS replay FROM markets m",
      )
      .iterate()) {
      if (r.pool !== r.replay) mismatches.push(`market ${r.id}: pool ${r.pool}, ledger says ${r.replay}`)
    }
    const positions = this.replayHoldings(mismatches)
    return {
      ok: mismatches.length === 0,
      minted,
      balances,
      escrow: open.escrow,
      pools: open.pool - open.escrow,
      paid_out,
      refunded,
      positions,
      mismatches,
    }
  }

  /**
   * Replays every trade entry of the ledger, in order, into holdings, q and trade counts, and names
   * each row of positions, markets and trades that differs from it. Returns the holdings replayed.
   */
  private replayHoldings(mismatches: string[]): number {
    const markets = new Map<string, { outcomes: string[]; q: number[]; trades: number }>()
    for (const m of this.db.prepare<[], { id: string; outcomes: string }>('SELECT id, outcomes FROM markets').iterate()) {
      const outcomes = JSON.parse(m.outcomes) as string[]
      markets.set(m.id, { outcomes, q: new Array<number>(outcomes.length).fill(0), trades: 0 })
    }
    const held = new Map<string, number>()
    const bySeq = new Map<number, { agent_id: string | null; market_id: string | null; amount: number; outcome: number; shares: number }>()
    for (const e of this.db
      .prepare<[], { seq: number; agent_id: string | null; market_id: string | null; amount: number; detail: string }>(
        "SELECT seq, agent_id, market_id, amount, detail FROM ledger WHERE kind = 'trade' ORDER BY seq",
      )
      .iterate()) {
      const m = markets.get(e.market_id ?? '')
      const d = JSON.parse(e.detail) as { outcome?: string; shares?: number }
      const k = m?.outcomes.indexOf(d.outcome ?? '') ?? -1
      if (!m || k < 0 || typeof d.shares !== 'number') {
        mismatches.push(`ledger entry ${e.seq}: a trade of no known market and outcome`)
        continue
      }
      const key = `${e.agent_id}\u0000${e.market_id}\u0000${k}`
      held.set(key, onShareGrid((held.get(key) ?? 0) + d.shares))
      m.q[k] = onShareGrid(m.q[k] + d.shares)
      m.trades++
      bySeq.set(e.seq, { agent_id: e.agent_id, market_id: e.market_id, amount: e.amount, outcome: k, shares: d.shares })
    }
    const replayed = held.size
    for (const p of this.db
      .prepare<[], { agent_id: string; market_id: string; outcome: number; shares: number }>(
        'SELECT agent_id, market_id, outcome, shares FROM positions',
      )
      .iterate()) {
      const key = `${p.agent_id}\u0000${p.market_id}\u0000${p.outcome}`
      const replay = held.get(key) ?? 0
      held.delete(key)
      if (replay !== p.shares)
        mismatches.push(`position of ${p.agent_id} in ${p.market_id} (outcome ${p.outcome + 1}): ${p.shares} shares, ledger says ${replay}`)
    }
    for (const [key, shares] of held) {
      const [agent, market, k] = key.split('\u0000')
      if (shares !== 0) mismatches.push(`position of ${agent} in ${market} (outcome ${Number(k) + 1}): missing, ledger says ${shares}`)
    }
    for (const r of this.db.prepare<[], { id: string; q: string; trades: number }>('SELECT id, q, trades FROM markets').iterate()) {
      const m = markets.get(r.id)!
      const q = JSON.parse(r.q) as number[]
      if (q.some((x, k) => x !== m.q[k])) mismatches.push(`market ${r.id}: q ${r.q}, ledger says ${JSON.stringify(m.q)}`)
      if (r.trades !== m.trades) mismatches.push(`market ${r.id}: ${r.trades} trades, ledger says ${m.trades}`)
    }
    let rows = 0
    for (const t of this.db
      .prepare<[], { id: number; market_id: string; agent_id: string; outcome: number; shares: number; cost: number; ledger_seq: number }>(
        'SELECT id, market_id, agent_id, outcome, shares, cost, ledger_seq FROM trades',
      )
      .iterate()) {
      rows++
      const e = bySeq.get(t.ledger_seq)
      if (
        !e ||
        e.agent_id !== t.agent_id ||
        e.market_id !== t.market_id ||
        e.amount !== -t.cost ||
        e.outcome !== t.outcome ||
        e.shares !== t.shares
      )
        mismatches.push(`trade ${t.id}: not what ledger entry ${t.ledger_seq} records`)
    }
    if (rows !== bySeq.size) mismatches.push(`${rows} trade rows, ledger says ${bySeq.size}`)
    return replayed
  }
}

interface Column {
  name: string
  type: string
  notnull: number
  dflt_value: string | null
}

/** What `db` lacks of TABLES, as an older version made it: whole tables (with their CREATE statements), and columns of the tables it has. */
function missingParts(db: Sqlite): { tables: { name: string; sql: string }[]; columns: { table: string; column: Column }[] } {
  // the current tables, made in memory: TABLES stays the one place their columns are written
  const current = openSqlite(':memory:')
  try {
    current.exec(TABLES)
    const out = { tables: [] as { name: string; sql: string }[], columns: [] as { table: string; column: Column }[] }
    for (const t of current.prepare<[], { name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all()) {
      const has = new Set(
        db
          .prepare<[], { name: string }>(`PRAGMA main.table_info(${t.name})`)
          .all()
          .map((c) => c.name),
      )
      if (has.size === 0) out.tables.push(t)
      else
        for (const column of current.prepare<[], Column>(`PRAGMA table_info(${t.name})`).all())
          if (!has.has(column.name)) out.columns.push({ table: t.name, column })
    }
    return out
  } finally {
    current.close()
  }
}

/** Adds the columns an older version's tables lack (TABLES has made the tables it lacked), each at its default. */
function upgrade(db: Sqlite, file: string): void {
  for (const { table, column: c } of missingParts(db).columns) {
    if (c.notnull && c.dflt_value === null)
      throw new CrystalError(
        'conflict',
        `the market database ${file} is from a version too old to upgrade: its table ${table} has no column ${c.name}, which has no default`,
        { file },
      )
    db.exec(
      `ALTER TABLE ${table} ADD COLUMN ${c.name} ${c.type}${c.notnull ? ' NOT NULL' : ''}${c.dflt_value === null ? '' : ` DEFAULT ${c.dflt_value}`}`,
    )
  }
}

/**
 * A read-only connection's reading of an older database as the current one, written nowhere: a missing
 * table is an empty temporary table, a table that lacks columns is a temporary view adding them at their
 * defaults (NULL where there is none); a temporary object hides main's of the same name. Returns what was missing.
 */
function upgradeInMemory(db: Sqlite): string[] {
  const { tables, columns } = missingParts(db)
  for (const t of tables) db.exec(t.sql.replace(/^CREATE TABLE/, 'CREATE TEMP TABLE'))
  for (const table of new Set(columns.map((c) => c.table))) {
    const added = columns.filter((c) => c.table === table).map((c) => `${c.column.dflt_value ?? 'NULL'} AS ${c.column.name}`)
    db.exec(`CREATE TEMP VIEW ${table} AS SELECT *, ${added.join(', ')} FROM main.${table}`)
  }
  return [...tables.map((t) => t.name), ...columns.map((c) => `${c.table}.${c.column.name}`)]
}

function statements(db: Sqlite) {
  // each prepared on its first use: a read-only store over an older database never prepares the writes its temporary views could not take
  const prepare = <P extends unknown[] = unknown[], R = unknown>(sql: string): Statement<P, R> => {
    let made: Statement<P, R> | undefined
    const it = () => (made ??= db.prepare<P, R>(sql))
    return {
      run: (...p) => it().run(...p),
      get: (...p) => it().get(...p),
      all: (...p) => it().all(...p),
      iterate: (...p) => it().iterate(...p),
    }
  }
  return {
    agent: prepare<[string], AgentRow>('SELECT * FROM agents WHERE id = ?'),
    insertAgent: prepare(
      'INSERT INTO agents (id, owner, display_name, kind, salt, token_hash, balance, created_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?)',
    ),
    addBalance: prepare('UPDATE agents SET balance = balance + ? WHERE id = ?'),
    market: prepare<[string], MarketRow>('SELECT * FROM markets WHERE id = ?'),
    nextSerial: prepare<[], { n: number }>('SELECT COALESCE(MAX(serial), 0) + 1 AS n FROM markets'),
    insertMarket: prepare(
      'INSERT INTO markets (id, serial, question, outcomes, category, tier, b, q, escrow, pool, proposer_id, proposer_owner, funder_id, created_at, closes_at) VALUES (@id, @serial, @question, @outcomes, @category, @tier, @b, @q, @escrow, @escrow, @proposer_id, @proposer_owner, @funder_id, @created_at, @closes_at)',
    ),
    applyTrade: prepare('UPDATE markets SET q = ?, pool = pool + ?, volume = volume + ?, trades = trades + 1 WHERE id = ?'),
    settle: prepare('UPDATE markets SET resolved_at = ?, resolution = ?, cancelled = ?, pool = 0 WHERE id = ?'),
    closeAt: prepare('UPDATE markets SET closes_at = ? WHERE id = ?'),
    marketTrades: prepare<[string], { agent_id: string; amount: number; detail: string }>(
      "SELECT agent_id, amount, detail FROM ledger WHERE market_id = ? AND kind = 'trade' ORDER BY seq",
    ),
    marketPositions: prepare<[string], { agent_id: string; outcome: number; shares: number }>(
      'SELECT agent_id, outcome, shares FROM positions WHERE market_id = ? AND shares <> 0',
    ),
    entry: prepare<[number], { seq: number; hash: string }>('SELECT seq, hash FROM ledger WHERE seq = ?'),
    faucetDrawn: prepare<[string], { drawn_at: number }>('SELECT drawn_at FROM faucet WHERE owner = ?'),
    faucetDraw: prepare(
      'INSERT INTO faucet (owner, drawn_at) VALUES (?, ?) ON CONFLICT (owner) DO UPDATE SET drawn_at = excluded.drawn_at',
    ),
    position: prepare<[string, string, number], { shares: number }>(
      'SELECT shares FROM positions WHERE agent_id = ? AND market_id = ? AND outcome = ?',
    ),
    // the new holding, summed on the share grid in JavaScript exactly as the ledger replay sums it
    setPosition: prepare(
      'INSERT INTO positions (agent_id, market_id, outcome, shares) VALUES (?, ?, ?, ?) ON CONFLICT (agent_id, market_id, outcome) DO UPDATE SET shares = excluded.shares',
    ),
    agentPositions: prepare<[string], { market_id: string; outcomes: string; outcome: number; shares: number }>(
      'SELECT p.market_id, m.outcomes, p.outcome, p.shares FROM positions p JOIN markets m ON m.id = p.market_id WHERE p.agent_id = ? AND p.shares <> 0 AND m.resolved_at IS NULL ORDER BY p.market_id, p.outcome',
    ),
    insertTrade: prepare(
      'INSERT INTO trades (market_id, n, agent_id, outcome, shares, cost, prices, ts, ledger_seq, client_ref) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    byClientRef: prepare<
      [string, string],
      { id: number; market_id: string; outcome: number; shares: number; cost: number; prices: string; ledger_seq: number }
    >('SELECT id, market_id, outcome, shares, cost, prices, ledger_seq FROM trades WHERE agent_id = ? AND client_ref = ?'),
    history: prepare<[string], { ts: number; prices: string }>('SELECT ts, prices FROM trades WHERE market_id = ? ORDER BY n'),
    // chosen trades by their number in the market (a JSON array): one index lookup each
    sampledHistory: prepare<[string, string], { n: number; ts: number; prices: string }>(
      'SELECT n, ts, prices FROM trades WHERE market_id = ? AND n IN (SELECT value FROM json_each(?)) ORDER BY n',
    ),
    head: prepare<[], { seq: number; hash: string }>('SELECT seq, hash FROM ledger ORDER BY seq DESC LIMIT 1'),
    insertLedger: prepare(
      'INSERT INTO ledger (seq, ts, kind, agent_id, market_id, amount, detail, prev_hash, hash) VALUES (@seq, @ts, @kind, @agent_id, @market_id, @amount, @detail, @prev_hash, @hash)',
    ),
    ledgerPage: prepare<[number, number], LedgerEntry>('SELECT * FROM ledger WHERE seq > ? ORDER BY seq LIMIT ?'),
    ledgerAll: prepare<[], LedgerEntry>('SELECT * FROM ledger ORDER BY seq'),
    due: prepare<[number], { id: string }>(
      "SELECT id FROM markets WHERE tier = 'play' AND resolved_at IS NULL AND closes_at <= ? ORDER BY closes_at",
    ),
    // the trades in resolved (not cancelled) markets where traders of @owners households or more traded, of one agent or (with null) of all
    scored: prepare<
      [{ agent: string | null; owners: number }],
      { agent_id: string; market_id: string; ts: number; prices: string; cost: number; resolution: string; closed: number }
    >(
      `WITH counted AS (SELECT t.market_id FROM trades t JOIN agents a ON a.id = t.agent_id JOIN markets m ON m.id = t.market_id WHERE m.resolved_at IS NOT NULL AND m.cancelled = 0 GROUP BY t.market_id HAVING COUNT(DISTINCT a.owner) >= @owners)
       SELECT t.agent_id, t.market_id, t.ts, t.prices, t.cost, m.resolution, MIN(m.closes_at, m.resolved_at) AS closed FROM trades t JOIN counted c ON c.market_id = t.market_id JOIN markets m ON m.id = t.market_id WHERE (@agent IS NULL OR t.agent_id = @agent) ORDER BY t.agent_id, t.market_id, t.id`,
    ),
  }
}

function hashToken(salt: Buffer, secret: string): Buffer {
  // the secret is 192 random bits, so a fast salted hash suffices: there is nothing to guess by brute force
  return createHash('sha256').update(salt).update(secret).digest()
}

/** The shares a trade or quote moves: `shares` on the grid, or what `spend` buys; exactly one of them. */
function sharesOf(q: number[], b: number, k: number, amount: { shares?: number; spend?: number }): number {
  if ((amount.shares === undefined) === (amount.spend === undefined))
    throw new CrystalError('bad_argument', 'give shares (negative sells) or spend (minor units to buy with), one of them', {
      field: amount.shares === undefined ? 'shares' : 'spend',
    })
  if (amount.shares !== undefined) {
    if (!isShareAmount(amount.shares))
      throw new CrystalError('bad_argument', `shares must be a multiple of ${SHARE_STEP}, got ${amount.shares}`, { field: 'shares' })
    return onShareGrid(amount.shares)
  }
  const shares = sharesFor(q, b, k, amount.spend!)
  if (shares === 0)
    throw new CrystalError('insufficient_funds', `spend ${amount.spend} buys less than ${SHARE_STEP} shares at this price`, {
      field: 'spend',
    })
  return shares
}

function outcomeIndex(m: MarketRow, outcome: string): number {
  const outcomes = JSON.parse(m.outcomes) as string[]
  const k = outcomes.indexOf(outcome)
  if (k < 0)
    throw new CrystalError(
      'bad_argument',
      `"${outcome}" is not an outcome of market ${m.id} (${outcomes.map((o) => `"${o}"`).join(', ')})`,
      { field: 'outcome' },
    )
  return k
}
