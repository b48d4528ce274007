// NATS as the bus connection (Node): @nats-io/transport-node, address from SVC_NATS_URL, credentials
// from SVC_NATS_CREDS.
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node'
import { readFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { CrystalError } from '../errors.js'
import type { BusConnection } from './contract_bus.js'

/** Connects to SVC_NATS_URL (with SVC_NATS_CREDS when set), or says clearly why it cannot. */
export async function connectBus(purpose: string): Promise<NatsConnection> {
  const url = process.env.SVC_NATS_URL
  if (!url) throw new CrystalError('bus_unavailable', `${purpose} needs the swarm's NATS server: set SVC_NATS_URL (for example nats://127.0.0.1:4222)`, { field: 'SVC_NATS_URL' })
  const creds = process.env.SVC_NATS_CREDS
  try {
    return await connect({ servers: url, authenticator: creds ? credsAuthenticator(await readFile(creds)) : undefined, name: 'crystal', timeout: 5000 })
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
export function nodeId(): string {
  return (process.env.SVC_CRYSTAL_NODE || `crystal-${hostname()}`).replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 64)
}
