// The settings the environment gives: empty values are unset, defaults apply, and a bad value is
// refused with the variable's name.
import { describe, expect, test } from 'vitest'
import { Type } from '@sinclair/typebox'
import { choice, DEFAULT_ANNOUNCE_FLOOR, DEFAULT_WORK, ENV, readEnv, settingsFrom } from './config.js'
import { DEFAULT_LIMITS } from './registry/registry.js'

describe('settings from the environment', () => {
  test('an empty environment gives the documented defaults and no bus, token or gallery', () => {
    const s = settingsFrom({})
    expect(s).toEqual({
      token: undefined,
      bus: { url: undefined, creds: undefined, ws_url: undefined, node: undefined },
      consciousness_period_ms: undefined,
      registry_limits: DEFAULT_LIMITS,
      announce_floor: DEFAULT_ANNOUNCE_FLOOR,
      gallery: { url: undefined, jwt: undefined },
      markets: {
        oracle_token: undefined,
        starting_balance: 100_000,
        sweep_ms: 5000,
        faucet_period_s: 86_400,
        rate_limit: 120,
        allow_broken_ledger: false,
      },
      station: { alerts: {}, dj: { off: false } },
      work: DEFAULT_WORK,
      engine: { recall_cache_bytes: undefined, gpu_steps_per_dispatch: undefined },
    })
    // an empty variable counts as unset (as a shell's `VAR= crystal ...` means)
    expect(settingsFrom({ SVC_NATS_URL: '', SVC_CRYSTAL_API_TOKEN: '' })).toMatchObject({ token: undefined, bus: { url: undefined } })
  })

  test('each variable lands in its setting', () => {
    const s = settingsFrom({
      SVC_CRYSTAL_API_TOKEN: 'secret',
      SVC_NATS_URL: 'nats://127.0.0.1:4222',
      SVC_NATS_CREDS: '/etc/crystal/explorer.creds',
      SVC_NATS_WS_URL: 'ws://127.0.0.1:8080',
      SVC_CRYSTAL_NODE: 'lab-2',
      SVC_CONSCIOUSNESS_PERIOD_MS: '250',
      SVC_CRYSTAL_BUCKET_CAP: '7',
      SVC_CRYSTAL_MAX_PRIMITIVES: '70',
      SVC_CRYSTAL_MAX_RUNS: '3',
      SVC_CRYSTAL_MAX_JOBS: '1',
      SVC_CRYSTAL_JOB_RETENTION_S: '60',
      SVC_CRYSTAL_RECALL_CACHE_MB: '4096',
      SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH: '4',
      SVC_CRYSTAL_ANNOUNCE_MIN_PERSISTENCE: '0.6',
      SVC_GALLERY_URL: 'https://gallery.example',
      GALLERY_JWT: 'jwt',
      HUB_ORACLE_TOKEN: 'oracle',
      SVC_MARKETS_START_BALANCE: '500',
      SVC_MARKETS_SWEEP_MS: '20',
      SVC_MARKETS_FAUCET_PERIOD_S: '60',
      SVC_MARKETS_RATE_LIMIT: '0',
      SVC_MARKETS_ALLOW_BROKEN_LEDGER: '1',
      SVC_STATION_MUSIC: '/srv/music',
      SVC_STATION_PACE: '4',
      SVC_ICECAST_URL: 'http://source:pw@127.0.0.1:8000/radio.mp3',
      SVC_STATION_DISK_THRESHOLD: '0.9',
      SVC_STATION_TIME_ZONE: 'Europe/Berlin',
      SVC_STATION_DJ: 'off',
      SVC_STATION_DJ_MIN_INTERVAL_S: '0',
      SVC_STATION_DJ_MAX_SHARE: '0.05',
    })
    expect(s).toMatchObject({
      token: 'secret',
      bus: { url: 'nats://127.0.0.1:4222', creds: '/etc/crystal/explorer.creds', ws_url: 'ws://127.0.0.1:8080', node: 'lab-2' },
      consciousness_period_ms: 250,
      registry_limits: { bucket_cap: 7, max_primitives: 70 },
      announce_floor: 0.6,
      gallery: { url: 'https://gallery.example', jwt: 'jwt' },
      markets: {
        oracle_token: 'oracle',
        starting_balance: 500,
        sweep_ms: 20,
        faucet_period_s: 60,
        rate_limit: 0,
        allow_broken_ledger: true,
      },
      station: {
        music: '/srv/music',
        pace: 4,
        icecast_url: 'http://source:pw@127.0.0.1:8000/radio.mp3',
        alerts: { disk_threshold: 0.9 },
        time_zone: 'Europe/Berlin',
        dj: { off: true, min_interval_s: 0, max_share: 0.05 },
      },
      work: { max_runs: 3, max_jobs: 1, job_retention_s: 60 },
      engine: { recall_cache_bytes: 4 * 2 ** 30, gpu_steps_per_dispatch: 4 },
    })
  })

  test('a bad value is refused naming the variable and what it takes', () => {
    const refusal = (env: Record<string, string>) => {
      try {
        settingsFrom(env)
      } catch (e) {
        return (e as Error).message
      }
      return 'accepted'
    }
    // a negative period was read as 1 ms, and a word was silently ignored
    expect(refusal({ SVC_CONSCIOUSNESS_PERIOD_MS: '-5' })).toBe(
      'SVC_CONSCIOUSNESS_PERIOD_MS must be a whole number of at least 10, got "-5"',
    )
    expect(refusal({ SVC_CONSCIOUSNESS_PERIOD_MS: 'abc' })).toBe(
      'SVC_CONSCIOUSNESS_PERIOD_MS must be a whole number of at least 10, got "abc"',
    )
    expect(refusal({ SVC_CONSCIOUSNESS_PERIOD_MS: '250ms' })).toBe(
      'SVC_CONSCIOUSNESS_PERIOD_MS must be a whole number of at least 10, got "250ms"',
    )
    expect(refusal({ SVC_CONSCIOUSNESS_PERIOD_MS: '2.5' })).toBe(
      'SVC_CONSCIOUSNESS_PERIOD_MS must be a whole number of at least 10, got "2.5"',
    )
    expect(refusal({ SVC_CRYSTAL_ANNOUNCE_MIN_PERSISTENCE: '2' })).toBe(
      'SVC_CRYSTAL_ANNOUNCE_MIN_PERSISTENCE must be a number from 0 to 1, got "2"',
    )
    expect(refusal({ SVC_CRYSTAL_BUCKET_CAP: 'lots' })).toBe('SVC_CRYSTAL_BUCKET_CAP must be a whole number of at least 1, got "lots"')
    expect(refusal({ SVC_CRYSTAL_MAX_PRIMITIVES: '0' })).toBe('SVC_CRYSTAL_MAX_PRIMITIVES must be a whole number of at least 1, got "0"')
    expect(refusal({ SVC_STATION_PACE: '-1' })).toBe('SVC_STATION_PACE must be a positive number, got "-1"')
    expect(refusal({ SVC_STATION_DISK_THRESHOLD: '1.5' })).toBe('SVC_STATION_DISK_THRESHOLD must be a number above 0, at most 1, got "1.5"')
    expect(refusal({ SVC_STATION_DJ: 'quiet' })).toBe('SVC_STATION_DJ must be on or off, got "quiet"')
    expect(refusal({ SVC_STATION_DJ_MAX_SHARE: '10' })).toBe('SVC_STATION_DJ_MAX_SHARE must be a number from 0 to 1, got "10"')
    expect(refusal({ SVC_MARKETS_SWEEP_MS: '5' })).toBe('SVC_MARKETS_SWEEP_MS must be a whole number of at least 10, got "5"')
    expect(refusal({ SVC_CRYSTAL_RECALL_CACHE_MB: '1.5GB' })).toBe(
      'SVC_CRYSTAL_RECALL_CACHE_MB must be a whole number of at least 0, got "1.5GB"',
    )
    expect(refusal({ SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH: '3' })).toBe('SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH must be 1 or 4, got "3"')
    expect(refusal({ SVC_CRYSTAL_MAX_JOBS: ' ' })).toBe('SVC_CRYSTAL_MAX_JOBS must be a whole number of at least 1, got " "')
    expect(refusal({ SVC_CONSCIOUSNESS_PERIOD_MS: '1e3', SVC_STATION_PACE: '.5' })).toBe('accepted')
  })

  test('a variable that takes one of a few words names them', () => {
    const schema = Type.Object({ SWITCH: choice('on', 'off') })
    expect(readEnv({ SWITCH: 'off' }, schema)).toEqual({ SWITCH: 'off' })
    expect(() => readEnv({ SWITCH: 'maybe' }, schema)).toThrow('SWITCH must be on or off, got "maybe"')
  })

  test('the README lists every variable the schema reads', async () => {
    const { readFileSync } = await import('node:fs')
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    for (const name of Object.keys(ENV.properties)) expect(readme, name).toContain(`\`${name}\``)
  })
})
