// The market engine on NATS: proposals taken on RADIO.market.propose (request/reply); settlements and
// markets called off are published by the routes. Both ends check the contracts: requests and replies alike.
import type { NatsConnection } from '@nats-io/transport-node'
import { MARKET_SUBJECTS, ProposeReplyMessage } from '../../engine/contracts/markets.js'
import { checker, checkMessage } from '../../engine/contracts/subjects.js'
import { CrystalError, isCrystalError } from '../../engine/errors.js'
import { PROPOSAL_FORMAT } from '../../engine/markets/proposal.js'
import type { MarketStore } from './store.js'

const replyCheck = checker(ProposeReplyMessage)

function firstProblem(value: unknown): string | undefined {
  if (replyCheck.Check(value)) return undefined
  const e = replyCheck.Errors(value).First()
  return e ? `${e.path || '/'}: ${e.message}` : 'does not match its contract'
}

/** Answers proposals from the bus with the same rules as POST /api/proposals. */
export function serveProposals(
  nc: NatsConnection,
  store: Pick<MarketStore, 'authenticate' | 'propose'>,
  sender: string,
  warn: (line: string) => void,
): { unsubscribe(): void } {
  const envelope = () => ({ schema_version: 1 as const, ts: new Date().toISOString(), sender })
  const answer = (respond: (data: string) => void, body: Omit<ProposeReplyMessage, 'schema_version' | 'ts' | 'sender'>) => {
    const reply = { ...envelope(), ...body }
    const problem = firstProblem(reply)
    if (problem) throw new CrystalError('bad_message', `not replying with an invalid message: ${problem}`)
    respond(JSON.stringify(reply))
  }
  let dropped = 0
  const sub = nc.subscribe(MARKET_SUBJECTS.propose, {
    callback: (err, msg) => {
      if (err) return
      let value: unknown
      let problem: string | undefined
      try {
        value = msg.json()
        problem = checkMessage(MARKET_SUBJECTS.propose, value)
      } catch {
        problem = 'not JSON'
      }
      const respond = (data: string) => msg.respond(data)
      if (problem) {
        warn(`warning: dropped an invalid message on ${MARKET_SUBJECTS.propose} (${++dropped} so far): ${problem}`)
        if (msg.reply)
          answer(respond, {
            ok: false,
            code: 'bad_message',
            detail: `the request does not match the contract of ${MARKET_SUBJECTS.propose}: ${problem}`,
            format: PROPOSAL_FORMAT,
          })
        return
      }
      const m = value as { agent_id: string; token: string; text: string }
      Promise.resolve()
        .then(() => store.propose(store.authenticate(m.token, m.agent_id), m.text))
        .then(
          (market) => answer(respond, { ok: true, market_id: market.id, closes_at: market.closes_at }),
          (e) =>
            answer(
              respond,
              isCrystalError(e)
                ? { ok: false, code: e.code, detail: e.message, ...(e.code === 'bad_proposal' ? { format: PROPOSAL_FORMAT } : {}) }
                : { ok: false, code: 'internal', detail: 'the market engine failed on this proposal' },
            ),
        )
        .catch((e) => warn(`warning: could not answer a proposal: ${(e as Error).message}`))
    },
  })
  return sub
}

/** Sends a proposal and waits for the answer; the request is checked before sending, the reply on receipt. */
export async function requestProposal(
  nc: NatsConnection,
  sender: string,
  proposal: { agent_id: string; token: string; text: string },
  timeoutMs = 5000,
): Promise<ProposeReplyMessage> {
  const request = { schema_version: 1, ts: new Date().toISOString(), sender, ...proposal }
  const problem = checkMessage(MARKET_SUBJECTS.propose, request)
  if (problem) throw new CrystalError('bad_message', `not sending an invalid proposal: ${problem}`)
  const msg = await nc.request(MARKET_SUBJECTS.propose, JSON.stringify(request), { timeout: timeoutMs })
  const reply: unknown = msg.json()
  const bad = firstProblem(reply)
  if (bad) throw new CrystalError('bad_message', `the reply to a proposal does not match its contract: ${bad}`)
  return reply as ProposeReplyMessage
}
