// The market store on a real SQLite file with a clock the test moves: settlement rules, the
// proposer's household, money conserved through every step, and one flipped byte in the file named
// by the ledger check. Then the attacks of issue 24, each beside its control: free money from new
// ids, reputation from self-dealing and dust bets, forged holdings, a deleted entry and a rewritten
// chain; and the remedies' own rules: fractional shares, buying by amount, cancel, N/A, early close
// and 409 quotes.
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { CrystalError } from '../../engine/errors.js'
import { entryText, type LedgerEntry } from '../../engine/markets/ledger.js'
import { brier, traderForecast } from '../../engine/markets/reputation.js'
import { runCrystal } from '../../testing/services.js'
import { openSqlite } from './sqlite.js'
import { FAUCET_PERIOD_MS, MarketStore, PLAY_WINDOW_MS } from './store.js'

const HOUR = 3_600_000

const DAY = 86_400_000
let clock = Date.parse('2026-06-01T12:00:00Z')
const stores: MarketStore[] = []
const open = (dataDir = mkdtempSync(join(tmpdir(), 'crystal-markets-')), faucetGrant = 100_000) => {
  const s = new MarketStore({ dataDir, faucetGrant, now: () => clock })
  stores.push(s)
  return s
}
const reopen = (s: MarketStore) => {
  s.close()
  stores.splice(stores.indexOf(s), 1)
  return open(join(s.file, '..'))
}
afterEach(() => {
  for (const s of stores.splice(0)) s.close()
})

const refused = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (e) {
    return e as CrystalError
  }
  throw new Error('not refused')
}

describe('market store', () => {
  it("a play market settles by the last day's time-weighted price: one late trade does not swing it", async () => {
    clock = Date.parse('2026-06-01T12:00:00Z')
    const s = open()
    const maker = await s.register({ id: 'maker', display_name: 'M', kind: 'human' })
    const a = await s.register({ id: 'alice', display_name: 'A', kind: 'human' })
    const z = await s.register({ id: 'zed', display_name: 'Z', kind: 'bot' })
    const m = await s.createMarket(
      { question: 'rain?', outcomes: ['yes', 'no'], tier: 'play', closes_at: new Date(clock + 2 * DAY).toISOString() },
      s.authenticate(maker.token),
    )
    // alice pushes "no" to about 0.8 early and it stays there through the last day
    await s.trade(m.id, s.authenticate(a.token, 'alice'), { trader_id: 'alice', outcome: 'no', shares: 139 })
    expect(s.market(m.id).prices[1]).toBeCloseTo(0.8, 2)
    // one second before the close, zed buys "yes" up to about 0.99
    clock += 2 * DAY - 1000
    await s.trade(m.id, s.authenticate(z.token, 'zed'), { trader_id: 'zed', outcome: 'yes', shares: 600 })
    expect(s.market(m.id).prices[0]).toBeGreaterThan(0.98)
    clock += 1000
    expect(s.due()).toEqual([m.id])
    const r = await s.resolve(m.id, undefined)
    // the rule: the mean over the last day, in which "yes" sat near 0.2 for all but one second
    expect(r.market.resolution![0]).toBeCloseTo(0.2 + (0.99 - 0.2) / (PLAY_WINDOW_MS / 1000), 2)
    expect(r.market.resolution![0]).toBeLessThan(0.21)
    // alice's 139 "no" shares pay floor(100 * p_no) each
    expect(s.agent('alice').balance).toBe(
      100_000 -
        (await s.ledger(0, 1000)).entries.find((e) => e.agent_id === 'alice' && e.kind === 'trade')!.amount * -1 +
        139 * Math.floor(100 * r.market.resolution![1]),
    )
    expect(s.conservation()).toMatchObject({ ok: true, mismatches: [] })
    expect(s.verify()).toMatchObject({ ok: true })
  })

  it('settlement pays once; a labs market needs an outcome; a play market not before its close', async () => {
    const s = open()
    const a = await s.register({ id: 'a', display_name: 'A', kind: 'human' })
    const labs = await s.createMarket(
      { question: 'q', outcomes: ['x', 'y', 'z'], tier: 'labs', closes_at: new Date(clock + DAY).toISOString() },
      null,
    )
    await s.trade(labs.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'y', shares: 10 })
    expect((await refused(s.resolve(labs.id, undefined))).code).toBe('bad_argument')
    const r = await s.resolve(labs.id, 'y')
    expect(r.paid_out).toBe(1000)
    expect((await refused(s.resolve(labs.id, 'y'))).code).toBe('conflict')
    expect((await refused(s.trade(labs.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'y', shares: 1 }))).code).toBe('conflict')
    const play = await s.createMarket(
      { question: 'p', outcomes: ['yes', 'no'], tier: 'play', closes_at: new Date(clock + DAY).toISOString() },
      s.authenticate(a.token),
    )
    expect((await refused(s.resolve(play.id, undefined))).message).toContain('at its close')
    expect(s.conservation().ok).toBe(true)
    // the list: sorted by volume, filtered by tier and status in the query
    expect(s.markets({ sort: 'volume' }).map((m) => m.id)).toEqual([labs.id, play.id])
    expect(s.markets({ sort: 'created' }).map((m) => m.id)).toEqual([play.id, labs.id])
    expect(s.markets({ status: 'resolved' }).map((m) => m.id)).toEqual([labs.id])
    expect(s.markets({ tier: 'play', status: 'open' }).map((m) => m.id)).toEqual([play.id])
    clock += DAY
    expect(s.markets({ status: 'closed' }).map((m) => m.id)).toEqual([play.id])
    clock -= DAY
  })

  it('the proposer, by any id of their household, cannot trade; nobody sells more than they hold', async () => {
    const s = open()
    const p = await s.register({ id: 'prop', display_name: 'P', kind: 'human' })
    const alt = await s.register({ id: 'prop-bot', display_name: 'P bot', kind: 'bot' }, s.authenticate(p.token).owner)
    const other = await s.register({ id: 'other', display_name: 'O', kind: 'human' })
    const m = await s.propose(s.authenticate(p.token), 'propose: it snows in June | by 2026-06-30 | category weather')
    expect(m.proposer_id).toBe('prop')
    expect(s.agent('prop').balance).toBe(100_000 - 6932) // escrow b ln 2, b = 100
    for (const [id, t] of [
      ['prop', p.token],
      ['prop-bot', alt.token],
    ]) {
      const e = await refused(s.trade(m.id, s.authenticate(t, id), { trader_id: id, outcome: 'yes', shares: 1 }))
      expect(e.code).toBe('forbidden')
    }
    const first = await s.trade(m.id, s.authenticate(other.token), { trader_id: 'other', outcome: 'yes', shares: 5, client_ref: 'r1' })
    // the same client_ref again (a retry): the first trade's record, nothing traded now
    const again = await s.trade(m.id, s.authenticate(other.token), { trader_id: 'other', outcome: 'yes', shares: 5, client_ref: 'r1' })
    expect(again).toMatchObject({
      trade_id: first.trade_id,
      ledger_seq: first.ledger_seq,
      cost: first.cost,
      balance: first.balance,
      replayed: true,
    })
    expect(s.market(m.id).trades).toBe(1)
    expect(
      (await refused(s.trade(m.id, s.authenticate(other.token), { trader_id: 'other', outcome: 'no', shares: 5, client_ref: 'r1' }))).code,
    ).toBe('conflict')
    expect((await refused(s.trade(m.id, s.authenticate(other.token), { trader_id: 'other', outcome: 'yes', shares: -6 }))).code).toBe(
      'insufficient_funds',
    )
    expect((await refused(s.trade(m.id, s.authenticate(other.token), { trader_id: 'other', outcome: 'no', shares: -1 }))).code).toBe(
      'insufficient_funds',
    )
    // a wrong token, or another agent's token for this id
    expect(() => s.authenticate('other:nope', 'other')).toThrow(/Bearer/)
    expect(() => s.authenticate(alt.token, 'other')).toThrow(/not other's/)
    expect(s.conservation().ok).toBe(true)
  })

  it('a close is a date-time with a four-digit year in UTC: past 9999 or off the calendar is refused, and nothing is escrowed', async () => {
    const s = open()
    const a = await s.register({ id: 'a', display_name: 'A', kind: 'human' })
    const play = (closes_at: string) =>
      s.createMarket({ question: 'q', outcomes: ['yes', 'no'], tier: 'play', closes_at }, s.authenticate(a.token))
    // 23:59:59 at UTC-12 on the last day of 9999 is 11:59:59 on 1 January 10000 in UTC
    const late = await refused(play('9999-12-31T23:59:59-12:00'))
    expect(late).toMatchObject({ code: 'bad_argument', where: { field: 'closes_at' } })
    expect(late.message).toContain('+010000-01-01T11:59:59.000Z')
    // Date.parse would carry 30 February over to 2 March
    expect((await refused(play('2027-02-30T00:00:00Z'))).message).toContain('2027-02-30 is not a calendar date')
    // a proposal for the last day of 9999 is refused as a proposal, before any escrow
    const proposed = await refused((async () => s.propose(s.authenticate(a.token), 'propose: x | by 9999-12-31 | category t'))())
    expect(proposed.code).toBe('bad_proposal')
    expect(s.agent('a').balance).toBe(100_000)
    expect(s.markets({})).toEqual([])
    // the last instant of 9999 in UTC is still a date-time, and is written back as one
    expect((await play('9999-12-31T23:59:59.999Z')).closes_at).toBe('9999-12-31T23:59:59.999Z')
    expect((await s.propose(s.authenticate(a.token), 'propose: x | by 9999-12-30 | category t')).closes_at).toBe('9999-12-31T06:00:00.000Z')
    expect(s.conservation().ok).toBe(true)
  })

  it('one flipped byte in a ledger entry on disk: verify names that entry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-markets-'))
    const s = open(dir)
    const a = await s.register({ id: 'a', display_name: 'A', kind: 'human' })
    const m = await s.createMarket(
      { question: 'q', outcomes: ['x', 'y'], tier: 'play', closes_at: new Date(clock + DAY).toISOString() },
      s.authenticate(a.token),
    )
    const b = await s.register({ id: 'b', display_name: 'B', kind: 'human' })
    for (let k = 1; k <= 5; k++) await s.trade(m.id, s.authenticate(b.token), { trader_id: 'b', outcome: 'x', shares: k })
    const target = s.ledger(0, 100).entries.find((e) => e.kind === 'trade' && e.detail.includes('"shares":3'))!
    expect(s.verify()).toMatchObject({ ok: true, entries: 8 })
    s.close()
    stores.pop()
    // the closed database is checkpointed into the main file: find the entry's detail text there
    const file = join(dir, 'markets.sqlite')
    const bytes = readFileSync(file)
    const at = bytes.indexOf(Buffer.from(target.detail))
    expect(at).toBeGreaterThan(0)
    expect(bytes.lastIndexOf(Buffer.from(target.detail))).toBe(at) // the only copy
    const digit = at + target.detail.indexOf('"shares":3') + 9
    bytes[digit] ^= 0x01 // "3" becomes "2"
    writeFileSync(file, bytes)
    const v = open(dir).verify()
    expect(v).toMatchObject({ ok: false, first_bad: target.seq })
    expect(v.ok ? '' : v.reason).toContain('altered')
    // and `crystal markets check` says so, with exit status 1
    const cli = await runCrystal(['--data-dir', dir, 'markets', 'check'])
    expect(cli.status).toBe(1)
    expect(cli.stderr).toContain(`the ledger chain breaks at entry ${target.seq}`)
  })
})

const labs = (s: MarketStore, hours = 24) =>
  s.createMarket({ question: 'q', outcomes: ['yes', 'no'], tier: 'labs', closes_at: new Date(clock + hours * HOUR).toISOString() }, null)
const minted = (s: MarketStore) => s.conservation().minted

describe('money comes only from the faucet, once per period per household', () => {
  it('the attack: one household registering id after id mints once; the control: a new household is granted', async () => {
    const s = open()
    const first = await s.register({ id: 'h', display_name: 'H', kind: 'human' })
    expect(first.agent.balance).toBe(100_000)
    const owner = s.authenticate(first.token).owner
    // 50 more ids of the same household in the same period: no money
    for (let k = 0; k < 50; k++) expect((await s.register({ id: `h${k}`, display_name: 'H', kind: 'bot' }, owner)).agent.balance).toBe(0)
    expect(minted(s)).toBe(100_000)
    // drawn again too soon: 409 naming when it may
    expect((await refused(s.faucet('h3'))).message).toContain(new Date(clock + FAUCET_PERIOD_MS).toISOString())
    // a registration the caller could not vouch for (fund = false: anonymous on a server with an API token) mints nothing
    expect((await s.register({ id: 'anon', display_name: 'A', kind: 'bot' }, undefined, false)).agent.balance).toBe(0)
    // control: another household, and the same one a period later
    expect((await s.register({ id: 'g', display_name: 'G', kind: 'human' })).agent.balance).toBe(100_000)
    clock += FAUCET_PERIOD_MS
    expect((await s.faucet('h3')).balance).toBe(100_000)
    expect(minted(s)).toBe(300_000)
    expect(s.audit().problems).toEqual([])
  })

  it('a grant of 0 turns the faucet off', async () => {
    const s = open(undefined, 0)
    expect((await s.register({ id: 'z', display_name: 'Z', kind: 'human' })).agent.balance).toBe(0)
    expect((await refused(s.faucet('z'))).code).toBe('forbidden')
    expect(minted(s)).toBe(0)
  })
})

describe('reputation that costs something', () => {
  it('self-dealing and a dust bet no longer rank; an honest trader who forecast well across markets does', async () => {
    const s = open()
    const ids = ['honest', 'o1', 'o2', 'duster', 'self-a', 'self-b']
    const tok = Object.fromEntries(
      await Promise.all(ids.map(async (id) => [id, (await s.register({ id, display_name: id, kind: 'human' })).token] as const)),
    )
    const trade = (m: string, id: string, outcome: string, amount: { shares?: number; spend?: number }) =>
      s.trade(m, s.authenticate(tok[id], id), { trader_id: id, outcome, ...amount })
    // three markets with independent activity (three households): the honest trader backs the winner with real money
    const markets: string[] = []
    for (let k = 0; k < 3; k++) {
      const m = (await labs(s)).id
      markets.push(m)
      await trade(m, 'o1', 'no', { spend: 300 })
      clock += HOUR
      await trade(m, 'honest', 'yes', { spend: 6000 })
      clock += HOUR
      await trade(m, 'o2', 'yes', { spend: 200 })
      if (k === 0) {
        // the dust bet: 5 minor units on the side that loses, which leaves the price where the honest trader put it
        clock += HOUR
        await trade(m, 'duster', 'no', { spend: 5 })
      }
      clock += HOUR
      await s.resolve(m, 'yes')
    }
    // the self-dealing: a play market of one id, one trade by another id, settled by its own rule
    const play = await s.createMarket(
      { question: 'mine', outcomes: ['yes', 'no'], tier: 'play', closes_at: new Date(clock + 4000).toISOString() },
      s.authenticate(tok['self-a']),
    )
    const own = await trade(play.id, 'self-b', 'yes', { shares: 500 })
    clock += 4000
    const settled = await s.resolve(play.id, undefined)

    // controls: what the old board scored. self-b's forecast was nearly perfect, and the duster's
    // forecast (the price it left) beat guessing 1/2 by far.
    const selfBrier = brier(traderForecast([{ t: clock - 4000, p: own.prices }], clock), settled.market.resolution!)
    expect(selfBrier).toBeLessThan(0.001)
    const dustPrices = (await s.ledger(0, 1000)).entries
      .filter((e) => e.agent_id === 'duster' && e.kind === 'trade')
      .map((e) => JSON.parse(e.detail).prices as number[])[0]
    expect(brier(dustPrices, [1, 0])).toBeLessThan(0.2)

    const board = s.leaderboard()
    const row = (id: string) => board.find((r) => r.id === id)!
    expect(board[0].id).toBe('honest')
    expect(row('honest').reputation).toMatchObject({ markets: 3 })
    expect(row('honest').reputation.skill).toBeGreaterThan(0.1)
    // the self-dealer's market had one household trading in it: it counts for nothing
    expect(row('self-b').reputation).toMatchObject({ skill: 0, markets: 0 })
    // the dust bet counts, weighted by its 5 minor units
    expect(row('duster').reputation.markets).toBe(1)
    expect(row('duster').reputation.skill).toBeLessThan(0.001)
    expect(row('duster').rank).toBeGreaterThan(row('honest').rank)
  })
})

describe('books that include holdings', () => {
  const setup = async () => {
    const s = open()
    const a = await s.register({ id: 'a', display_name: 'A', kind: 'human' })
    const m = await labs(s)
    await s.trade(m.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'yes', shares: 6 })
    await s.trade(m.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'no', shares: 2.5 })
    return { s, m: m.id }
  }
  const raw = (s: MarketStore) => openSqlite(s.file)

  it('control: untouched books pass every check', async () => {
    const { s } = await setup()
    const r = reopen(s).audit()
    expect(r.problems).toEqual([])
    expect(r.conservation.positions).toBe(2)
  })

  it('a forged position (6 shares made 66) is named, and settlement refuses to pay it', async () => {
    const { s, m } = await setup()
    const db = raw(s)
    db.exec(`UPDATE positions SET shares = 66 WHERE agent_id = 'a' AND outcome = 0`)
    db.close()
    const t = reopen(s)
    // the chain itself is intact: only the replay of holdings sees it
    expect(t.verify().ok).toBe(true)
    expect(t.audit().problems).toEqual([`position of a in ${m} (outcome 1): 66 shares, ledger says 6`])
    const before = t.agent('a').balance
    const e = await refused(t.resolve(m, 'yes'))
    expect(e.code).toBe('ledger_corrupt')
    expect(e.message).toContain('66')
    expect(t.agent('a').balance).toBe(before)
  })

  it('a deleted last entry leaves a valid chain, and the head file names it', async () => {
    const { s } = await setup()
    const db = raw(s)
    const last = db
      .prepare<[], { seq: number; agent_id: string; amount: number }>('SELECT seq, agent_id, amount FROM ledger ORDER BY seq DESC LIMIT 1')
      .get()!
    // the forger also puts the money back, so that balances agree with what is left
    db.prepare('DELETE FROM ledger WHERE seq = ?').run(last.seq)
    db.prepare('UPDATE agents SET balance = balance - ? WHERE id = ?').run(last.amount, last.agent_id)
    db.close()
    const t = reopen(s)
    expect(t.verify().ok).toBe(true) // control: the chain alone cannot see a cut tail
    expect(t.anchor()).toContain(`names entry ${last.seq}, and the ledger ends at ${last.seq - 1}`)
    // and the holdings, q and trade rows of that trade no longer replay
    expect(t.conservation().mismatches.join('\n')).toContain('ledger says 0')
  })

  it('a deleted head file is named; a database from before the anchor is anchored where it stands', async () => {
    const { s } = await setup()
    rmSync(s.headFile)
    const t = reopen(s)
    expect(t.anchor()).toContain('is missing or unreadable')
    // the control: no faucet table (made with the anchor) says the database is older than the anchor
    const db = raw(t)
    db.exec('DROP TABLE faucet')
    db.close()
    expect(reopen(t).audit().problems).toEqual([])
  })

  it('a malformed head file is named as malformed, not as deleted entries; one that is not JSON likewise', async () => {
    const { s } = await setup()
    const shapes = [
      '{"x":1}',
      'null',
      '[]',
      `{"seq":"1","hash":"${'0'.repeat(64)}"}`,
      `{"seq":1.5,"hash":"${'0'.repeat(64)}"}`,
      '{"seq":1,"hash":"abc"}',
    ]
    for (const text of shapes) {
      writeFileSync(s.headFile, `${text}\n`)
      const problem = s.anchor()
      expect(problem, text).toContain(`the head file ${s.headFile} is malformed (expected {"seq"`)
      expect(problem, text).toContain(`found ${text})`)
      expect(problem, text).not.toContain('deleted')
    }
    writeFileSync(s.headFile, 'nope{\n')
    expect(s.anchor()).toMatch(/^the head file .* is malformed \(not JSON: [^\n]+\)$/)
    // and `crystal markets check` says so, exit 1, and leaves the file as it was
    writeFileSync(s.headFile, '{"x":1}\n')
    const cli = await runCrystal(['--data-dir', join(s.file, '..'), 'markets', 'check'])
    expect(cli.status).toBe(1)
    expect(cli.stderr).toContain(`crystal: the head file ${s.headFile} is malformed (expected`)
    expect(cli.stderr).not.toContain('entries were deleted')
    expect(readFileSync(s.headFile, 'utf8')).toBe('{"x":1}\n')
    // the control: the next commit writes the head again, and it agrees
    await s.register({ id: 'b', display_name: 'B', kind: 'human' })
    expect(s.anchor()).toBeNull()
  })

  it('a consistently rewritten chain verifies, and the head file catches it', async () => {
    const { s } = await setup()
    const db = raw(s)
    const entries = db.prepare<[], LedgerEntry>('SELECT * FROM ledger ORDER BY seq').all()
    let prev = entries[0].prev_hash
    for (const e of entries) {
      // a different time on every entry, every hash recomputed from it
      const next = { ...e, ts: new Date(Date.parse(e.ts) - 60_000).toISOString(), prev_hash: prev }
      const hash = createHash('sha256').update(entryText(next)).digest('hex')
      db.prepare('UPDATE ledger SET ts = ?, prev_hash = ?, hash = ? WHERE seq = ?').run(next.ts, prev, hash, e.seq)
      prev = hash
    }
    db.close()
    const t = reopen(s)
    expect(t.verify().ok).toBe(true)
    expect(t.conservation().ok).toBe(true)
    expect(t.anchor()).toContain('the chain was rewritten')
  })
})

describe('fractional shares, buying by amount, cancel, N/A, early close', () => {
  it('buys fractional shares and spends at most what was given: the most shares it buys', async () => {
    const s = open()
    const a = await s.register({ id: 'a', display_name: 'A', kind: 'human' })
    const m = await labs(s)
    const half = await s.trade(m.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'yes', shares: 0.5 })
    expect(half.shares).toBe(0.5)
    expect(half.cost).toBe(26) // 100 ln((e^0.005 + 1) / 2) = 25.06 minor units, rounded up
    expect((await refused(s.trade(m.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'yes', shares: 0.00001 }))).message).toContain(
      'multiple of 0.0001',
    )
    const spent = await s.trade(m.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'no', spend: 1234 })
    expect(spent.cost).toBeLessThanOrEqual(1234)
    expect(s.market(m.id).q[1]).toBe(spent.shares)
    const sold = await s.trade(m.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'yes', shares: -0.25 })
    expect(s.agent('a').positions).toEqual([
      { market_id: m.id, outcome: 'yes', shares: 0.25 },
      { market_id: m.id, outcome: 'no', shares: spent.shares },
    ])
    // settled: floor(0.25 * 100) = 25 for "yes"; the maker keeps the odd fractions of a cent
    const r = await s.resolve(m.id, 'yes')
    expect(r.paid_out).toBe(25)
    expect(s.agent('a').balance).toBe(100_000 - half.cost - spent.cost - sold.cost + 25)
    expect(s.audit().problems).toEqual([])
  })

  it('spend is the most shares the money buys: one step more costs more', async () => {
    const s = open()
    const a = await s.register({ id: 'a', display_name: 'A', kind: 'human' })
    const m = await labs(s)
    for (const spend of [1, 7, 51, 999, 25_000]) {
      const quoted = s.quote(m.id, 'yes', { spend })
      expect(quoted.cost).toBeLessThanOrEqual(spend)
      expect(s.quote(m.id, 'yes', { shares: Math.round((quoted.shares + 0.0001) * 1e4) / 1e4 }).cost).toBeGreaterThan(spend)
    }
    expect((await refused(s.trade(m.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'yes', spend: 10, shares: 1 }))).code).toBe(
      'bad_argument',
    )
  })

  it('cancel refunds each trader at cost and the funder the rest; a trader who sold at a profit keeps it', async () => {
    const s = open()
    const [a, b] = await Promise.all(['a', 'b'].map((id) => s.register({ id, display_name: id, kind: 'human' })))
    const m = await labs(s)
    const buys = [await s.trade(m.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'yes', shares: 40 })]
    buys.push(await s.trade(m.id, s.authenticate(b.token), { trader_id: 'b', outcome: 'yes', shares: 40 }))
    const sale = await s.trade(m.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'yes', shares: -40 })
    expect(-sale.cost).toBeGreaterThan(buys[0].cost) // a sold at a profit
    const pool = s.market(m.id).pool
    const r = await s.cancel(m.id)
    expect(r.market).toMatchObject({ status: 'cancelled', resolution: null })
    expect(s.agent('a').balance).toBe(100_000 - buys[0].cost - sale.cost)
    expect(s.agent('b').balance).toBe(100_000)
    expect(r.paid_out + r.refunded).toBe(pool)
    expect((await refused(s.cancel(m.id))).code).toBe('conflict')
    expect((await refused(s.resolve(m.id, 'yes'))).message).toContain('cancelled')
    expect(s.markets({ status: 'cancelled' }).map((x) => x.id)).toEqual([m.id])
    expect(s.audit().problems).toEqual([])
  })

  it('N/A refunds at cost; quotes and trades on a closed or settled market are 409; early close stops trading', async () => {
    const s = open()
    const a = await s.register({ id: 'a', display_name: 'A', kind: 'human' })
    const m = await labs(s)
    const t = await s.trade(m.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'no', shares: 12.5 })
    const r = await s.resolve(m.id, 'N/A')
    expect(r.market.status).toBe('cancelled')
    expect(s.agent('a').balance).toBe(100_000)
    expect(r.paid_out).toBe(t.cost)
    expect(() => s.quote(m.id, 'yes', { shares: 1 })).toThrow(/cancelled/)
    const n = await labs(s)
    expect(s.quote(n.id, 'yes', { shares: 1 }).cost).toBe(51) // control: open, it quotes
    const closed = await s.closeNow(n.id)
    expect(closed.status).toBe('closed')
    expect(() => s.quote(n.id, 'yes', { shares: 1 })).toThrow(/closed at/)
    expect((await refused(s.trade(n.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'yes', shares: 1 }))).code).toBe('conflict')
    await s.resolve(n.id, 'yes')
    expect(() => s.quote(n.id, 'yes', { shares: 1 })).toThrow(/resolved/)
    expect(s.audit().problems).toEqual([])
  })
})

// The tables as the version before cancel, the faucet and the head file made them (no markets.cancelled, no faucet)
const OLDER_TABLES = `
CREATE TABLE IF NOT EXISTS agents (id TEXT PRIMARY KEY, owner TEXT NOT NULL, display_name TEXT NOT NULL, kind TEXT NOT NULL, salt BLOB, token_hash BLOB, balance INTEGER NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS markets (id TEXT PRIMARY KEY, serial INTEGER UNIQUE NOT NULL, question TEXT NOT NULL, outcomes TEXT NOT NULL, category TEXT, tier TEXT NOT NULL, b REAL NOT NULL, q TEXT NOT NULL, escrow INTEGER NOT NULL, pool INTEGER NOT NULL, volume INTEGER NOT NULL DEFAULT 0, trades INTEGER NOT NULL DEFAULT 0, proposer_id TEXT, proposer_owner TEXT, funder_id TEXT NOT NULL, created_at INTEGER NOT NULL, closes_at INTEGER NOT NULL, resolved_at INTEGER, resolution TEXT);
CREATE TABLE IF NOT EXISTS positions (agent_id TEXT NOT NULL, market_id TEXT NOT NULL, outcome INTEGER NOT NULL, shares INTEGER NOT NULL, PRIMARY KEY (agent_id, market_id, outcome));
CREATE TABLE IF NOT EXISTS trades (id INTEGER PRIMARY KEY, market_id TEXT NOT NULL, n INTEGER NOT NULL, agent_id TEXT NOT NULL, outcome INTEGER NOT NULL, shares INTEGER NOT NULL, cost INTEGER NOT NULL, prices TEXT NOT NULL, ts INTEGER NOT NULL, ledger_seq INTEGER NOT NULL, client_ref TEXT);
CREATE UNIQUE INDEX IF NOT EXISTS trades_client_ref ON trades (agent_id, client_ref) WHERE client_ref IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS trades_market ON trades (market_id, n);
CREATE INDEX IF NOT EXISTS trades_agent ON trades (agent_id, market_id);
CREATE TABLE IF NOT EXISTS ledger (seq INTEGER PRIMARY KEY, ts TEXT NOT NULL, kind TEXT NOT NULL, agent_id TEXT, market_id TEXT, amount INTEGER NOT NULL, detail TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
`

describe('a database made by an older version', () => {
  /** Books made now, copied row by row into a database made from the older version's CREATE statements (and no head file, which came later). */
  const older = async () => {
    const s = open()
    const a = await s.register({ id: 'a', display_name: 'A', kind: 'human' })
    const b = await s.register({ id: 'b', display_name: 'B', kind: 'human' })
    const m = await labs(s)
    await s.trade(m.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'yes', shares: 6 })
    await s.trade(m.id, s.authenticate(b.token), { trader_id: 'b', outcome: 'no', shares: 2.5 })
    await s.resolve(m.id, 'yes')
    const open2 = await labs(s)
    await s.trade(open2.id, s.authenticate(b.token), { trader_id: 'b', outcome: 'yes', shares: 3 })
    const entries = s.verify()
    s.close()
    stores.splice(stores.indexOf(s), 1)
    const dir = mkdtempSync(join(tmpdir(), 'crystal-markets-older-'))
    const db = openSqlite(join(dir, 'markets.sqlite'))
    db.exec('PRAGMA journal_mode = WAL')
    db.exec(OLDER_TABLES)
    db.exec(`ATTACH DATABASE '${s.file}' AS now`)
    for (const t of ['agents', 'markets', 'positions', 'trades', 'ledger']) {
      const columns = db
        .prepare<[], { name: string }>(`PRAGMA main.table_info(${t})`)
        .all()
        .map((c) => c.name)
        .join(', ')
      db.exec(`INSERT INTO main.${t} (${columns}) SELECT ${columns} FROM now.${t}`)
    }
    db.exec('DETACH DATABASE now')
    db.close()
    return { dir, file: join(dir, 'markets.sqlite'), entries: entries.entries }
  }
  const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex')

  it('crystal markets check reads it as it stands, says it is older and how it is upgraded, and writes nothing to it', async () => {
    const { dir, file, entries } = await older()
    const before = digest(file)
    const check = await runCrystal(['--data-dir', dir, 'markets', 'check', '--json'])
    expect(check.stderr).toBe('')
    expect(check.status).toBe(0)
    const out = JSON.parse(check.stdout)
    expect(out).toMatchObject({ conservation: { ok: true, positions: 3, mismatches: [] }, ledger: { ok: true, entries } })
    expect(out.database).toContain('from an older version, without faucet, markets.cancelled')
    expect(out.database).toContain('`crystal serve` on this data dir adds them')
    expect(out.anchor).toContain('none yet')
    const table = await runCrystal(['--data-dir', dir, 'markets', 'check'])
    expect(table.status).toBe(0)
    expect(table.stdout).toContain('note: the database is from an older version')
    expect(digest(file)).toBe(before)
    expect(existsSync(join(dir, 'markets.head.json'))).toBe(false)

    // the control: it is checked, not waved through: a forged holding in it is named, exit 1
    const db = openSqlite(file)
    db.exec(`UPDATE positions SET shares = 66 WHERE agent_id = 'b' AND shares = 3`)
    db.close()
    const forged = await runCrystal(['--data-dir', dir, 'markets', 'check'])
    expect(forged.status).toBe(1)
    expect(forged.stdout).toMatch(/mismatch: position of b in MKT-\d+ \(outcome 1\): 66 shares, ledger says 3/)
  })

  it('the server upgrades it where it stands when it next opens it: the missing parts added, the head anchored, the books intact', async () => {
    const { dir } = await older()
    const s = open(dir)
    expect(s.audit().problems).toEqual([])
    expect(existsSync(s.headFile)).toBe(true)
    expect(s.markets({ status: 'resolved' })).toHaveLength(1)
    s.close()
    stores.splice(stores.indexOf(s), 1)
    const read = new MarketStore({ dataDir: dir, faucetGrant: 0, readonly: true })
    stores.push(read)
    expect(read.olderSchema).toEqual([])
    expect(read.audit().problems).toEqual([])
  })
})

describe('a database file that is not one, or is damaged', () => {
  const refusal = (f: () => unknown) => {
    try {
      f()
    } catch (e) {
      return e as CrystalError
    }
    throw new Error('not refused')
  }

  it('is refused as ledger_corrupt naming the file, by the store and by `crystal markets check`, and left untouched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-markets-'))
    const file = join(dir, 'markets.sqlite')
    const bytes = randomBytes(4096)
    bytes.write('not SQLite', 0) // never the SQLite header, whatever the random bytes
    writeFileSync(file, bytes)
    for (const readonly of [true, false]) {
      const e = refusal(() => new MarketStore({ dataDir: dir, faucetGrant: 0, readonly }))
      expect(e.code).toBe('ledger_corrupt')
      expect(e.where).toEqual({ file })
      expect(e.message).toBe(`the market database ${file} is not a SQLite database (file is not a database); the file was left untouched`)
    }
    const cli = await runCrystal(['--data-dir', dir, 'markets', 'check'])
    expect(cli.status).toBe(1)
    expect(cli.stderr).toContain(`crystal: the market database ${file} is not a SQLite database`)
    expect(cli.stderr).not.toContain('unexpected failure')
    expect(readFileSync(file).equals(bytes)).toBe(true)
    expect(readdirSync(dir)).toEqual(['markets.sqlite'])
  })

  it('a database whose pages past the schema are garbage is named as damaged when the check reads them', async () => {
    const s = open()
    await s.register({ id: 'a', display_name: 'A', kind: 'human' })
    s.close()
    stores.pop()
    const bytes = readFileSync(s.file)
    expect(bytes.length).toBeGreaterThan(4096)
    bytes.fill(0xab, 4096) // every page but the first, which holds the header and the schema
    writeFileSync(s.file, bytes)
    const read = new MarketStore({ dataDir: join(s.file, '..'), faucetGrant: 0, readonly: true })
    try {
      const e = refusal(() => read.audit())
      expect(e.code).toBe('ledger_corrupt')
      expect(e.message).toMatch(/^the market database .* is a damaged SQLite database \(.+\); the file was left untouched$/)
    } finally {
      read.close()
    }
    const cli = await runCrystal(['--data-dir', join(s.file, '..'), 'markets', 'check'])
    expect(cli.status).toBe(1)
    expect(cli.stderr).toContain(`crystal: the market database ${s.file} is a damaged SQLite database`)
    expect(readFileSync(s.file).equals(bytes)).toBe(true)
  })
})
