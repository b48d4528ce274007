// Helpers for the tests, left out of the build: the CLI run to its end, a real Icecast, a swarm's
// operator-mode credentials, and (from bench/harness.ts, which the benchmarks use at run time) the
// built server, nats-server and the demo library.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CRYSTAL_BIN, freePort, onFreshPorts, startNats as startNatsWith, stopChild, type RunningNats } from '../bench/harness.js'

export { call, demoLibrary, freePort, startServer, type RunningNats, type RunningServer } from '../bench/harness.js'

/** `node server/index.js`: the service without the CLI's name, the same flags as `crystal serve`. */
export const SERVER_ENTRY = new URL('../server/index.js', import.meta.url).pathname

/**
 * A real nats-server with JetStream and a websocket listener, on free ports. With `auth` it runs in
 * operator mode (decentralized JWT auth, as a managed swarm does): an operator, a system account and
 * one account with JetStream are made here, with a user's creds file.
 */
export const startNats = (o: { auth?: boolean; pickPort?: () => Promise<number> } = {}): Promise<RunningNats> =>
  startNatsWith({ auth: o.auth ? operatorAuth : undefined, pickPort: o.pickPort })

/** NATS JWTs (ed25519-nkey signed claims, as `nsc` makes them) for an operator-mode server, and a user's creds file. */
async function operatorAuth(): Promise<{ conf: string; creds: string }> {
  const { createAccount, createOperator, createUser } = await import('@nats-io/nkeys')
  const { createHash } = await import('node:crypto')
  type Signer = { getPublicKey(): string; sign(data: Uint8Array): Uint8Array }
  const b64 = (v: string | Uint8Array) => Buffer.from(v).toString('base64url')
  const jwt = (issuer: Signer, subject: Signer, name: string, nats: Record<string, unknown>) => {
    const claims: Record<string, unknown> = {
      iat: Math.floor(Date.now() / 1000),
      iss: issuer.getPublicKey(),
      name,
      sub: subject.getPublicKey(),
      nats: { ...nats, version: 2 },
    }
    claims.jti = createHash('sha256').update(JSON.stringify(claims)).digest('base64url')
    const signed = `${b64(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }))}.${b64(JSON.stringify(claims))}`
    return `${signed}.${b64(issuer.sign(new TextEncoder().encode(signed)))}`
  }
  const [operator, system, account, user] = [createOperator(), createAccount(), createAccount(), createUser()]
  const unlimited = {
    subs: -1,
    data: -1,
    payload: -1,
    imports: -1,
    exports: -1,
    wildcards: true,
    conn: -1,
    leaf: -1,
    mem_storage: -1,
    disk_storage: -1,
    streams: -1,
    consumer: -1,
  }
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
export function runCrystal(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CRYSTAL_BIN, ...args], { env: { ...process.env, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('exit', (status) => resolve({ status, stdout, stderr }))
  })
}

/** The primitives a data dir's registry holds (none before its first write). */
export const heldPrimitives = (dataDir: string): any[] =>
  existsSync(join(dataDir, 'registry.json')) ? JSON.parse(readFileSync(join(dataDir, 'registry.json'), 'utf8')).primitives : []

export interface RunningIcecast {
  /** http://127.0.0.1:PORT */
  url: string
  /** the address the station sends to: http://source:PASSWORD@127.0.0.1:PORT/radio.mp3 */
  sourceUrl: string
  log: () => string
  restart(downMs?: number): Promise<void>
  /** SIGTERM; resolves to its exit code once it has exited. */
  stop(): Promise<number | null>
}

/** A real Icecast (Debian's icecast2) on a free loopback port. As root it must drop to the icecast2
 * user (DESIGN.md section 9), so its log folder is writable by that user. The mount's in-stream titles
 * are UTF-8 (Icecast's default for MP3 mounts is ISO-8859-1, whatever the source sends). */
export async function startIcecast(o: { pickPort?: () => Promise<number> } = {}): Promise<RunningIcecast> {
  const { writeFileSync, chmodSync } = await import('node:fs')
  const dir = mkdtempSync(join(tmpdir(), 'crystal-icecast-'))
  chmodSync(dir, 0o777)
  let port = 0
  const conf = join(dir, 'icecast.xml')
  const owner = process.getuid?.() === 0 ? '<changeowner><user>icecast2</user><group>icecast</group></changeowner>' : ''
  const configure = async () => {
    port = await (o.pickPort ?? freePort)()
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
  }
  let child: ChildProcess
  let out = ''
  const logs = () => (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '')
  const up = async () => {
    try {
      // a port that answers may be another server's, one that never replies among them
      const res = await fetch(`http://127.0.0.1:${port}/status-json.xsl`, { signal: AbortSignal.timeout(1000) })
      return res.ok && (res.headers.get('server') ?? '').startsWith('Icecast')
    } catch {
      return false
    }
  }
  const start = async () => {
    child = spawn('/usr/bin/icecast2', ['-c', conf])
    child.stdout!.on('data', (d) => (out += d))
    child.stderr!.on('data', (d) => (out += d))
    // by the clock, not by tries: on two cores shared with a browser and the GPU tests, a try can take seconds
    const deadline = Date.now() + 30_000
    while (!(await up())) {
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill('SIGKILL') // a slow one is not left running past its test
        throw new Error(`icecast2 did not start on ${port}: ${out}${logs()}`)
      }
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  const stop = () => stopChild(child)
  await onFreshPorts(configure, start)
  return {
    url: `http://127.0.0.1:${port}`,
    sourceUrl: `http://source:hackme@127.0.0.1:${port}/radio.mp3`,
    log: () => out + logs(),
    restart: async (downMs = 500) => {
      await stop()
      await new Promise((r) => setTimeout(r, downMs))
      try {
        await start()
      } catch (first) {
        // once (CI, 2026-12-05, three suites on two cores) an icecast2 restarted logged "server started",
        // then took no connection for 27 s: the hung one ended, it starts once more on its port
        await stopChild(child, 'SIGKILL')
        await start().catch((again) => {
          throw new Error(`icecast2 did not start again, twice: ${(first as Error).message}\n${(again as Error).message}`)
        })
      }
    },
    stop,
  }
}
