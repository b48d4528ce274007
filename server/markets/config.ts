// The market engine's settings, read from the environment in this one place and passed in.
import { CrystalError } from '../../engine/errors.js'

export interface MarketsConfig {
  /** HUB_ORACLE_TOKEN: creates and resolves labs markets; unset, those routes answer 503. */
  oracleToken?: string
  /** SVC_MARKETS_START_BALANCE: minor units minted for each new agent (default 100,000 = 1,000.00). */
  startingBalance: number
  /** SVC_MARKETS_SWEEP_MS: how often play markets past their close are looked for and settled (default 5,000). */
  sweepMs: number
  /** SVC_NATS_URL: with it, proposals are taken on RADIO.market.propose and settlements published on RADIO.market.settled. */
  natsUrl?: string
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const v = Number(raw)
  if (!Number.isSafeInteger(v) || v < min) throw new CrystalError('bad_argument', `${name} must be a whole number >= ${min}, got "${raw}"`, { field: name })
  return v
}

export function marketsConfig(env: NodeJS.ProcessEnv): MarketsConfig {
  return {
    oracleToken: env.HUB_ORACLE_TOKEN || undefined,
    startingBalance: integer(env, 'SVC_MARKETS_START_BALANCE', 100_000, 0),
    sweepMs: integer(env, 'SVC_MARKETS_SWEEP_MS', 5000, 10),
    natsUrl: env.SVC_NATS_URL || undefined,
  }
}
