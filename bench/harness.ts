// What the benchmarks need at run time, and the tests too (through testing/): the built server started
// as a child process, a real nats-server, the demo music library and registration candidates.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Candidate } from '../engine/registry/registry.js'
import { demoMp3, demoTracks, synthesise, writeDemoLibrary, type DemoTrack } from '../server/station/demo.js'

/** bin/crystal.js, from bench/ (tests on the sources) or dist/bench/ (`crystal bench`). */
export const CRYSTAL_BIN = new URL(import.meta.url.includes('/dist/') ? '../../bin/crystal.js' : '../bin/crystal.js', import.meta.url)
  .pathname

export interface RunningServer {
  url: string
  dataDir: string
  child: ChildProcess
  stderr: () => string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

export async function startServer(
  args: string[] = [],
  env: Record<string, string> = {},
  dataDir = mkdtempSync(join(tmpdir(), 'crystal-server-')),
  entry: string[] = [CRYSTAL_BIN, 'serve'],
): Promise<RunningServer> {
  const child = spawn(process.execPath, [...entry, '--port', '0', '--size', '48', ...args], {
    env: { ...process.env, SVC_CRYSTAL_DATA_DIR: dataDir, ...env },
  })
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr += d))
  const url = await new Promise<string>((resolve, reject) => {
    // a GPU server compiles its step first (some 6 s of SwiftShader's alone): 60 s where the suite's two
    // files at a time share 2 cores with other work
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${stderr}`)), 60_000)
    child.stderr!.on('data', () => {
      const m = stderr.match(/listening on (http:\/\/[^\s]+)/)
      if (m) {
        clearTimeout(timer)
        resolve(m[1])
      }
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`the server exited (${code}): ${stderr}`))
    })
  })
  return {
    url,
    dataDir,
    child,
    stderr: () => stderr,
    stop: (signal = 'SIGTERM') => stopChild(child, signal),
  }
}

/** JSON over HTTP: returns status, content type and the parsed body (or the text). */
export async function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; body: any; headers: Headers }> {
  const r = await fetch(url + path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await r.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // not JSON
  }
  return { status: r.status, type: r.headers.get('content-type') ?? '', body: parsed, headers: r.headers }
}

/**
 * A free TCP port on loopback (bound and released), below the kernel's ephemeral range: a service
 * restarted on its port (Icecast, NATS) must find it free, and a port in that range can be taken while
 * it is down, by another listener on port 0 or by a client's own end (a connect to a closed local
 * port in that range may even connect to itself).
 */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net')
  const { readFileSync } = await import('node:fs')
  let ephemeralLow = 32768
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralLow
  } catch {}
  const low = Math.min(10000, ephemeralLow - 1000)
  const bound = (port: number) =>
    new Promise<boolean>((resolve) => {
      const srv = createServer()
      srv.once('error', () => resolve(false))
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)))
    })
  for (;;) {
    const port = low + Math.floor(Math.random() * (ephemeralLow - low))
    if (await bound(port)) return port
  }
}

export interface RunningNats {
  url: string
  wsUrl: string
  /** With `auth`: a credentials file (user JWT and seed) that the server admits. */
  creds?: string
  /** Kills the server (SIGKILL: no clean shutdown) and starts it again on the same ports and store. */
  restart(downMs?: number): Promise<void>
  /** SIGTERM; resolves to its exit code once it has exited. */
  stop(): Promise<number | null>
}

/** `signal` to a child process that still runs; resolves to its exit code (null where a signal ended it) once it has exited. */
export function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
    child.once('exit', (code) => resolve(code))
    child.kill(signal)
  })
}

/**
 * A server started on ports `configure` chooses, up to `tries` times: a port free when chosen can be
 * taken before the server binds it (test files start services side by side), and then the server
 * exits at once (`start` throws), so it starts again on other ports. The last try's error is thrown.
 */
export async function onFreshPorts(configure: () => Promise<void>, start: () => Promise<void>, tries = 3): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await configure()
    try {
      return await start()
    } catch (e) {
      if (attempt >= tries) throw e
    }
  }
}

/**
 * A real nats-server (Debian's /usr/sbin/nats-server) with JetStream and a websocket listener, on free
 * ports. With `auth` (the server's configuration lines and a user's creds file; testing/ makes them) it
 * runs in operator mode, as a managed swarm does.
 */
export async function startNats(
  o: { auth?: () => Promise<{ conf: string; creds: string }>; pickPort?: () => Promise<number> } = {},
): Promise<RunningNats> {
  const { writeFileSync } = await import('node:fs')
  const { connect } = await import('node:net')
  const dir = mkdtempSync(join(tmpdir(), 'crystal-nats-'))
  const conf = join(dir, 'nats.conf')
  let auth = ''
  let creds: string | undefined
  if (o.auth) {
    const made = await o.auth()
    auth = made.conf
    creds = join(dir, 'explorer.creds')
    writeFileSync(creds, made.creds, { mode: 0o600 })
  }
  let [port, wsPort] = [0, 0]
  const configure = async () => {
    const pick = o.pickPort ?? freePort
    port = await pick()
    do wsPort = await pick()
    while (wsPort === port)
    writeFileSync(
      conf,
      `listen: 127.0.0.1:${port}\njetstream { store_dir: "${join(dir, 'js')}" }\nwebsocket { host: 127.0.0.1, port: ${wsPort}, no_tls: true }\n${auth}`,
    )
  }
  // up where the port greets as NATS does (INFO first): a port that answers may be another server's
  const up = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      const done = (ok: boolean) => (socket.destroy(), resolve(ok))
      socket.setTimeout(1000, () => done(false))
      socket.once('data', (d) => done(d.toString().startsWith('INFO')))
      socket.on('error', () => done(false))
    })
  let child: ChildProcess
  const start = async () => {
    let said = ''
    child = spawn('/usr/sbin/nats-server', ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] })
    for (const out of [child.stdout!, child.stderr!]) out.on('data', (d) => (said = (said + d).slice(-2000)))
    for (let i = 0; !(await up()); i++) {
      if (i > 100 || child.exitCode !== null) {
        child.kill('SIGKILL') // a slow one is not left running past its test
        throw new Error(`nats-server did not start on ${port} and ${wsPort}: ${said.trim().split('\n').slice(-3).join(' | ')}`)
      }
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  const stop = () => stopChild(child)
  await onFreshPorts(configure, start)
  return {
    url: `nats://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${wsPort}`,
    creds,
    restart: async (downMs = 1000) => {
      await new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGKILL')))
      await new Promise((r) => setTimeout(r, downMs))
      await start()
    },
    stop,
  }
}

/** The demo library (server/station/demo.ts) for tests, written once per machine and shared by the
 * test files: encoding it is most of a station test's time. Keyed by the generator's code and the
 * track list, so a changed generator writes a fresh one. Treat it as read-only (copy to change it). */
export async function demoLibrary(seconds = 14, count = 4): Promise<{ dir: string; tracks: DemoTrack[] }> {
  const { createHash } = await import('node:crypto')
  const { renameSync, rmSync, writeFileSync } = await import('node:fs')
  const tracks = demoTracks(seconds, count)
  const key = createHash('sha256')
    .update(synthesise.toString() + demoMp3.toString() + JSON.stringify(tracks))
    .digest('hex')
    .slice(0, 12)
  const dir = join(tmpdir(), `crystal-demo-${key}`)
  if (existsSync(join(dir, '.complete'))) return { dir, tracks }
  const staging = mkdtempSync(`${dir}-staging-`)
  await writeDemoLibrary(staging, tracks)
  writeFileSync(join(staging, '.complete'), '')
  try {
    renameSync(staging, dir)
  } catch {
    // another test file finished the same library first
    rmSync(staging, { recursive: true, force: true })
  }
  return { dir, tracks }
}

/** A registration candidate with a random unit signature (64 floats), reproducible from `seed`. */
export function candidate(seed: number, overrides: Partial<Candidate> = {}): Candidate {
  let s = (seed * 2654435761) >>> 0
  const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32
  const raw = Array.from({ length: 64 }, () => rand() * 2 - 1)
  const norm = Math.hypot(...raw)
  return {
    class: 'standing_echo',
    persistence: rand(),
    noise_tolerance: rand(),
    material: 'ideal_resonator',
    lineage: [],
    signature: raw.map((v) => v / norm),
    hash: seed.toString(16).padStart(64, '0'),
    genome: { pulses: [{ x: 0.5, y: 0.5, radius: 0.1, amplitude: 1, frequency: 0, phase: 0 }], resonate_steps: 100, dream: 'none' },
    metrics: {},
    ...overrides,
  }
}
