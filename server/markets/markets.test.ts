// The market engine over real HTTP on the built server (`crystal serve`), a real nats-server, and a
// real `kill -9`: oracle and proposals as a client sees them, a storm of 50 traders cut by SIGKILL,
// 2,000 malformed bodies, and the three bus subjects; on a server with an API token, the free-money
// attack and its control, the rate limit, repeated JSON keys; a server that will not start on
// forged books unless told to.
import { connect } from '@nats-io/transport-node'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ContractBus } from '../../engine/bus/contract_bus.js'
import { natsConnection } from '../../engine/bus/nats.node.js'
import { MARKET_SUBJECTS } from '../../engine/contracts/markets.js'
import { PROPOSAL_FORMAT } from '../../engine/markets/proposal.js'
import { call, runCrystal, startNats, startServer, type RunningNats, type RunningServer } from '../../testing/services.js'
import { requestProposal } from './bus.js'
import { openSqlite } from './sqlite.js'

const ORACLE = 'oracle-secret-for-tests'
const auth = (token: string) => ({ authorization: `Bearer ${token}` })
const soon = (ms: number) => new Date(Date.now() + ms).toISOString()
/** Opens a market (a trader's token for play, the oracle's for labs) and returns it. */
const openMarket = async (url: string, body: Record<string, unknown>, token: string) => {
  const r = await call(url, 'POST', '/api/markets', body, auth(token))
  expect(r.status).toBe(201)
  return r.body
}
/** `shares` shares (10) of `outcome` ("yes") in market `id` for `trader`. */
const buy = (url: string, id: string, trader: string, token: string, outcome = 'yes', shares = 10) =>
  call(url, 'POST', `/api/markets/${id}/trade`, { trader_id: trader, outcome, shares }, auth(token))
const register = async (url: string, id: string, headers: Record<string, string> = {}) => {
  const r = await call(url, 'POST', '/api/agents/register', { id, display_name: id, kind: 'bot' }, headers)
  expect(r.status).toBe(201)
  return r.body.token as string
}

describe('markets over HTTP', () => {
  let server: RunningServer
  let nats: RunningNats
  beforeAll(async () => {
    nats = await startNats()
    // the rate limit has its own server below: these tests send more than a client may
    server = await startServer([], {
      HUB_ORACLE_TOKEN: ORACLE,
      SVC_MARKETS_SWEEP_MS: '100',
      SVC_NATS_URL: nats.url,
      SVC_MARKETS_RATE_LIMIT: '0',
    })
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await nats?.stop()
  })

  it("docs/markets.md's route table lists every market route the server has, and no other", async () => {
    const served = Object.entries(
      (await call(server.url, 'GET', '/openapi.json')).body.paths as Record<string, Record<string, { tags?: string[] }>>,
    )
      .flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => op.tags?.includes('markets'))
          .map(([method]) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
      )
      .sort()
    const docs = readFileSync(new URL('../../docs/markets.md', import.meta.url), 'utf8')
    const listed = [...docs.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \|/gm)].map((m) => `${m[1]} ${m[2]}`).sort()
    expect(served.length).toBeGreaterThan(10)
    expect(listed).toEqual(served)
  })

  it('registers a trader once: the token is shown once, a second registration of the id is 409', async () => {
    const r = await call(server.url, 'POST', '/api/agents/register', { id: 'solo', display_name: 'Solo', kind: 'human' })
    expect(r.status).toBe(201)
    expect(r.body.token).toMatch(/^solo:/)
    expect(r.body.agent).toMatchObject({ id: 'solo', balance: 100_000, owner: 'solo' })
    const again = await call(server.url, 'POST', '/api/agents/register', { id: 'solo', display_name: 'Other', kind: 'human' })
    expect(again.status).toBe(409)
    expect(again.type).toContain('application/problem+json')
    const shown = await call(server.url, 'GET', '/api/agents/solo')
    expect(JSON.stringify(shown.body)).not.toContain(r.body.token.split(':')[1])
  })

  it('the oracle: 401 with a wrong token, labs markets opened and settled once, 409 the second time', async () => {
    const labs = {
      question: 'Does the lab replicate?',
      outcomes: ['yes', 'no', 'unclear'],
      tier: 'labs',
      closes_at: soon(3_600_000),
      b: 50,
    }
    expect((await call(server.url, 'POST', '/api/markets', labs)).status).toBe(401)
    expect((await call(server.url, 'POST', '/api/markets', labs, auth('wrong'))).status).toBe(401)
    // a closing time that is not a date-time is refused by the schema's format, naming the field
    const undated = await call(server.url, 'POST', '/api/markets', { ...labs, closes_at: 'next tuesday' }, auth(ORACLE))
    expect(undated.status).toBe(400)
    expect(undated.body.detail).toContain('closes_at')
    const m = await call(server.url, 'POST', '/api/markets', labs, auth(ORACLE))
    expect(m.status).toBe(201)
    expect(m.body.escrow).toBe(Math.ceil(50 * Math.log(3) * 100))
    const t = await register(server.url, 'lab-trader')
    const trade = await buy(server.url, m.body.id, 'lab-trader', t, 'yes', 20)
    expect(trade.status).toBe(200)
    expect((await call(server.url, 'POST', `/api/markets/${m.body.id}/resolve`, { outcome: 'yes' }, auth('wrong'))).status).toBe(401)
    const settled = await call(server.url, 'POST', `/api/markets/${m.body.id}/resolve`, { outcome: 'yes' }, auth(ORACLE))
    expect(settled.body).toMatchObject({ status: 'resolved', resolution: [1, 0, 0] })
    expect((await call(server.url, 'GET', '/api/agents/lab-trader')).body.balance).toBe(100_000 - trade.body.cost + 2000)
    const twice = await call(server.url, 'POST', `/api/markets/${m.body.id}/resolve`, { outcome: 'no' }, auth(ORACLE))
    expect(twice.status).toBe(409)
    expect(twice.body.detail).toContain('pays once')
  })

  it('proposals: a date not in the future gets the format; the proposer and their linked ids cannot trade', async () => {
    const p = await register(server.url, 'proposer')
    const past = await call(
      server.url,
      'POST',
      '/api/proposals',
      { text: 'propose: it rained | by 2020-01-01 | category weather' },
      auth(p),
    )
    expect(past.status).toBe(422)
    expect(past.body.detail).toContain(PROPOSAL_FORMAT)
    expect((await call(server.url, 'POST', '/api/proposals', { text: 'hello' }, auth(p))).body.detail).toContain(PROPOSAL_FORMAT)
    const ok = await call(
      server.url,
      'POST',
      '/api/proposals',
      { text: 'propose: the river freezes | by 2099-01-15 | category weather' },
      auth(p),
    )
    expect(ok.status).toBe(201)
    expect(ok.body).toMatchObject({
      tier: 'play',
      outcomes: ['yes', 'no'],
      proposer_id: 'proposer',
      category: 'weather',
      closes_at: '2099-01-16T06:00:00.000Z',
    })
    // a second id registered with the proposer's token is of the same household
    const alt = await register(server.url, 'proposer-alt', auth(p))
    expect((await call(server.url, 'GET', '/api/agents/proposer-alt')).body.owner).toBe('proposer')
    for (const [id, token] of [
      ['proposer', p],
      ['proposer-alt', alt],
    ]) {
      const r = await call(
        server.url,
        'POST',
        `/api/markets/${ok.body.id}/trade`,
        { trader_id: id, outcome: 'yes', shares: 1 },
        auth(token),
      )
      expect(r.status).toBe(403)
    }
    // someone else's token for this trader id
    expect(
      (await call(server.url, 'POST', `/api/markets/${ok.body.id}/trade`, { trader_id: 'solo', outcome: 'yes', shares: 1 }, auth(alt)))
        .status,
    ).toBe(403)
  })

  it('a play market closes at its TTL and settles by its rule on its own, published on RADIO.market.settled', async () => {
    const nc = await connect({ servers: nats.url })
    const seen: Record<string, unknown>[] = []
    const bus = new ContractBus(natsConnection(nc), 'test', () => {})
    bus.subscribe(MARKET_SUBJECTS.settled, (m) => seen.push(m))
    await nc.flush()
    const maker = await register(server.url, 'ttl-maker')
    const trader = await register(server.url, 'ttl-trader')
    const m = await call(
      server.url,
      'POST',
      '/api/markets',
      // 4 s: the rule weighs the price by time from the market's opening, so on a loaded machine a trade
      // made 0.9 s after it would pull a 1.5 s market's weighted price below the bounds below
      { question: 'short', outcomes: ['a', 'b'], tier: 'play', closes_at: soon(4000) },
      auth(maker),
    )
    expect(m.status).toBe(201)
    expect((await buy(server.url, m.body.id, 'ttl-trader', trader, 'a', 50)).status).toBe(200)
    let state
    for (let i = 0; i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100))
      state = (await call(server.url, 'GET', `/api/markets/${m.body.id}`)).body
      if (state.status === 'resolved') break
    }
    expect(state.status).toBe('resolved')
    // "a" sat at about 0.62 from the trade to the close: the rule pays about that per share
    expect(state.resolution[0]).toBeGreaterThan(0.55)
    expect(state.resolution[0]).toBeLessThan(0.63)
    // the settlement is published after it is stored: a GET can see it first (CI did), so it is waited for too
    for (let i = 0; i < 50 && !seen.some((s) => s.market_id === m.body.id); i++) await new Promise((r) => setTimeout(r, 100))
    expect(seen.find((s) => s.market_id === m.body.id)).toMatchObject({ tier: 'play', outcomes: ['a', 'b'] })
    await nc.close()
  }, 20_000)

  it('a market called off (cancelled, or resolved N/A) is published on RADIO.market.cancelled with its refunds; a settled one on RADIO.market.settled only', async () => {
    const nc = await connect({ servers: nats.url })
    const bus = new ContractBus(natsConnection(nc), 'test', () => {})
    const seen: { subject: string; m: Record<string, unknown> }[] = []
    for (const subject of [MARKET_SUBJECTS.settled, MARKET_SUBJECTS.cancelled]) bus.subscribe(subject, (m) => seen.push({ subject, m }))
    await nc.flush()
    const token = await register(server.url, 'off-trader')
    const opened = async () => {
      const m = await openMarket(
        server.url,
        { question: 'called off?', outcomes: ['yes', 'no'], tier: 'labs', closes_at: soon(3_600_000) },
        ORACLE,
      )
      const t = await buy(server.url, m.id, 'off-trader', token)
      expect(t.status).toBe(200)
      return { id: m.id as string, escrow: m.escrow as number, cost: t.body.cost as number }
    }
    const cancelled = await opened()
    const na = await opened()
    const resolved = await opened()
    expect((await call(server.url, 'POST', `/api/markets/${cancelled.id}/cancel`, undefined, auth(ORACLE))).body.status).toBe('cancelled')
    expect((await call(server.url, 'POST', `/api/markets/${na.id}/resolve`, { outcome: 'N/A' }, auth(ORACLE))).body.status).toBe(
      'cancelled',
    )
    expect((await call(server.url, 'POST', `/api/markets/${resolved.id}/resolve`, { outcome: 'no' }, auth(ORACLE))).body.status).toBe(
      'resolved',
    )
    const about = (id: string) => seen.filter((s) => s.m.market_id === id)
    for (let i = 0; i < 100 && [cancelled, na, resolved].some((x) => about(x.id).length === 0); i++)
      await new Promise((r) => setTimeout(r, 50))
    // each trader gets back what they paid, the funder (the house) the escrow
    for (const [x, reason] of [
      [cancelled, 'cancelled'],
      [na, 'N/A'],
    ] as const) {
      expect(about(x.id)).toHaveLength(1)
      expect(about(x.id)[0]).toMatchObject({
        subject: MARKET_SUBJECTS.cancelled,
        m: { schema_version: 1, tier: 'labs', outcomes: ['yes', 'no'], reason, refunded_to_traders: x.cost, refunded_to_funder: x.escrow },
      })
      expect(about(x.id)[0].m.ledger_head).toMatch(/^[0-9a-f]{64}$/)
    }
    // the control: a market settled by an outcome is on RADIO.market.settled, not on RADIO.market.cancelled
    expect(about(resolved.id)).toHaveLength(1)
    expect(about(resolved.id)[0]).toMatchObject({ subject: MARKET_SUBJECTS.settled, m: { resolution: [0, 1], paid_out: 0 } })
    await nc.close()
  })

  it('GET of a market, kept as JSON between changes, answers anew after a trade, a close and a settlement', async () => {
    const token = await register(server.url, 'kept-trader')
    const m = await openMarket(server.url, { question: 'kept?', outcomes: ['yes', 'no'], tier: 'labs', closes_at: soon(3_600_000) }, ORACLE)
    const get = async () => {
      const r = await call(server.url, 'GET', `/api/markets/${m.id}`)
      expect(r.status).toBe(200)
      expect(r.type).toContain('application/json')
      return r.body
    }
    const first = await get()
    expect(await get()).toEqual(first) // nothing changed: the same reply
    const t = await buy(server.url, m.id, 'kept-trader', token)
    const traded = await get()
    expect(traded).toMatchObject({ trades: 1, prices: t.body.prices, volume: t.body.cost, status: 'open' })
    expect(traded.history).toHaveLength(2)
    await call(server.url, 'POST', `/api/markets/${m.id}/close`, undefined, auth(ORACLE))
    expect((await get()).status).toBe('closed')
    await call(server.url, 'POST', `/api/markets/${m.id}/resolve`, { outcome: 'yes' }, auth(ORACLE))
    expect(await get()).toMatchObject({ status: 'resolved', resolution: [1, 0], pool: 0 })
  })

  it('proposals over NATS (request/reply), contracts checked at both ends', async () => {
    const nc = await connect({ servers: nats.url })
    const token = await register(server.url, 'bus-proposer')
    const ok = await requestProposal(nc, 'test', {
      agent_id: 'bus-proposer',
      token,
      text: 'propose: the bus works | by 2099-02-01 | category tech',
    })
    expect(ok).toMatchObject({ ok: true, schema_version: 1 })
    expect((await call(server.url, 'GET', `/api/markets/${ok.market_id}`)).body.proposer_id).toBe('bus-proposer')
    const late = await requestProposal(nc, 'test', {
      agent_id: 'bus-proposer',
      token,
      text: 'propose: too late | by 2001-02-01 | category tech',
    })
    expect(late).toMatchObject({ ok: false, code: 'bad_proposal', format: PROPOSAL_FORMAT })
    expect(
      (
        await requestProposal(nc, 'test', {
          agent_id: 'bus-proposer',
          token: 'bus-proposer:wrong',
          text: 'propose: x | by 2099-02-01 | category t',
        })
      ).code,
    ).toBe('unauthorized')
    // a request that breaks the contract is refused before it is sent ...
    await expect(requestProposal(nc, 'test', { agent_id: 'bad id!', token, text: 'x' })).rejects.toThrow(/not sending an invalid proposal/)
    // ... and, sent raw, answered with the reason
    const raw = await nc.request(MARKET_SUBJECTS.propose, JSON.stringify({ text: 'x' }), { timeout: 5000 })
    expect(raw.json()).toMatchObject({ ok: false, code: 'bad_message' })
    await nc.close()
  })

  it('2,000 malformed bodies: every one a 4xx problem, none a 5xx', async () => {
    const token = await register(server.url, 'fuzz')
    const m = await openMarket(server.url, { question: 'fuzz', outcomes: ['a', 'b'], tier: 'play', closes_at: soon(3_600_000) }, token)
    const routes = ['/api/agents/register', '/api/markets', `/api/markets/${m.id}/trade`, `/api/markets/${m.id}/resolve`, '/api/proposals']
    const values = [
      null,
      true,
      0,
      -1,
      1.5,
      1e308,
      '',
      'x',
      '5',
      [],
      {},
      [1, 2],
      { a: 1 },
      'a'.repeat(2000),
      -1e6 - 1,
      'propose: | by | category',
    ]
    let seed = 7
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
    const bodies: string[] = []
    for (let i = 0; i < 2000; i++) {
      const kind = rnd(4)
      if (kind === 0)
        bodies.push(['{', '{"a":', 'not json', '[', '{"shares": 1,}', '\u0000', '{"trader_id":"fuzz","outcome":"a","shares":1'][rnd(7)])
      else {
        const keys = [
          'id',
          'display_name',
          'kind',
          'question',
          'outcomes',
          'b',
          'tier',
          'closes_at',
          'trader_id',
          'outcome',
          'shares',
          'text',
          'extra',
        ]
        const o: Record<string, unknown> = {}
        for (let k = 0; k < 1 + rnd(5); k++) o[keys[rnd(keys.length)]] = values[rnd(values.length)]
        bodies.push(kind === 1 ? JSON.stringify(o) : JSON.stringify([o]))
      }
    }
    const statuses = new Map<number, number>()
    for (let i = 0; i < bodies.length; i += 50) {
      await Promise.all(
        bodies.slice(i, i + 50).map(async (body, k) => {
          const r = await call(server.url, 'POST', routes[(i + k) % routes.length], body, {
            'content-type': 'application/json',
            ...auth(token),
          })
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
          if (r.status >= 500) throw new Error(`${r.status} for ${body}: ${JSON.stringify(r.body)}`)
        }),
      )
    }
    // and query strings that are not what the routes take
    for (const path of [
      '/api/markets?sort=price',
      '/api/markets?tier=gold',
      '/api/markets?status=1',
      '/api/ledger?limit=0',
      '/api/ledger?limit=abc',
      '/api/ledger?after=-1',
      `/api/markets/${m.id}/quote?outcome=a&shares=0.00005`,
      `/api/markets/${m.id}/quote?outcome=z&shares=1`,
      '/api/markets/nope',
      '/api/agents/%00',
    ]) {
      const r = await call(server.url, 'GET', path)
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
      expect(r.status, path).toBeGreaterThanOrEqual(400)
      expect(r.status, path).toBeLessThan(500)
    }
    expect([...statuses.keys()].every((s) => s >= 400 && s < 500)).toBe(true)
    const v = await call(server.url, 'GET', '/api/ledger/verify')
    expect(v.body.ok).toBe(true)
    expect((await call(server.url, 'GET', '/api/ledger/conservation')).body).toMatchObject({ ok: true, mismatches: [] })
  }, 60_000)
})

describe('a storm of 50 traders, then kill -9', () => {
  it('after a restart every acknowledged trade is there once, money is conserved, the ledger verifies', async () => {
    let server = await startServer([], { HUB_ORACLE_TOKEN: ORACLE, SVC_MARKETS_RATE_LIMIT: '0' })
    const dataDir = server.dataDir
    try {
      const m = await openMarket(
        server.url,
        { question: 'storm', outcomes: ['a', 'b', 'c', 'd'], tier: 'labs', closes_at: soon(3_600_000), b: 200 },
        ORACLE,
      )
      const traders = await Promise.all(
        Array.from({ length: 50 }, async (_, k) => ({ id: `t${k}`, token: await register(server.url, `t${k}`) })),
      )
      const acked: {
        trade_id: number
        ledger_seq: number
        trader_id: string
        cost: number
        shares: number
        outcome: string
        client_ref: string
      }[] = []
      // each client's trade that got no answer: made or not, the client cannot tell
      const unanswered: { body: Record<string, unknown>; token: string }[] = []
      const storm = traders.map(async ({ id, token }, k) => {
        const held = [0, 0, 0, 0]
        for (let i = 0; ; i++) {
          const o = (k + i) % 4
          const shares = held[o] > 2 && i % 3 === 0 ? -2 : 1 + (i % 3)
          const body = { trader_id: id, outcome: 'abcd'[o], shares, client_ref: `${id}-${i}` }
          let r
          try {
            r = await call(server.url, 'POST', `/api/markets/${m.id}/trade`, body, auth(token))
          } catch {
            unanswered.push({ body, token }) // the server is gone
            return
          }
          if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body)}`)
          held[o] += shares
          acked.push(r.body)
        }
      })
      await new Promise((r) => setTimeout(r, 1500))
      const before = acked.length
      await server.stop('SIGKILL')
      await Promise.all(storm)
      expect(before).toBeGreaterThan(100)
      expect(unanswered).toHaveLength(50)

      // restarted without HUB_ORACLE_TOKEN: the oracle's routes say so (503)
      server = await startServer([], { HUB_ORACLE_TOKEN: '', SVC_MARKETS_RATE_LIMIT: '0' }, dataDir)
      const unset = await call(server.url, 'POST', `/api/markets/${m.id}/resolve`, { outcome: 'a' }, auth(ORACLE))
      expect(unset.status).toBe(503)
      expect(unset.body.detail).toContain('HUB_ORACLE_TOKEN is not set')
      // the clients retry what got no answer, under the same client_ref: made once, whichever way it went
      for (const { body, token } of unanswered) {
        const r = await call(server.url, 'POST', `/api/markets/${m.id}/trade`, body, auth(token))
        expect(r.status, JSON.stringify(r.body)).toBe(200)
        acked.push(r.body)
      }
      const entries: any[] = []
      for (let after = 0; ; ) {
        const page = (await call(server.url, 'GET', `/api/ledger?after=${after}&limit=1000`)).body
        entries.push(...page.entries)
        if (page.next_after === null) break
        after = page.next_after
      }
      const bySeq = new Map(entries.map((e) => [e.seq, e]))
      for (const t of acked) {
        const e = bySeq.get(t.ledger_seq)
        expect(e).toMatchObject({ kind: 'trade', agent_id: t.trader_id, market_id: m.id, amount: -t.cost })
        expect(JSON.parse(e.detail)).toMatchObject({ outcome: t.outcome, shares: t.shares })
      }
      // none twice: one ledger entry per client_ref, and the market counts exactly the trades on the ledger
      expect(new Set(acked.map((t) => t.trade_id)).size).toBe(acked.length)
      const trades = entries.filter((e) => e.kind === 'trade')
      const refs = trades.map((e) => JSON.parse(e.detail).client_ref)
      expect(new Set(refs).size).toBe(refs.length)
      expect(trades.length).toBe(acked.length)
      const market = (await call(server.url, 'GET', `/api/markets/${m.id}`)).body
      expect(market.trades).toBe(trades.length)
      expect(trades.length).toBeGreaterThanOrEqual(acked.length)
      const q = [0, 0, 0, 0]
      for (const e of trades) {
        const d = JSON.parse(e.detail)
        q['abcd'.indexOf(d.outcome)] += d.shares
      }
      expect(market.q).toEqual(q)
      expect((await call(server.url, 'GET', '/api/ledger/verify')).body).toMatchObject({ ok: true, entries: entries.length })
      expect((await call(server.url, 'GET', '/api/ledger/conservation')).body).toMatchObject({ ok: true, mismatches: [] })
      const check = await runCrystal(['--data-dir', dataDir, 'markets', 'check', '--json'])
      expect(check.status).toBe(0)
      expect(JSON.parse(check.stdout)).toMatchObject({ conservation: { ok: true }, ledger: { ok: true, entries: entries.length } })
    } finally {
      await server.stop()
    }
  }, 90_000)
})

describe('money only from an accountable source (SVC_CRYSTAL_API_TOKEN set, 20 mutating requests a minute)', () => {
  const API = 'api-token-for-tests'
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer([], { HUB_ORACLE_TOKEN: ORACLE, SVC_CRYSTAL_API_TOKEN: API, SVC_MARKETS_RATE_LIMIT: '20' })
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
  })

  it('the attack: anonymous registrations mint nothing, and the 21st in a minute is 429; the control: the operator token funds one', async () => {
    const statuses: number[] = []
    for (let k = 0; k < 25; k++) {
      const r = await call(server.url, 'POST', '/api/agents/register', { display_name: `free ${k}`, kind: 'bot' })
      statuses.push(r.status)
      if (r.status === 201) expect(r.body.agent.balance).toBe(0)
      else expect(r.body).toMatchObject({ status: 429, code: 'rate_limited' })
    }
    expect(statuses.filter((x) => x === 201)).toHaveLength(20)
    expect(statuses.slice(20)).toEqual([429, 429, 429, 429, 429])
    // reads are not limited
    expect((await call(server.url, 'GET', '/api/markets')).status).toBe(200)
    expect((await call(server.url, 'GET', '/api/ledger/conservation')).body).toMatchObject({ ok: true, minted: 0 })
    // the control: with the operator's token the new household draws the faucet
    const funded = await call(server.url, 'POST', '/api/agents/register', { id: 'funded', display_name: 'F', kind: 'human' }, auth(API))
    expect(funded.body.agent).toMatchObject({ balance: 100_000, owner: 'funded' })
    // the faucet needs that token here, not the agent's own; drawn again within the period it is 409
    expect((await call(server.url, 'POST', '/api/agents/funded/faucet', undefined, auth(funded.body.token))).status).toBe(401)
    const again = await call(server.url, 'POST', '/api/agents/funded/faucet', undefined, auth(API))
    expect(again.status).toBe(409)
    expect(again.body.detail).toContain('may draw again at')
    expect((await call(server.url, 'GET', '/api/ledger/conservation')).body).toMatchObject({ ok: true, minted: 100_000 })
  })

  it('a body that repeats a key is 400 naming it; fractional shares and spend trade; a quote on a settled market is 409', async () => {
    const t = await call(server.url, 'POST', '/api/agents/register', { id: 'frac', display_name: 'F', kind: 'human' }, auth(API))
    const m = await openMarket(server.url, { question: 'q', outcomes: ['yes', 'no'], tier: 'labs', closes_at: soon(3_600_000) }, ORACLE)
    const path = `/api/markets/${m.id}/trade`
    const dup = await call(server.url, 'POST', path, '{"trader_id":"frac","outcome":"yes","shares":1,"shares":1000}', auth(t.body.token))
    expect(dup.status).toBe(400)
    expect(dup.body.detail).toContain('repeats the key /shares')
    const nested = await call(
      server.url,
      'POST',
      '/api/markets',
      '{"question":"q","outcomes":["a","b"],"tier":"labs","closes_at":"2099-01-01T00:00:00Z","tier":"play"}',
      auth(ORACLE),
    )
    expect(nested.status).toBe(400)
    // the control: the same trade, each key once
    const half = await call(server.url, 'POST', path, '{"trader_id":"frac","outcome":"yes","shares":0.5}', auth(t.body.token))
    expect(half.status).toBe(200)
    expect(half.body).toMatchObject({ shares: 0.5, cost: 26 })
    const spent = await call(server.url, 'POST', path, { trader_id: 'frac', outcome: 'no', spend: 1000 }, auth(t.body.token))
    expect(spent.status).toBe(200)
    expect(spent.body.cost).toBeLessThanOrEqual(1000)
    expect((await call(server.url, 'GET', `/api/markets/${m.id}/quote?outcome=yes&spend=500`)).status).toBe(200)
    await call(server.url, 'POST', `/api/markets/${m.id}/resolve`, { outcome: 'yes' }, auth(ORACLE))
    const late = await call(server.url, 'GET', `/api/markets/${m.id}/quote?outcome=yes&shares=1`)
    expect(late.status).toBe(409)
    expect(late.body.detail).toContain('is resolved')
  })

  it("a play market's proposer may close it early and cancel it, refunded at cost; another trader may not", async () => {
    const p = (await call(server.url, 'POST', '/api/agents/register', { id: 'maker', display_name: 'M', kind: 'human' }, auth(API))).body
      .token
    const q = (await call(server.url, 'POST', '/api/agents/register', { id: 'taker', display_name: 'T', kind: 'human' }, auth(API))).body
      .token
    const m = await openMarket(server.url, { question: 'mine', outcomes: ['yes', 'no'], tier: 'play', closes_at: soon(3_600_000) }, p)
    const t = (await call(server.url, 'POST', `/api/markets/${m.id}/trade`, { trader_id: 'taker', outcome: 'yes', shares: 10 }, auth(q)))
      .body
    expect((await call(server.url, 'POST', `/api/markets/${m.id}/cancel`, undefined, auth(q))).status).toBe(403)
    expect((await call(server.url, 'POST', `/api/markets/${m.id}/close`, undefined, auth(p))).body.status).toBe('closed')
    expect(
      (await call(server.url, 'POST', `/api/markets/${m.id}/trade`, { trader_id: 'taker', outcome: 'yes', shares: 1 }, auth(q))).status,
    ).toBe(409)
    const cancelled = await call(server.url, 'POST', `/api/markets/${m.id}/cancel`, undefined, auth(p))
    expect(cancelled.body).toMatchObject({ status: 'cancelled', resolution: null, pool: 0 })
    expect((await call(server.url, 'GET', '/api/agents/taker')).body.balance).toBe(100_000)
    expect((await call(server.url, 'GET', '/api/agents/maker')).body.balance).toBe(100_000)
    expect(t.cost).toBeGreaterThan(0)
    expect((await call(server.url, 'GET', '/api/ledger/conservation')).body).toMatchObject({ ok: true, mismatches: [] })
  })
})

describe('the server and its books at start', () => {
  it('refuses to start on a forged position unless told to, and crystal markets check names it', async () => {
    let server = await startServer([], { HUB_ORACLE_TOKEN: ORACLE })
    const dataDir = server.dataDir
    const t = await register(server.url, 'holder')
    const m = await openMarket(server.url, { question: 'q', outcomes: ['yes', 'no'], tier: 'labs', closes_at: soon(3_600_000) }, ORACLE)
    expect(
      (await call(server.url, 'POST', `/api/markets/${m.id}/trade`, { trader_id: 'holder', outcome: 'yes', shares: 6 }, auth(t))).status,
    ).toBe(200)
    await server.stop()
    // the control: untouched books, it starts again
    server = await startServer([], { HUB_ORACLE_TOKEN: ORACLE }, dataDir)
    await server.stop()
    const db = openSqlite(`${dataDir}/markets.sqlite`)
    db.exec("UPDATE positions SET shares = 66 WHERE agent_id = 'holder'")
    db.close()
    await expect(startServer([], { HUB_ORACLE_TOKEN: ORACLE }, dataDir)).rejects.toThrow(
      /fails its check, so the server does not start: position of holder in MKT-\d+ \(outcome 1\): 66 shares, ledger says 6/,
    )
    const check = await runCrystal(['--data-dir', dataDir, 'markets', 'check'])
    expect(check.status).toBe(1)
    expect(check.stdout).toContain('mismatch: position of holder')
    server = await startServer([], { HUB_ORACLE_TOKEN: ORACLE, SVC_MARKETS_ALLOW_BROKEN_LEDGER: '1' }, dataDir)
    try {
      expect(server.stderr()).toContain('starting anyway')
      // and it does not pay the forged holding
      const settle = await call(server.url, 'POST', `/api/markets/${m.id}/resolve`, { outcome: 'yes' }, auth(ORACLE))
      expect(settle.status).toBe(503)
      expect(settle.body.code).toBe('ledger_corrupt')
    } finally {
      await server.stop()
    }
  }, 90_000)
})

describe('the server and a damaged data dir at start', () => {
  it('does not start on a markets.sqlite that is not a database, naming it and leaving it untouched', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'crystal-server-'))
    const file = join(dataDir, 'markets.sqlite')
    const bytes = randomBytes(4096)
    bytes.write('not SQLite', 0)
    writeFileSync(file, bytes)
    const failed = await startServer([], {}, dataDir).then(
      async (s) => {
        await s.stop()
        return ''
      },
      (e: Error) => e.message,
    )
    expect(failed).toContain(
      `crystal: the market database ${file} is not a SQLite database (file is not a database); the file was left untouched`,
    )
    expect(failed).not.toMatch(/unexpected failure|writer thread stopped|\n\s+at /)
    expect(readFileSync(file).equals(bytes)).toBe(true)
  }, 60_000)

  it('does not start on a malformed head file, and says it is malformed', async () => {
    const server = await startServer([])
    await server.stop()
    writeFileSync(join(server.dataDir, 'markets.head.json'), '{"x":1}\n')
    await expect(startServer([], {}, server.dataDir)).rejects.toThrow(
      `fails its check, so the server does not start: the head file ${join(server.dataDir, 'markets.head.json')} is malformed (expected`,
    )
  }, 60_000)
})

describe('the books while trades commit', () => {
  it('conservation and the chain read one snapshot: no false alarm while 10 clients trade and register', async () => {
    const server = await startServer([], { HUB_ORACLE_TOKEN: ORACLE, SVC_MARKETS_RATE_LIMIT: '0' })
    try {
      const m = await openMarket(
        server.url,
        { question: 'drizzle', outcomes: ['a', 'b'], tier: 'labs', closes_at: soon(3_600_000), b: 200 },
        ORACLE,
      )
      const traders = await Promise.all(
        Array.from({ length: 10 }, async (_, k) => ({ id: `c${k}`, token: await register(server.url, `c${k}`) })),
      )
      let trading = true
      let trades = 0
      let joined = 0
      // trades move balances, pools and positions; registrations mint: each commit lands between the books' reads
      const clients = traders.map(async ({ id, token }, k) => {
        for (let i = 0; trading; i++) {
          const r = await call(
            server.url,
            'POST',
            `/api/markets/${m.id}/trade`,
            { trader_id: id, outcome: 'ab'[(k + i) % 2], shares: 1 },
            auth(token),
          )
          expect(r.status, JSON.stringify(r.body)).toBe(200)
          trades++
          if (i % 10 === 0) await register(server.url, `c${k}-${joined++}`)
        }
      })
      const alarms: string[] = []
      let reads = 0
      while (reads < 40 || trades < 200) {
        const [books, chain] = await Promise.all([
          call(server.url, 'GET', '/api/ledger/conservation'),
          call(server.url, 'GET', '/api/ledger/verify'),
        ])
        if (!books.body.ok) alarms.push(...books.body.mismatches)
        if (!chain.body.ok) alarms.push(chain.body.reason)
        reads++
      }
      trading = false
      await Promise.all(clients)
      expect(alarms).toEqual([])
      expect(trades).toBeGreaterThanOrEqual(200)
    } finally {
      await server.stop()
    }
  }, 90_000)
})
