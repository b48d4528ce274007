// The market store on a real SQLite file with a clock the test moves: settlement rules, the
// proposer's household, money conserved through every step, and one flipped byte in the file named
// by the ledger check.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { CrystalError } from '../../engine/errors.js'
import { runCrystal } from '../testing.js'
import { MarketStore, PLAY_WINDOW_MS } from './store.js'

const DAY = 86_400_000
let clock = Date.parse('2026-06-01T12:00:00Z')
const stores: MarketStore[] = []
const open = (dataDir = mkdtempSync(join(tmpdir(), 'crystal-markets-'))) => {
  const s = new MarketStore({ dataDir, faucetGrant: 100_000, now: () => clock })
  stores.push(s)
  return s
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
  it('a play market settles by the last day\'s time-weighted price: one late trade does not swing it', async () => {
    clock = Date.parse('2026-06-01T12:00:00Z')
    const s = open()
    const maker = await s.register({ id: 'maker', display_name: 'M', kind: 'human' })
    const a = await s.register({ id: 'alice', display_name: 'A', kind: 'human' })
    const z = await s.register({ id: 'zed', display_name: 'Z', kind: 'bot' })
    const m = await s.createMarket({ question: 'rain?', outcomes: ['yes', 'no'], tier: 'play', closes_at: new Date(clock + 2 * DAY).toISOString() }, s.authenticate(maker.token))
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
    expect(s.agent('alice').balance).toBe(100_000 - (await s.ledger(0, 1000)).entries.find((e) => e.agent_id === 'alice' && e.kind === 'trade')!.amount * -1 + 139 * Math.floor(100 * r.market.resolution![1]))
    expect(s.conservation()).toMatchObject({ ok: true, mismatches: [] })
    expect(s.verify()).toMatchObject({ ok: true })
  })

  it('settlement pays once; a labs market needs an outcome; a play market not before its close', async () => {
    const s = open()
    const a = await s.register({ id: 'a', display_name: 'A', kind: 'human' })
    const labs = await s.createMarket({ question: 'q', outcomes: ['x', 'y', 'z'], tier: 'labs', closes_at: new Date(clock + DAY).toISOString() }, null)
    await s.trade(labs.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'y', shares: 10 })
    expect((await refused(s.resolve(labs.id, undefined))).code).toBe('bad_argument')
    const r = await s.resolve(labs.id, 'y')
    expect(r.paid_out).toBe(1000)
    expect((await refused(s.resolve(labs.id, 'y'))).code).toBe('conflict')
    expect((await refused(s.trade(labs.id, s.authenticate(a.token), { trader_id: 'a', outcome: 'y', shares: 1 }))).code).toBe('conflict')
    const play = await s.createMarket({ question: 'p', outcomes: ['yes', 'no'], tier: 'play', closes_at: new Date(clock + DAY).toISOString() }, s.authenticate(a.token))
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
    for (const [id, t] of [['prop', p.token], ['prop-bot', alt.token]]) {
      const e = await refused(s.trade(m.id, s.authenticate(t, id), { trader_id: id, outcome: 'yes', shares: 1 }))
      expect(e.code).toBe('forbidden')
    }
    const first = await s.trade(m.id, s.authenticate(other.token), { trader_id: 'other', outcome: 'yes', shares: 5, client_ref: 'r1' })
    // the same client_ref again (a retry): the first trade's record, nothing traded now
    const again = await s.trade(m.id, s.authenticate(other.token), { trader_id: 'other', outcome: 'yes', shares: 5, client_ref: 'r1' })
    expect(again).toMatchObject({ trade_id: first.trade_id, ledger_seq: first.ledger_seq, cost: first.cost, balance: first.balance, replayed: true })
    expect(s.market(m.id).trades).toBe(1)
    expect((await refused(s.trade(m.id, s.authenticate(other.token), { trader_id: 'other', outcome: 'no', shares: 5, client_ref: 'r1' }))).code).toBe('conflict')
    expect((await refused(s.trade(m.id, s.authenticate(other.token), { trader_id: 'other', outcome: 'yes', shares: -6 }))).code).toBe('insufficient_funds')
    expect((await refused(s.trade(m.id, s.authenticate(other.token), { trader_id: 'other', outcome: 'no', shares: -1 }))).code).toBe('insufficient_funds')
    // a wrong token, or another agent's token for this id
    expect(() => s.authenticate('other:nope', 'other')).toThrow(/Bearer/)
    expect(() => s.authenticate(alt.token, 'other')).toThrow(/not other's/)
    expect(s.conservation().ok).toBe(true)
  })

  it('one flipped byte in a ledger entry on disk: verify names that entry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-markets-'))
    const s = open(dir)
    const a = await s.register({ id: 'a', display_name: 'A', kind: 'human' })
    const m = await s.createMarket({ question: 'q', outcomes: ['x', 'y'], tier: 'play', closes_at: new Date(clock + DAY).toISOString() }, s.authenticate(a.token))
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
