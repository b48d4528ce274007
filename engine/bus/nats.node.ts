// NATS as the bus connection (Node): @nats-io/transport-node, with the address and the credentials
// file from the bus settings (engine/config.ts) that the edge read.
import { connect, credsAuthenticator, type Authenticator, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node'
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import type { BusSettings } from '../config.js'
import { CrystalError } from '../errors.js'
import type { BusConnection } from './contract_bus.js'

/**
 * The authenticator of a credentials file, or undefined without one. The file is read and tried
 * here, once, so that a missing or malformed file is reported as such, not as an unreachable bus.
 */
export function credsFrom(file: string | undefined): Authenticator | undefined {
  if (!file) return undefined
  let bytes: Uint8Array
  try {
    bytes = readFileSync(file)
  } catch (e) {
    throw new CrystalError(
      'missing_credential',
      `cannot read the NATS credentials file ${file} named by SVC_NATS_CREDS (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      { file, field: 'SVC_NATS_CREDS' },
    )
  }
  const auth = credsAuthenticator(bytes)
  try {
    // signs a nonce: parses the JWT and the seed as the connection will
    auth('nonce')
  } catch (e) {
    throw new CrystalError(
      'missing_credential',
      `the NATS credentials file ${file} named by SVC_NATS_CREDS is malformed (${(e as Error).message}): it should hold a user JWT and its NKEY seed`,
      { file, field: 'SVC_NATS_CREDS' },
    )
  }
  return auth
}

/** Connects to the bus (settings.url, with settings.creds when set), or says clearly why it cannot. */
export async function connectBus(
  settings: BusSettings,
  purpose: string,
  options: Partial<ConnectionOptions> = {},
): Promise<NatsConnection> {
  const url = settings.url
  if (!url)
    throw new CrystalError(
      'bus_unavailable',
      `${purpose} needs the swarm's NATS server: set SVC_NATS_URL (for example nats://127.0.0.1:4222)`,
      { field: 'SVC_NATS_URL' },
    )
  const authenticator = credsFrom(settings.creds)
  try {
    return await connect({ servers: url, authenticator, name: 'crystal', timeout: 5000, ...options })
  } catch (e) {
    throw new CrystalError('bus_unavailable', `cannot reach NATS at ${url} (${(e as Error).message})`, { field: 'SVC_NATS_URL' })
  }
}

export function natsConnection(nc: NatsConnection): BusConnection {
  return {
    publish: (subject, data) => nc.publish(subject, data),
    subscribe: (subject, handler, queue) => {
      const sub = nc.subscribe(subject, {
        queue,
        callback: (err, msg) => {
          if (!err) handler(msg.subject, msg.string())
        },
      })
      return { unsubscribe: () => sub.unsubscribe() }
    },
  }
}

/** This node's id on the bus: SVC_CRYSTAL_NODE, or crystal-<host>, made a valid subject token. */
export function nodeId(settings: BusSettings): string {
  return (settings.node || `crystal-${hostname()}`).replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 64)
}
