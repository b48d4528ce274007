// Every bus subject and its contract (DESIGN.md section 8), in one table: the consciousness core's and
// the swarm's. `contractFor` resolves a concrete subject (tokens included); `checkMessage` says what
// is wrong with a message for it, if anything.
import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { CONSCIOUSNESS_CONTRACTS, type Contract } from './consciousness.js'
import { CancelledMessage, MARKET_SUBJECTS, ProposeMessage, SettledMessage } from './markets.js'
import { DiscoveredMessage, EventMessage, ExploreProgressMessage, ExploreRequestMessage, SUBJECTS } from './swarm.js'
import { DiskAlertMessage, NowPlayingMessage, PruneAlertMessage, RADIO_SUBJECTS } from './station.js'

export type { Contract }

export const CONTRACTS: readonly Contract[] = [
  ...CONSCIOUSNESS_CONTRACTS,
  { pattern: SUBJECTS.discovered, schema: DiscoveredMessage, tokens: [] },
  { pattern: SUBJECTS.events, schema: EventMessage, tokens: [] },
  { pattern: SUBJECTS.exploreRequest, schema: ExploreRequestMessage, tokens: [] },
  { pattern: SUBJECTS.exploreProgress, schema: ExploreProgressMessage, tokens: [] },
  { pattern: MARKET_SUBJECTS.propose, schema: ProposeMessage, tokens: [] },
  { pattern: MARKET_SUBJECTS.settled, schema: SettledMessage, tokens: [] },
  { pattern: MARKET_SUBJECTS.cancelled, schema: CancelledMessage, tokens: [] },
  { pattern: RADIO_SUBJECTS.nowplaying, schema: NowPlayingMessage, tokens: [] },
  { pattern: RADIO_SUBJECTS.disk, schema: DiskAlertMessage, tokens: [] },
  { pattern: RADIO_SUBJECTS.prune, schema: PruneAlertMessage, tokens: [] },
]

/** The contract of a concrete subject, with the values its tokens take. */
export function contractFor(subject: string): { contract: Contract; tokens: string[] } | undefined {
  const parts = subject.split('.')
  for (const contract of CONTRACTS) {
    const pattern = contract.pattern.split('.')
    if (pattern.length !== parts.length) continue
    const tokens: string[] = []
    if (pattern.every((p, i) => (p.startsWith('<') ? (tokens.push(parts[i]), parts[i].length > 0) : p === parts[i])))
      return { contract, tokens }
  }
  return undefined
}

/** Each contract's schema compiled once: checking is on every message a swarm sends. */
const compiled = new Map<TSchema, TypeCheck<TSchema>>()
export function checker(schema: TSchema): TypeCheck<TSchema> {
  let c = compiled.get(schema)
  if (!c) compiled.set(schema, (c = TypeCompiler.Compile(schema)))
  return c
}

/** undefined when the message is valid for the subject; otherwise the first reason, with its path. */
export function checkMessage(subject: string, value: unknown): string | undefined {
  const found = contractFor(subject)
  if (!found) return `no contract for subject ${subject}`
  const check = checker(found.contract.schema)
  if (!check.Check(value)) {
    const first = check.Errors(value).First()
    return first ? `${first.path || '/'}: ${first.message}` : 'does not match its contract'
  }
  for (const [k, field] of found.contract.tokens.entries()) {
    const v = (value as Record<string, unknown>)[field]
    if (v !== found.tokens[k]) return `/${field}: is ${JSON.stringify(v)} but the subject says ${JSON.stringify(found.tokens[k])}`
  }
  return undefined
}
