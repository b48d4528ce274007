// The settings the environment gives (README "Environment"), parsed from a plain record through one
// schema (ENV). Each edge (the CLI, which also starts the server) reads process.env once, through
// this, and passes it inward. A bad value is refused naming the variable and what it takes.
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { CrystalError } from './errors.js'
import { STEPS_PER_DISPATCH } from './field/layouts.js'
import { DEFAULT_LIMITS, type RegistryLimits } from './registry/registry.js'

/** Announce only finds at least this persistent (SVC_CRYSTAL_ANNOUNCE_MIN_PERSISTENCE overrides it). */
export const DEFAULT_ANNOUNCE_FLOOR = 0.25

/** Where the swarm's bus is and who this node is on it. */
export interface BusSettings {
  /** SVC_NATS_URL: the bus for processes; without it there is no bus. */
  url?: string
  /** SVC_NATS_CREDS: a NATS credentials file (user JWT and seed). */
  creds?: string
  /** SVC_NATS_WS_URL: the bus's websocket address, told to browser tabs. */
  ws_url?: string
  /** SVC_CRYSTAL_NODE: this node's name on the bus (default crystal-<host>). */
  node?: string
}

export interface Settings {
  /** SVC_CRYSTAL_API_TOKEN: the bearer token of the server's mutating routes. */
  token?: string
  bus: BusSettings
  /** SVC_CONSCIOUSNESS_PERIOD_MS: how often the consciousness subjects are published. */
  consciousness_period_ms?: number
  registry_limits: RegistryLimits
  announce_floor: number
  /** SVC_GALLERY_URL and GALLERY_JWT, for `crystal publish`. */
  gallery: { url?: string; jwt?: string }
  markets: MarketsSettings
  station: StationSettings
  work: WorkSettings
  /** What every engine the product opens takes from the environment. */
  engine: EngineSettings
}

/** The engine's options (EngineOptions) the environment sets; unset, the engine's defaults. */
export interface EngineSettings {
  /**
   * SVC_CRYSTAL_RECALL_CACHE_MB, in bytes: the patterns recall keeps between questions, in each of its
   * caches (keptPatternBytes).
   */
  recall_cache_bytes?: number
  /** SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH: the GPU step's steps a dispatch where no timeline is sampled (1 unless set). */
  gpu_steps_per_dispatch?: number
}

/** The server's long work (docs/api.md, "Bounded work"). */
export interface WorkSettings {
  /** SVC_CRYSTAL_MAX_RUNS: .crystal programs running at once (POST /crystal/run); more are refused with 429. */
  max_runs: number
  /** SVC_CRYSTAL_MAX_JOBS: evolve jobs running at once; more are refused with 429. */
  max_jobs: number
  /** SVC_CRYSTAL_JOB_RETENTION_S: how long a finished evolve job can still be read. */
  job_retention_s: number
}

/** Work's defaults: two of each at once (the development machine has two cores), finished jobs kept an hour. */
export const DEFAULT_WORK: WorkSettings = { max_runs: 2, max_jobs: 2, job_retention_s: 3600 }

/** The station's settings (docs/station.md). The library comes from `--music` first, then `music` here, then ./music. */
export interface StationSettings {
  /** SVC_STATION_MUSIC: the library, <artist>/<album>/*.mp3. */
  music?: string
  /** SVC_STATION_PACE: the clock's speed against real time (tests, benchmarks). */
  pace?: number
  /** SVC_STATION_CROSSFADE_S */
  crossfade_s?: number
  /** SVC_ICECAST_URL: send the stream to Icecast as a source, e.g. http://source:pw@127.0.0.1:8000/radio.mp3. */
  icecast_url?: string
  /** SVC_ICECAST_POLL_MS: how often Icecast's listener count is read (default 5,000). */
  icecast_poll_ms?: number
  /** SVC_STATION_SWARM_PERIOD_MS: how often the swarm's publishers publish (stale after three periods;
   * default SVC_CONSCIOUSNESS_PERIOD_MS, else 1,000). */
  swarm_period_ms?: number
  /** With a bus: SVC_STATION_DISK_PATH (/) against SVC_STATION_DISK_THRESHOLD (0.8), SVC_STATION_PRUNE_LOG's
   * age against SVC_STATION_PRUNE_STALE_S (one day), every SVC_STATION_ALERT_PERIOD_MS (one minute). */
  alerts: { disk_path?: string; disk_threshold?: number; prune_log?: string; prune_stale_s?: number; period_ms?: number }
  /** SVC_STATION_TIME_ZONE: the zone the schedule is read in (default America/Chicago). */
  time_zone?: string
  /** SVC_STATION_DJ (on | off), SVC_STATION_DJ_MIN_INTERVAL_S (seconds between links, default 300),
   * SVC_STATION_DJ_MAX_SHARE (the voice's most share of the airtime, 0..1, default 0.1). */
  dj: { off: boolean; min_interval_s?: number; max_share?: number }
}

/** The market engine's settings (docs/markets.md). */
export interface MarketsSettings {
  /** HUB_ORACLE_TOKEN: creates and resolves labs markets; unset, those routes answer 503. */
  oracle_token?: string
  /** SVC_MARKETS_START_BALANCE: the faucet's grant, minor units minted to a household at most once per faucet period (default 100,000 = 1,000.00; 0 turns the faucet off). */
  starting_balance: number
  /** SVC_MARKETS_FAUCET_PERIOD_S: how often a household may draw the faucet (default 86,400: once a day). */
  faucet_period_s: number
  /** SVC_MARKETS_RATE_LIMIT: mutating market requests per minute per client (its bearer token, else its address; default 120; 0 turns the limit off). */
  rate_limit: number
  /** SVC_MARKETS_ALLOW_BROKEN_LEDGER=1: start even when the ledger fails its check (to inspect it); otherwise the server refuses to start. */
  allow_broken_ledger: boolean
  /** SVC_MARKETS_SWEEP_MS: how often play markets past their close are looked for and settled (default 5,000). */
  sweep_ms: number
}

const text = () => Type.Optional(Type.String())
const whole = (minimum: number, maximum?: number) => Type.Optional(Type.Integer({ minimum, ...(maximum === undefined ? {} : { maximum }) }))
const positive = (maximum?: number) => Type.Optional(Type.Number({ exclusiveMinimum: 0, ...(maximum === undefined ? {} : { maximum }) }))
const fraction = () => Type.Optional(Type.Number({ minimum: 0, maximum: 1 }))
/** One of a few words, e.g. choice('on', 'off'). */
export const choice = (...words: [string, ...string[]]) => Type.Optional(Type.Union(words.map((w) => Type.Literal(w))))

/** Every variable the product reads (README "Environment"), and what each takes. */
export const ENV = Type.Object({
  SVC_CRYSTAL_API_TOKEN: text(),
  SVC_NATS_URL: text(),
  SVC_NATS_CREDS: text(),
  SVC_NATS_WS_URL: text(),
  SVC_CRYSTAL_NODE: text(),
  SVC_CONSCIOUSNESS_PERIOD_MS: whole(10),
  SVC_CRYSTAL_BUCKET_CAP: whole(1),
  SVC_CRYSTAL_MAX_PRIMITIVES: whole(1),
  SVC_CRYSTAL_ANNOUNCE_MIN_PERSISTENCE: fraction(),
  SVC_CRYSTAL_MAX_RUNS: whole(1),
  SVC_CRYSTAL_MAX_JOBS: whole(1),
  SVC_CRYSTAL_JOB_RETENTION_S: whole(1),
  SVC_CRYSTAL_RECALL_CACHE_MB: whole(0),
  SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH: choice('1', String(STEPS_PER_DISPATCH)),
  SVC_GALLERY_URL: text(),
  GALLERY_JWT: text(),
  HUB_ORACLE_TOKEN: text(),
  SVC_MARKETS_START_BALANCE: whole(0),
  SVC_MARKETS_SWEEP_MS: whole(10),
  SVC_MARKETS_FAUCET_PERIOD_S: whole(0),
  SVC_MARKETS_RATE_LIMIT: whole(0),
  SVC_MARKETS_ALLOW_BROKEN_LEDGER: choice('0', '1'),
  SVC_STATION_MUSIC: text(),
  SVC_STATION_PACE: positive(),
  SVC_STATION_CROSSFADE_S: positive(),
  SVC_ICECAST_URL: text(),
  SVC_ICECAST_POLL_MS: positive(),
  SVC_STATION_SWARM_PERIOD_MS: positive(),
  SVC_STATION_DISK_PATH: text(),
  SVC_STATION_DISK_THRESHOLD: positive(1),
  SVC_STATION_PRUNE_LOG: text(),
  SVC_STATION_PRUNE_STALE_S: positive(),
  SVC_STATION_ALERT_PERIOD_MS: positive(),
  SVC_STATION_TIME_ZONE: text(),
  SVC_STATION_DJ: choice('on', 'off'),
  SVC_STATION_DJ_MIN_INTERVAL_S: whole(0),
  SVC_STATION_DJ_MAX_SHARE: fraction(),
})

/** In words, what a variable takes, from its schema. */
export function takes(schema: TSchema): string {
  if (schema.anyOf) return (schema.anyOf as { const: string }[]).map((w) => w.const).join(' or ')
  const {
    minimum: min,
    maximum: max,
    exclusiveMinimum: above,
  } = schema as { minimum?: number; maximum?: number; exclusiveMinimum?: number }
  const kind = schema.type === 'integer' ? 'a whole number' : 'a number'
  if (above === 0) return max === undefined ? 'a positive number' : `a number above 0, at most ${max}`
  if (min !== undefined && max !== undefined) return `${kind} from ${min} to ${max}`
  if (min !== undefined) return `${kind} of at least ${min}`
  return kind
}

// a decimal number as people write one ("abc", "12ms" and "0x10" are not)
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i

/** The variables of `schema` (ENV) that `env` sets (an empty value is unset, as `VAR= crystal ...` means), checked. */
export function readEnv<S extends TObject = typeof ENV>(
  env: Record<string, string | undefined>,
  schema: S = ENV as unknown as S,
): Static<S> {
  const out: Record<string, string | number> = {}
  for (const [name, variable] of Object.entries(schema.properties) as [string, TSchema][]) {
    const raw = env[name]
    if (raw === undefined || raw === '') continue
    // numbers arrive as text: read only what people write as a decimal number
    const numeric = variable.type === 'number' || variable.type === 'integer'
    const v = !numeric ? raw : DECIMAL.test(raw.trim()) ? Number(raw) : Number.NaN
    if (!Value.Check(variable, v))
      throw new CrystalError('bad_argument', `${name} must be ${takes(variable)}, got "${raw}"`, { field: name }, 'see README, Environment')
    out[name] = v
  }
  return out as Static<S>
}

export function settingsFrom(env: Record<string, string | undefined>): Settings {
  const e = readEnv(env)
  return {
    token: e.SVC_CRYSTAL_API_TOKEN,
    bus: { url: e.SVC_NATS_URL, creds: e.SVC_NATS_CREDS, ws_url: e.SVC_NATS_WS_URL, node: e.SVC_CRYSTAL_NODE },
    consciousness_period_ms: e.SVC_CONSCIOUSNESS_PERIOD_MS,
    registry_limits: {
      ...DEFAULT_LIMITS,
      bucket_cap: e.SVC_CRYSTAL_BUCKET_CAP ?? DEFAULT_LIMITS.bucket_cap,
      max_primitives: e.SVC_CRYSTAL_MAX_PRIMITIVES ?? DEFAULT_LIMITS.max_primitives,
    },
    announce_floor: e.SVC_CRYSTAL_ANNOUNCE_MIN_PERSISTENCE ?? DEFAULT_ANNOUNCE_FLOOR,
    gallery: { url: e.SVC_GALLERY_URL, jwt: e.GALLERY_JWT },
    markets: {
      oracle_token: e.HUB_ORACLE_TOKEN,
      starting_balance: e.SVC_MARKETS_START_BALANCE ?? 100_000,
      sweep_ms: e.SVC_MARKETS_SWEEP_MS ?? 5000,
      faucet_period_s: e.SVC_MARKETS_FAUCET_PERIOD_S ?? 86_400,
      rate_limit: e.SVC_MARKETS_RATE_LIMIT ?? 120,
      allow_broken_ledger: e.SVC_MARKETS_ALLOW_BROKEN_LEDGER === '1',
    },
    station: {
      music: e.SVC_STATION_MUSIC,
      pace: e.SVC_STATION_PACE,
      crossfade_s: e.SVC_STATION_CROSSFADE_S,
      icecast_url: e.SVC_ICECAST_URL,
      icecast_poll_ms: e.SVC_ICECAST_POLL_MS,
      swarm_period_ms: e.SVC_STATION_SWARM_PERIOD_MS ?? e.SVC_CONSCIOUSNESS_PERIOD_MS,
      alerts: {
        disk_path: e.SVC_STATION_DISK_PATH,
        disk_threshold: e.SVC_STATION_DISK_THRESHOLD,
        prune_log: e.SVC_STATION_PRUNE_LOG,
        prune_stale_s: e.SVC_STATION_PRUNE_STALE_S,
        period_ms: e.SVC_STATION_ALERT_PERIOD_MS,
      },
      time_zone: e.SVC_STATION_TIME_ZONE,
      dj: { off: e.SVC_STATION_DJ === 'off', min_interval_s: e.SVC_STATION_DJ_MIN_INTERVAL_S, max_share: e.SVC_STATION_DJ_MAX_SHARE },
    },
    work: {
      max_runs: e.SVC_CRYSTAL_MAX_RUNS ?? DEFAULT_WORK.max_runs,
      max_jobs: e.SVC_CRYSTAL_MAX_JOBS ?? DEFAULT_WORK.max_jobs,
      job_retention_s: e.SVC_CRYSTAL_JOB_RETENTION_S ?? DEFAULT_WORK.job_retention_s,
    },
    engine: {
      recall_cache_bytes: e.SVC_CRYSTAL_RECALL_CACHE_MB === undefined ? undefined : e.SVC_CRYSTAL_RECALL_CACHE_MB * 2 ** 20,
      gpu_steps_per_dispatch: e.SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH === undefined ? undefined : Number(e.SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH),
    },
  }
}
