// Starts the built server (`crystal serve`) as a child process on a free port for the server tests,
// and stops it; the tests talk to it over real HTTP.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { demoMp3, demoTracks, synthesise, writeDemoLibrary, type DemoTrack } from './station/demo.js'

// from server/ (tests on the sources) or dist/server/ (the compiled benchmark)
const BIN = new URL(import.meta.url.includes('/dist/') ? '../../bin/crystal.js' : '../bin/crystal.js', import.meta.url).pathname
/** `node server/index.js`: the service without the CLI's name, the same flags as `crystal serve`. */
export const SERVER_ENTRY = new URL(import.meta.url.includes('/dist/') ? '../../server/index.js' : './index.js', import.meta.url).pathname

export interface RunningServer {
  url: string
  dataDir: string
  child: ChildProcess
  stderr: () => string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

export async function startServer(args: string[] = [], env: Record<string, string> = {}, dataDir = mkdtempSync(join(tmpdir(), 'crystal-server-')), entry: string[] = [BIN, 'serve']): Promise<RunningServer> {
  const child = spawn(process.execPath, [...entry, '--port', '0', '--size', '48', ...args], { env: { ...process.env, SVC_CRYSTAL_DATA_DIR: dataDir, ...env } })
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr += d))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${stderr}`)), 30_000)
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
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode)
        child.once('exit', (code) => resolve(code))
        child.kill(signal)
      }),
  }
}

/** JSON over HTTP: returns status, content type and the parsed body (or the text). */
export async function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: any; headers: Headers }> {
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

/** A free TCP port on loopback (bound and released). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net')
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

export interface RunningNats {
  url: string
  wsUrl: string
  /** With `auth`: a credentials file (user JWT and seed) that the server admits. */
  creds?: string
  /** Kills the server (SIGKILL: no clean shutdown) and starts it again on the same ports and store. */
  restart(downMs?: number): Promise<void>
  stop(): Promise<void>
}

/**
 * A real nats-server (Debian's /usr/sbin/nats-server) with JetStream and a websocket listener, on free
 * ports. With `auth` it runs in operator mode (decentralized JWT auth, as a managed swarm does): an
 * operator, a system account and one account with JetStream are made here, with a user's creds file.
 */
export async function startNats(o: { auth?: boolean } = {}): Promise<RunningNats> {
  const { writeFileSync } = await import('node:fs')
  const { connect } = await import('node:net')
  const dir = mkdtempSync(join(tmpdir(), 'crystal-nats-'))
  const [port, wsPort] = [await freePort(), await freePort()]
  const conf = join(dir, 'nats.conf')
  let auth = ''
  let creds: string | undefined
  if (o.auth) {
    const made = await operatorAuth()
    auth = made.conf
    creds = join(dir, 'explorer.creds')
    writeFileSync(creds, made.creds, { mode: 0o600 })
  }
  writeFileSync(conf, `listen: 127.0.0.1:${port}\njetstream { store_dir: "${join(dir, 'js')}" }\nwebsocket { host: 127.0.0.1, port: ${wsPort}, no_tls: true }\n${auth}`)
  const up = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => (socket.end(), resolve(true)))
      socket.on('error', () => resolve(false))
    })
  let child: ChildProcess
  const start = async () => {
    child = spawn('/usr/sbin/nats-server', ['-c', conf], { stdio: 'ignore' })
    for (let i = 0; !(await up()); i++) {
      if (i > 100 || child.exitCode !== null) throw new Error('nats-server did not start')
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  const stop = () => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM'))))
  await start()
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

/** NATS JWTs (ed25519-nkey signed claims, as `nsc` makes them) for an operator-mode server, and a user's creds file. */
async function operatorAuth(): Promise<{ conf: string; creds: string }> {
  const { createAccount, createOperator, createUser } = await import('@nats-io/nkeys')
  const { createHash } = await import('node:crypto')
  type Signer = { getPublicKey(): string; sign(data: Uint8Array): Uint8Array }
  const b64 = (v: string | Uint8Array) => Buffer.from(v).toString('base64url')
  const jwt = (issuer: Signer, subject: Signer, name: string, nats: Record<string, unknown>) => {
    const claims: Record<string, unknown> = { iat: Math.floor(Date.now() / 1000), iss: issuer.getPublicKey(), name, sub: subject.getPublicKey(), nats: { ...nats, version: 2 } }
    claims.jti = createHash('sha256').update(JSON.stringify(claims)).digest('base64url')
    const signed = `${b64(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }))}.${b64(JSON.stringify(claims))}`
    return `${signed}.${b64(issuer.sign(new TextEncoder().encode(signed)))}`
  }
  const [operator, system, account, user] = [createOperator(), createAccount(), createAccount(), createUser()]
  const unlimited = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1, mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 }
  const conf = [
    `operator: ${jwt(operator, operator, 'crystal-test', { type: 'operator' })}`,
    `system_account: ${system.getPublicKey()}`,
    'resolver: MEMORY',
    `resolver_preload: { ${system.getPublicKey()}: ${jwt(operator, system, 'SYS', { type: 'account' })}, ${account.getPublicKey()}: ${jwt(operator, account, 'swarm', { type: 'account', limits: unlimited })} }`,
  ].join('\n')
  const userJwt = jwt(account, user, 'explorer', { type: 'user', pub: {}, sub: {}, subs: -1, data: -1, payload: -1 })
  const creds = `-----BEGIN NATS USER JWT-----\n${userJwt}\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${new TextDecoder().decode(user.getSeed())}\n------END USER NKEY SEED------\n`
  return { conf: conf + '\n', creds }
}

/** Runs the CLI to its end; what it printed comes back with its exit status. */
export function runCrystal(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('exit', (status) => resolve({ status, stdout, stderr }))
  })
}

/** The primitives a data dir's registry holds (none before its first write). */
export const heldPrimitives = (dataDir: string): any[] => (existsSync(join(dataDir, 'registry.json')) ? JSON.parse(readFileSync(join(dataDir, 'registry.json'), 'utf8')).primitives : [])

export interface RunningIcecast {
  /** http://127.0.0.1:PORT */
  url: string
  /** the address the station sends to: http://source:PASSWORD@127.0.0.1:PORT/radio.mp3 */
  sourceUrl: string
  log: () => string
  restart(downMs?: number): Promise<void>
  stop(): Promise<void>
}

/** A real Icecast (Debian's icecast2) on a free loopback port. As root it must drop to the icecast2
 * user (DESIGN.md section 9), so its log folder is writable by that user. The mount's in-stream titles
 * are UTF-8 (Icecast's default for MP3 mounts is ISO-8859-1, whatever the source sends). */
export async function startIcecast(): Promise<RunningIcecast> {
  const { writeFileSync, chmodSync } = await import('node:fs')
  const dir = mkdtempSync(join(tmpdir(), 'crystal-icecast-'))
  chmodSync(dir, 0o777)
  const port = await freePort()
  const conf = join(dir, 'icecast.xml')
  const owner = process.getuid?.() === 0 ? '<changeowner><user>icecast2</user><group>icecast</group></changeowner>' : ''
  writeFileSync(
    conf,
    `<icecast><location>test</location><admin>test@localhost</admin><hostname>127.0.0.1</hostname>
<limits><clients>50</clients><sources>4</sources><source-timeout>10</source-timeout><burst-on-connect>1</burst-on-connect><burst-size>65535</burst-size></limits>
<authentication><source-password>hackme</source-password><admin-user>admin</admin-user><admin-password>adminpw</admin-password></authentication>
<listen-socket><port>${port}</port><bind-address>127.0.0.1</bind-address></listen-socket>
<paths><basedir>/usr/share/icecast2</basedir><logdir>${dir}</logdir><webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot></paths>
<mount><mount-name>/radio.mp3</mount-name><charset>UTF-8</charset></mount>
<logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>3</loglevel></logging>
<security><chroot>0</chroot>${owner}</security></icecast>\n`,
  )
  let child: ChildProcess
  let out = ''
  const up = async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/status-json.xsl`)).ok
    } catch {
      return false
    }
  }
  const start = async () => {
    child = spawn('/usr/bin/icecast2', ['-c', conf])
    child.stdout!.on('data', (d) => (out += d))
    child.stderr!.on('data', (d) => (out += d))
    for (let i = 0; !(await up()); i++) {
      if (i > 200 || child.exitCode !== null) throw new Error(`icecast2 did not start: ${out}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  const stop = () => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM'))))
  await start()
  return {
    url: `http://127.0.0.1:${port}`,
    sourceUrl: `http://source:hackme@127.0.0.1:${port}/radio.mp3`,
    log: () => out + (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''),
    restart: async (downMs = 500) => {
      await stop()
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
  const key = createHash('sha256').update(synthesise.toString() + demoMp3.toString() + JSON.stringify(tracks)).digest('hex').slice(0, 12)
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
