// The prediction-market plugin (DESIGN.md section 11): agents, markets, trades, proposals, the oracle,
// the leaderboard and the public ledger. Schemas from engine/contracts/markets; the rules live in
// engine/markets and the tables in ./store; this file authenticates, rate-limits, calls them and publishes.
import rateLimit from '@fastify/rate-limit'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { createHash, timingSafeEqual } from 'node:crypto'
import { ContractBus } from '../../engine/bus/contract_bus.js'
import { connectBus, natsConnection, nodeId } from '../../engine/bus/nats.node.js'
import type { BusSettings, MarketsSettings } from '../../engine/config.js'
import { Problem } from '../../engine/contracts/api.js'
import * as c from '../../engine/contracts/markets.js'
import { CrystalError } from '../../engine/errors.js'
import { serveProposals } from './bus.js'
import { MarketStore } from './store.js'
import { MarketWriter } from './writer.js'

export interface MarketRoutesOptions {
  dataDir: string
  settings: MarketsSettings
  /** With a bus URL, proposals are taken on RADIO.market.propose, settlements published on RADIO.market.settled and markets called off on RADIO.market.cancelled. */
  bus: BusSettings
  /** SVC_CRYSTAL_API_TOKEN: when set, money comes only from requests that carry it (registration, the faucet). */
  apiToken?: string
  say?: (line: string) => void
}

const errors = { 400: Problem, 401: Problem, 403: Problem, 404: Problem, 409: Problem, 422: Problem, 429: Problem, 503: Problem }

/** Sends JSON text already made (the market's, kept between GETs): Fastify sends a string as it is, past the response schema that documents it. */
function sendJson(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json)
}

function bearer(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization
  return h?.startsWith('Bearer ') ? h.slice(7) : undefined
}

export const marketRoutes: FastifyPluginAsyncTypebox<MarketRoutesOptions> = async (
  app,
  { dataDir, settings, bus: busSettings, apiToken, say = () => {} },
) => {
  // writes in a thread of their own (their fsyncs never hold up a read); reads here, read-only
  const writer = await MarketWriter.start({
    dataDir,
    faucetGrant: settings.starting_balance,
    faucetPeriodMs: settings.faucet_period_s * 1000,
  })
  let store: MarketStore | undefined
  let problems: string[]
  try {
    store = new MarketStore({ dataDir, faucetGrant: settings.starting_balance, readonly: true })
    // the chain, its anchor, and money and holdings replayed from the ledger, before serving anything
    problems = store.audit().problems
  } catch (e) {
    // a database damaged past what the writer read when it opened: the server does not start, and ends its writer
    store?.close()
    await writer.close()
    throw e
  }
  if (problems.length > 0) {
    if (!settings.allow_broken_ledger) {
      store.close()
      await writer.close()
      throw new CrystalError(
        'ledger_corrupt',
        `the market ledger in ${store.file} fails its check, so the server does not start: ${problems.join('; ')}. See it with \`crystal markets check\`; SVC_MARKETS_ALLOW_BROKEN_LEDGER=1 starts anyway`,
      )
    }
    say(`warning: the market ledger fails its check (starting anyway: SVC_MARKETS_ALLOW_BROKEN_LEDGER=1): ${problems.join('; ')}`)
  }

  const digest = (s: string) => createHash('sha256').update(s).digest()
  // digests of equal length, so that the comparison takes the same time whatever was sent
  const sameSecret = (given: string | undefined, secret: string) => timingSafeEqual(digest(given ?? ''), digest(secret))
  const isOracle = (req: FastifyRequest) => !!settings.oracle_token && sameSecret(bearer(req), settings.oracle_token)
  const oracle = (req: FastifyRequest) => {
    if (!settings.oracle_token)
      throw new CrystalError('oracle_unavailable', 'labs markets need the oracle, and HUB_ORACLE_TOKEN is not set on this server')
    if (!isOracle(req)) throw new CrystalError('unauthorized', 'this route needs Authorization: Bearer <HUB_ORACLE_TOKEN>')
  }
  const isOperator = (req: FastifyRequest) => apiToken !== undefined && sameSecret(bearer(req), apiToken)
  /** Cancel and early close: the oracle for any market; a play market's proposer for theirs. */
  const mayCallOff = (req: FastifyRequest, id: string) => {
    const m = store.market(id, false)
    if (m.tier === 'labs' || isOracle(req)) return oracle(req)
    const who = store.authenticate(bearer(req))
    if (who.id !== m.proposer_id)
      throw new CrystalError('forbidden', `only the oracle or ${m.proposer_id}, who opened market ${id}, may cancel or close it`, {
        field: 'id',
      })
  }

  // every mutating route: so many requests per minute per client (its bearer token, else its address)
  if (settings.rate_limit > 0) {
    await app.register(rateLimit, {
      global: false,
      max: settings.rate_limit,
      timeWindow: 60_000,
      keyGenerator: (req) => (bearer(req) ? digest(bearer(req)!).toString('base64') : req.ip),
      errorResponseBuilder: (_req, ctx) => ({
        statusCode: 429,
        code: 'rate_limited',
        message: `over ${ctx.max} mutating market requests a minute from this client (SVC_MARKETS_RATE_LIMIT); retry in ${ctx.after}`,
      }),
    })
  }
  // the plugin's options, per route (unread when the limit is off)
  const limited = { rateLimit: {} }

  let bus: ContractBus | undefined
  let closeBus = async () => {}
  if (busSettings.url) {
    try {
      const nc = await connectBus(busSettings, 'the market engine')
      bus = new ContractBus(natsConnection(nc), nodeId(busSettings), say)
      const sub = serveProposals(
        nc,
        { authenticate: (token, id) => store.authenticate(token, id), propose: writer.propose },
        bus.sender,
        say,
      )
      closeBus = async () => (sub.unsubscribe(), await nc.drain().catch(() => nc.close()))
      say(
        `markets: taking proposals on ${c.MARKET_SUBJECTS.propose}, publishing ${c.MARKET_SUBJECTS.settled} and ${c.MARKET_SUBJECTS.cancelled}`,
      )
    } catch (e) {
      say(`warning: markets not on the bus: ${(e as Error).message}`)
    }
  }

  /** Tells the bus how a market ended: settled (what each outcome paid), or called off with its refunds at cost. */
  const announce = (r: Awaited<ReturnType<MarketWriter['resolve']>>, reason: 'cancelled' | typeof c.NOT_APPLICABLE) => {
    const m = r.market
    const about = { market_id: m.id, question: m.question, tier: m.tier, outcomes: m.outcomes, ledger_head: r.ledger_head }
    if (m.status === 'cancelled')
      bus?.publish(c.MARKET_SUBJECTS.cancelled, { ...about, reason, refunded_to_traders: r.paid_out, refunded_to_funder: r.refunded })
    else bus?.publish(c.MARKET_SUBJECTS.settled, { ...about, resolution: m.resolution!, paid_out: r.paid_out, refunded: r.refunded })
    return r
  }
  // a resolution calls a market off only when it is N/A
  const settle = async (id: string, outcome: string | undefined) => announce(await writer.resolve(id, outcome), c.NOT_APPLICABLE)

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
    await writer.close()
    store.close()
  })

  const tags = ['markets']
  app.post(
    '/api/agents/register',
    {
      config: limited,
      schema: {
        tags,
        summary:
          "Register a trader; the reply holds its bearer token, shown this once. Sent with an agent token, the new id joins that agent's household. It draws the faucet for its household, and with SVC_CRYSTAL_API_TOKEN set only when sent with that token (otherwise it starts at 0).",
        body: c.RegisterAgentBody,
        response: { 201: c.RegisterAgentReply, ...errors },
      },
    },
    async (req, reply) => {
      const token = bearer(req)
      const operator = isOperator(req)
      const owner = token === undefined || operator ? undefined : store.authenticate(token).owner
      return reply.code(201).send(await writer.register(req.body, owner, apiToken === undefined || operator))
    },
  )

  app.post(
    '/api/agents/:id/faucet',
    {
      config: limited,
      schema: {
        tags,
        summary:
          "The faucet: mints SVC_MARKETS_START_BALANCE to the agent, once per SVC_MARKETS_FAUCET_PERIOD_S per household (409 before then). With SVC_CRYSTAL_API_TOKEN set it needs that token; otherwise the agent's own.",
        params: c.MarketParams,
        response: { 200: c.AgentReply, ...errors },
      },
    },
    async (req) => {
      if (apiToken !== undefined) {
        if (!isOperator(req))
          throw new CrystalError(
            'unauthorized',
            'on this server the faucet needs Authorization: Bearer <SVC_CRYSTAL_API_TOKEN>: money comes only from an accountable source',
          )
      } else store.authenticate(bearer(req), req.params.id)
      return writer.faucet(req.params.id)
    },
  )

  app.get(
    '/api/agents/:id',
    {
      schema: {
        tags,
        summary: 'An agent: balance, open positions, reputation',
        params: c.MarketParams,
        response: { 200: c.AgentReply, ...errors },
      },
    },
    async (req) => store.agent(req.params.id),
  )

  app.get(
    '/api/markets',
    {
      schema: {
        tags,
        summary: 'Markets, sorted by volume (default), created or closing; filtered by tier and status',
        querystring: c.MarketsQuery,
        response: { 200: c.MarketsReply, ...errors },
      },
    },
    async (req) => store.markets(req.query),
  )

  app.post(
    '/api/markets',
    {
      config: limited,
      schema: {
        tags,
        summary: "Open a market: play with a trader's token (escrowed from their balance), labs with the oracle token",
        body: c.CreateMarketBody,
        response: { 201: c.MarketReply, ...errors },
      },
    },
    async (req, reply) => {
      let proposer = null
      if (req.body.tier === 'labs') oracle(req)
      else proposer = store.authenticate(bearer(req))
      return reply.code(201).send(await writer.createMarket(req.body, proposer))
    },
  )

  app.get(
    '/api/markets/:id',
    {
      schema: {
        tags,
        summary: 'A market: prices, q, b, volume, status and its price history',
        params: c.MarketParams,
        response: { 200: c.MarketReply, ...errors },
      },
    },
    async (req, reply) => sendJson(reply, store.marketJson(req.params.id)),
  )

  app.get(
    '/api/markets/:id/quote',
    {
      schema: {
        tags,
        summary:
          'What a trade of shares, or of spend (minor units), would cost now, without making it; 409 once the market no longer trades',
        params: c.MarketParams,
        querystring: c.QuoteQuery,
        response: { 200: c.QuoteReply, ...errors },
      },
    },
    async (req) => ({
      market_id: req.params.id,
      outcome: req.query.outcome,
      ...store.quote(req.params.id, req.query.outcome, req.query),
    }),
  )

  app.post(
    '/api/markets/:id/trade',
    {
      config: limited,
      schema: {
        tags,
        summary:
          "Buy (or, with negative shares, sell) shares of an outcome, or buy what spend minor units buy; needs the trader's token. Answered once the trade is on disk.",
        params: c.MarketParams,
        body: c.TradeBody,
        response: { 200: c.TradeReply, ...errors },
      },
    },
    async (req) => writer.trade(req.params.id, store.authenticate(bearer(req), req.body.trader_id), req.body),
  )

  app.post(
    '/api/markets/:id/resolve',
    {
      config: limited,
      schema: {
        tags,
        summary: 'Settle a market once: labs by the oracle with {outcome} (or "N/A": refunds at cost); play, after its close, by its rule',
        params: c.MarketParams,
        body: c.ResolveBody,
        response: { 200: c.MarketReply, ...errors },
      },
    },
    async (req) => {
      if (store.market(req.params.id, false).tier === 'labs') oracle(req)
      return (await settle(req.params.id, req.body.outcome)).market
    },
  )

  app.post(
    '/api/markets/:id/cancel',
    {
      config: limited,
      schema: {
        tags,
        summary:
          "Call a market off: each trader gets back what they paid in net, the funder the rest. The oracle, or a play market's proposer.",
        params: c.MarketParams,
        response: { 200: c.MarketReply, ...errors },
      },
    },
    async (req) => {
      mayCallOff(req, req.params.id)
      return announce(await writer.cancel(req.params.id), 'cancelled').market
    },
  )

  app.post(
    '/api/markets/:id/close',
    {
      config: limited,
      schema: {
        tags,
        summary:
          "Close a market now: no more trades; a play market then settles by its rule, a labs market waits for the oracle. The oracle, or a play market's proposer.",
        params: c.MarketParams,
        response: { 200: c.MarketReply, ...errors },
      },
    },
    async (req) => {
      mayCallOff(req, req.params.id)
      return writer.closeNow(req.params.id)
    },
  )

  app.post(
    '/api/proposals',
    {
      config: limited,
      schema: {
        tags,
        summary:
          "A proposal, `propose: <claim> | by <YYYY-MM-DD> | category <topic>`, opens a yes/no play market escrowed from the proposer's balance",
        body: c.ProposalBody,
        response: { 201: c.MarketReply, ...errors },
      },
    },
    async (req, reply) => reply.code(201).send(await writer.propose(store.authenticate(bearer(req)), req.body.text)),
  )

  app.get(
    '/api/leaderboard',
    { schema: { tags, summary: 'Agents ranked by Brier skill, then balance', response: { 200: c.LeaderboardReply } } },
    async () => store.leaderboard(),
  )

  app.get(
    '/api/ledger',
    {
      schema: {
        tags,
        summary: 'The public hash-chained ledger, a page at a time',
        querystring: c.LedgerQuery,
        response: { 200: c.LedgerReply, ...errors },
      },
    },
    async (req) => store.ledger(req.query.after ?? 0, req.query.limit ?? 100),
  )

  app.get(
    '/api/ledger/verify',
    { schema: { tags, summary: 'Recomputes the chain; names the first bad entry', response: { 200: c.VerifyReply } } },
    async () => store.verify(),
  )

  app.get(
    '/api/ledger/conservation',
    {
      schema: {
        tags,
        summary: 'minted = balances + escrow + pools, and every balance and pool against its ledger replay',
        response: { 200: c.ConservationReply },
      },
    },
    async () => store.conservation(),
  )
}
