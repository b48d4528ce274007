// The prediction-market plugin (DESIGN.md section 11): agents, markets, trades, proposals, the oracle,
// the leaderboard and the public ledger. Schemas from engine/contracts/markets; the rules live in
// engine/markets and the tables in ./store; this file authenticates, calls them and publishes.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { createHash, timingSafeEqual } from 'node:crypto'
import { ContractBus } from '../../engine/bus/contract_bus.js'
import { connectBus, natsConnection, nodeId } from '../../engine/bus/nats.node.js'
import type { BusSettings, MarketsSettings } from '../../engine/config.js'
import { Problem } from '../../engine/contracts/api.js'
import * as c from '../../engine/contracts/markets.js'
import { CrystalError } from '../../engine/errors.js'
import { serveProposals } from './bus.js'
import { MarketStore } from './store.js'

export interface MarketRoutesOptions {
  dataDir: string
  settings: MarketsSettings
  /** With a bus URL, proposals are taken on RADIO.market.propose and settlements published on RADIO.market.settled. */
  bus: BusSettings
  say?: (line: string) => void
}

const errors = { 400: Problem, 401: Problem, 403: Problem, 404: Problem, 409: Problem, 422: Problem, 503: Problem }

function bearer(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization
  return h?.startsWith('Bearer ') ? h.slice(7) : undefined
}

export const marketRoutes: FastifyPluginAsyncTypebox<MarketRoutesOptions> = async (app, { dataDir, settings, bus: busSettings, say = () => {} }) => {
  const store = new MarketStore({ dataDir, startingBalance: settings.starting_balance })

  const digest = (s: string) => createHash('sha256').update(s).digest()
  const oracle = (req: FastifyRequest) => {
    if (!settings.oracle_token) throw new CrystalError('oracle_unavailable', 'labs markets need the oracle, and HUB_ORACLE_TOKEN is not set on this server')
    // digests of equal length, so that the comparison takes the same time whatever was sent
    if (!timingSafeEqual(digest(bearer(req) ?? ''), digest(settings.oracle_token))) throw new CrystalError('unauthorized', 'this route needs Authorization: Bearer <HUB_ORACLE_TOKEN>')
  }

  let bus: ContractBus | undefined
  let closeBus = async () => {}
  if (busSettings.url) {
    try {
      const nc = await connectBus(busSettings, 'the market engine')
      bus = new ContractBus(natsConnection(nc), nodeId(busSettings), say)
      const sub = serveProposals(nc, store, bus.sender, say)
      closeBus = async () => (sub.unsubscribe(), await nc.drain().catch(() => nc.close()))
      say(`markets: taking proposals on ${c.MARKET_SUBJECTS.propose}, publishing ${c.MARKET_SUBJECTS.settled}`)
    } catch (e) {
      say(`warning: markets not on the bus: ${(e as Error).message}`)
    }
  }

  const settle = async (id: string, outcome: string | undefined) => {
    const r = await store.resolve(id, outcome)
    const m = r.market
    bus?.publish(c.MARKET_SUBJECTS.settled, { market_id: m.id, question: m.question, tier: m.tier, outcomes: m.outcomes, resolution: m.resolution!, paid_out: r.paid_out, refunded: r.refunded, ledger_head: r.ledger_head })
    return r
  }

  // play markets settle by their rule once their time is up
  const sweep = () => {
    for (const id of store.due()) settle(id, undefined).catch((e) => say(`warning: market ${id} did not settle: ${(e as Error).message}`))
  }
  sweep()
  const timer = setInterval(sweep, settings.sweep_ms)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await closeBus()
    store.close()
  })

  const tags = ['markets']
  app.post('/api/agents/register', { schema: { tags, summary: 'Register a trader; the reply holds its bearer token, shown this once. Sent with an agent token, the new id joins that agent\'s household.', body: c.RegisterAgentBody, response: { 201: c.RegisterAgentReply, ...errors } } }, async (req, reply) => {
    const token = bearer(req)
    const owner = token === undefined ? undefined : store.authenticate(token).owner
    return reply.code(201).send(await store.register(req.body, owner))
  })

  app.get('/api/agents/:id', { schema: { tags, summary: 'An agent: balance, open positions, reputation', params: c.MarketParams, response: { 200: c.AgentReply, ...errors } } }, async (req) => store.agent(req.params.id))

  app.get('/api/markets', { schema: { tags, summary: 'Markets, sorted by volume (default), created or closing; filtered by tier and status', querystring: c.MarketsQuery, response: { 200: c.MarketsReply, ...errors } } }, async (req) => store.markets(req.query))

  app.post('/api/markets', { schema: { tags, summary: "Open a market: play with a trader's token (escrowed from their balance), labs with the oracle token", body: c.CreateMarketBody, response: { 201: c.MarketReply, ...errors } } }, async (req, reply) => {
    let proposer = null
    if (req.body.tier === 'labs') oracle(req)
    else proposer = store.authenticate(bearer(req))
    return reply.code(201).send(await store.createMarket(req.body, proposer))
  })

  app.get('/api/markets/:id', { schema: { tags, summary: 'A market: prices, q, b, volume, status and its price history', params: c.MarketParams, response: { 200: c.MarketReply, ...errors } } }, async (req) => store.market(req.params.id))

  app.get('/api/markets/:id/quote', { schema: { tags, summary: 'What a trade would cost now (minor units), without making it', params: c.MarketParams, querystring: c.QuoteQuery, response: { 200: c.QuoteReply, ...errors } } }, async (req) => ({
    market_id: req.params.id,
    outcome: req.query.outcome,
    shares: req.query.shares,
    ...store.quote(req.params.id, req.query.outcome, req.query.shares),
  }))

  app.post('/api/markets/:id/trade', { schema: { tags, summary: "Buy (or, with negative shares, sell) shares of an outcome; needs the trader's token. Answered once the trade is on disk.", params: c.MarketParams, body: c.TradeBody, response: { 200: c.TradeReply, ...errors } } }, async (req) =>
    store.trade(req.params.id, store.authenticate(bearer(req), req.body.trader_id), req.body),
  )

  app.post('/api/markets/:id/resolve', { schema: { tags, summary: 'Settle a market once: labs by the oracle with {outcome}; play, after its close, by its rule', params: c.MarketParams, body: c.ResolveBody, response: { 200: c.MarketReply, ...errors } } }, async (req) => {
    if (store.market(req.params.id, false).tier === 'labs') oracle(req)
    return (await settle(req.params.id, req.body.outcome)).market
  })

  app.post('/api/proposals', { schema: { tags, summary: "A proposal, `propose: <claim> | by <YYYY-MM-DD> | category <topic>`, opens a yes/no play market escrowed from the proposer's balance", body: c.ProposalBody, response: { 201: c.MarketReply, ...errors } } }, async (req, reply) =>
    reply.code(201).send(await store.propose(store.authenticate(bearer(req)), req.body.text)),
  )

  app.get('/api/leaderboard', { schema: { tags, summary: 'Agents ranked by Brier skill, then balance', response: { 200: c.LeaderboardReply } } }, async () => store.leaderboard())

  app.get('/api/ledger', { schema: { tags, summary: 'The public hash-chained ledger, a page at a time', querystring: c.LedgerQuery, response: { 200: c.LedgerReply, ...errors } } }, async (req) => store.ledger(req.query.after ?? 0, req.query.limit ?? 100))

  app.get('/api/ledger/verify', { schema: { tags, summary: 'Recomputes the chain; names the first bad entry', response: { 200: c.VerifyReply } } }, async () => store.verify())

  app.get('/api/ledger/conservation', { schema: { tags, summary: 'minted = balances + escrow + pools, and every balance and pool against its ledger replay', response: { 200: c.ConservationReply } } }, async () => store.conservation())
}
