// Wire types of the prediction-market engine (DESIGN.md section 11): REST bodies and replies, and the
// bus subjects RADIO.market.propose (request/reply), RADIO.market.settled and RADIO.market.cancelled. JSON names, snake_case.
import { Type, type Static } from '@sinclair/typebox'
import { MAX_OUTCOMES, MAX_TRADE_SHARES, MIN_OUTCOMES, SHARE_STEP } from '../markets/lmsr.js'
import './swarm.js' // registers the date-time format

export const MARKET_SUBJECTS = {
  propose: 'RADIO.market.propose',
  settled: 'RADIO.market.settled',
  cancelled: 'RADIO.market.cancelled',
} as const

const AgentId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'letters, digits, _ and -; at most 64' })
const MarketId = Type.String({ pattern: '^MKT-[0-9]{6,}$' })
const Minor = Type.Integer({ description: 'money in minor units (1/100 of a unit; a winning share pays 100)' })
const Tier = Type.Union([Type.Literal('play'), Type.Literal('labs')])
const Status = Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('resolved'), Type.Literal('cancelled')], {
  description: 'cancelled: called off (cancel, or resolved N/A); every trader was refunded at cost',
})
const Shares = Type.Number({ description: `shares, in steps of ${SHARE_STEP}` })
const Iso = Type.String({ format: 'date-time' })

export const RegisterAgentBody = Type.Object(
  {
    id: Type.Optional(AgentId),
    display_name: Type.String({ minLength: 1, maxLength: 80 }),
    kind: Type.Union([Type.Literal('human'), Type.Literal('bot'), Type.Literal('lab')], {
      description: 'who trades: a person, a program, or a lab',
    }),
  },
  { additionalProperties: false },
)
export type RegisterAgentBody = Static<typeof RegisterAgentBody>

export const Position = Type.Object({ market_id: MarketId, outcome: Type.String(), shares: Shares }, { additionalProperties: false })

export const ReputationSchema = Type.Object(
  {
    skill: Type.Number({
      description:
        'stake-weighted mean Brier gain over the uniform forecast, shrunk by a fixed stake; only markets with independent activity count',
    }),
    mean_brier: Type.Union([Type.Number(), Type.Null()]),
    markets: Type.Integer({ minimum: 0 }),
    staked: Type.Integer({ minimum: 0, description: 'minor units staked in the counted markets' }),
  },
  { additionalProperties: false },
)

export const AgentReply = Type.Object(
  {
    id: AgentId,
    display_name: Type.String(),
    kind: Type.String(),
    owner: Type.String({ description: 'the id of the first agent of this household; ids registered with an agent token share it' }),
    balance: Minor,
    positions: Type.Array(Position),
    reputation: ReputationSchema,
    created_at: Iso,
  },
  { additionalProperties: false },
)
export type AgentReply = Static<typeof AgentReply>

export const RegisterAgentReply = Type.Object(
  { agent: AgentReply, token: Type.String({ description: 'the bearer token: shown this once, stored only as a salted hash' }) },
  { additionalProperties: false },
)

export const CreateMarketBody = Type.Object(
  {
    question: Type.String({ minLength: 1, maxLength: 500 }),
    outcomes: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: MIN_OUTCOMES,
      maxItems: MAX_OUTCOMES,
      uniqueItems: true,
    }),
    b: Type.Optional(Type.Number({ minimum: 1, maximum: 1_000_000, description: 'liquidity: the maker can lose at most b ln n units' })),
    tier: Tier,
    closes_at: Iso,
    category: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
)
export type CreateMarketBody = Static<typeof CreateMarketBody>

export const MarketsQuery = Type.Object(
  {
    sort: Type.Optional(Type.Union([Type.Literal('volume'), Type.Literal('created'), Type.Literal('closing')], { default: 'volume' })),
    tier: Type.Optional(Tier),
    status: Type.Optional(Status),
  },
  { additionalProperties: false },
)

export const HistoryPoint = Type.Object({ ts: Iso, prices: Type.Array(Type.Number()) }, { additionalProperties: false })

export const MarketReply = Type.Object(
  {
    id: MarketId,
    question: Type.String(),
    outcomes: Type.Array(Type.String()),
    category: Type.Union([Type.String(), Type.Null()]),
    tier: Tier,
    status: Status,
    b: Type.Number(),
    q: Type.Array(Type.Number()),
    prices: Type.Array(Type.Number()),
    volume: Minor,
    trades: Type.Integer({ minimum: 0 }),
    escrow: Minor,
    pool: Minor,
    proposer_id: Type.Union([AgentId, Type.Null()]),
    created_at: Iso,
    closes_at: Iso,
    resolved_at: Type.Union([Iso, Type.Null()]),
    resolution: Type.Union([Type.Array(Type.Number()), Type.Null()], {
      description: "what each outcome was worth at settlement (1 for the winner; a play market: its rule's probabilities)",
    }),
    history: Type.Optional(Type.Array(HistoryPoint)),
  },
  { additionalProperties: false },
)
export type MarketReply = Static<typeof MarketReply>
export const MarketsReply = Type.Array(MarketReply)

export const MarketParams = Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false })

export const TradeBody = Type.Object(
  {
    trader_id: AgentId,
    outcome: Type.String({ minLength: 1, maxLength: 64 }),
    shares: Type.Optional(
      Type.Number({
        minimum: -MAX_TRADE_SHARES,
        maximum: MAX_TRADE_SHARES,
        not: { const: 0 },
        description: `shares in steps of ${SHARE_STEP}; negative sells (no more than held). Give shares or spend, not both`,
      }),
    ),
    spend: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100 * MAX_TRADE_SHARES,
        description: 'buy by amount: the most shares these minor units buy (the cost is at most this)',
      }),
    ),
    client_ref: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_.:-]{1,64}$',
        description:
          "the client's name for this trade: sent again (a retry after no answer), the trade it named is answered again, not made twice",
      }),
    ),
  },
  { additionalProperties: false },
)
export type TradeBody = Static<typeof TradeBody>

export const QuoteQuery = Type.Object(
  { outcome: Type.String({ minLength: 1, maxLength: 64 }), shares: TradeBody.properties.shares, spend: TradeBody.properties.spend },
  { additionalProperties: false },
)
export const QuoteReply = Type.Object(
  { market_id: MarketId, outcome: Type.String(), shares: Shares, cost: Minor, prices_after: Type.Array(Type.Number()) },
  { additionalProperties: false },
)

export const TradeReply = Type.Object(
  {
    trade_id: Type.Integer({ minimum: 1 }),
    market_id: MarketId,
    trader_id: AgentId,
    outcome: Type.String(),
    shares: Shares,
    cost: Minor,
    balance: Minor,
    prices: Type.Array(Type.Number()),
    ledger_seq: Type.Integer({ minimum: 1 }),
    client_ref: Type.Optional(Type.String()),
    replayed: Type.Boolean({ description: 'true when client_ref named a trade already made: this is its record, nothing was traded now' }),
  },
  { additionalProperties: false },
)

export const ResolveBody = Type.Object(
  {
    outcome: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'labs: the outcome that happened, or "N/A" (refunds at cost)' }),
    ),
  },
  { additionalProperties: false },
)

/** The labs resolution that calls a market off, as a cancel does: every trader is refunded at cost. */
export const NOT_APPLICABLE = 'N/A'

export const ProposalBody = Type.Object({ text: Type.String({ minLength: 1, maxLength: 1000 }) }, { additionalProperties: false })

export const LeaderboardRow = Type.Object(
  { rank: Type.Integer({ minimum: 1 }), id: AgentId, display_name: Type.String(), balance: Minor, reputation: ReputationSchema },
  { additionalProperties: false },
)
export const LeaderboardReply = Type.Array(LeaderboardRow)

export const LedgerEntrySchema = Type.Object(
  {
    seq: Type.Integer({ minimum: 1 }),
    ts: Type.String(),
    kind: Type.Union([Type.Literal('mint'), Type.Literal('escrow'), Type.Literal('trade'), Type.Literal('payout'), Type.Literal('refund')]),
    agent_id: Type.Union([Type.String(), Type.Null()]),
    market_id: Type.Union([Type.String(), Type.Null()]),
    amount: Minor,
    detail: Type.String(),
    prev_hash: Type.String(),
    hash: Type.String(),
  },
  { additionalProperties: false },
)
export const LedgerQuery = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
)
export const LedgerReply = Type.Object(
  { entries: Type.Array(LedgerEntrySchema), next_after: Type.Union([Type.Integer(), Type.Null()]) },
  { additionalProperties: false },
)

export const VerifyReply = Type.Object(
  {
    ok: Type.Boolean(),
    entries: Type.Integer({ minimum: 0 }),
    head: Type.Optional(Type.String()),
    first_bad: Type.Optional(Type.Integer()),
    reason: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
)

export const ConservationReply = Type.Object(
  {
    ok: Type.Boolean(),
    minted: Minor,
    balances: Minor,
    escrow: Minor,
    pools: Minor,
    paid_out: Type.Integer({ description: 'paid to winners so far (already inside balances)' }),
    positions: Type.Integer({ minimum: 0, description: 'holdings rows replayed from the ledger' }),
    refunded: Type.Integer({ description: 'escrow and pool remainders returned to funders (inside balances)' }),
    mismatches: Type.Array(Type.String()),
  },
  { additionalProperties: false },
)
export type ConservationReply = Static<typeof ConservationReply>

const envelope = {
  schema_version: Type.Literal(1),
  ts: Type.String({ format: 'date-time', minLength: 20 }),
  sender: Type.String({ minLength: 1, maxLength: 128 }),
}

/** RADIO.market.propose: a proposal with the proposer's id and bearer token (the bus carries the same authority as HTTP). */
export const ProposeMessage = Type.Object(
  { ...envelope, agent_id: AgentId, token: Type.String({ minLength: 1, maxLength: 200 }), text: ProposalBody.properties.text },
  { additionalProperties: false, $id: MARKET_SUBJECTS.propose },
)

/** The reply to RADIO.market.propose: the market opened, or the refusal (with the format for a bad proposal). */
export const ProposeReplyMessage = Type.Object(
  {
    ...envelope,
    ok: Type.Boolean(),
    market_id: Type.Optional(MarketId),
    closes_at: Type.Optional(Iso),
    code: Type.Optional(Type.String()),
    detail: Type.Optional(Type.String()),
    format: Type.Optional(Type.String()),
  },
  { additionalProperties: false, $id: 'RADIO.market.propose.reply' },
)
export type ProposeReplyMessage = Static<typeof ProposeReplyMessage>

/** Which market ended, in both messages that say how it ended. */
const endedMarket = { market_id: MarketId, question: Type.String(), tier: Tier, outcomes: Type.Array(Type.String()) }

export const SettledMessage = Type.Object(
  {
    ...envelope,
    ...endedMarket,
    resolution: Type.Array(Type.Number()),
    paid_out: Minor,
    refunded: Minor,
    ledger_head: Type.String(),
  },
  { additionalProperties: false, $id: MARKET_SUBJECTS.settled },
)

/**
 * RADIO.market.cancelled: a market called off, every trader refunded at cost. A subject of its own,
 * not RADIO.market.settled: that contract's resolution says what each outcome paid, and nothing did.
 */
export const CancelledMessage = Type.Object(
  {
    ...envelope,
    ...endedMarket,
    reason: Type.Union([Type.Literal('cancelled'), Type.Literal(NOT_APPLICABLE)], {
      description: "cancelled: by POST .../cancel (the oracle, or a play market's proposer); N/A: a labs market the oracle resolved N/A",
    }),
    refunded_to_traders: Type.Integer({ minimum: 0, description: 'minor units paid back to traders, each what they paid in net' }),
    refunded_to_funder: Type.Integer({ minimum: 0, description: "minor units of the pool returned to the market's funder" }),
    ledger_head: Type.String(),
  },
  { additionalProperties: false, $id: MARKET_SUBJECTS.cancelled },
)
