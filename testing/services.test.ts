// The real services the tests start: a port free when chosen can be taken before the server binds it
// (test files start services side by side, and CI once saw nats-server exit at once), so each starts
// again on other ports. Here the first ports chosen are held by another listener.
import { createServer, type Server, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, startIcecast, startNats } from './services.js'

let held: Server
let heldPort: number

const callers = new Set<Socket>()

beforeAll(async () => {
  // another server on the port: it takes connections and never replies
  held = createServer((socket) => callers.add(socket))
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve))
  heldPort = (held.address() as { port: number }).port
})
afterAll(async () => {
  for (const socket of callers) socket.destroy()
  await new Promise<void>((resolve) => held.close(() => resolve()))
})

/** Ports as freePort picks them, but the held one for the first `taken` picks. */
const takenFirst = (taken: number) => {
  let picks = 0
  return () => (picks++ < taken ? Promise.resolve(heldPort) : freePort())
}

describe('services started where their first port was taken', () => {
  it('nats-server starts on other ports and answers there', async () => {
    const nats = await startNats({ pickPort: takenFirst(1) })
    try {
      expect(nats.url).not.toContain(`:${heldPort}`)
      const { connect } = await import('@nats-io/transport-node')
      const nc = await connect({ servers: nats.url })
      await nc.flush()
      await nc.close()
    } finally {
      await nats.stop()
    }
  })

  it('nats-server gives up after three tries, naming the port and what the server said', async () => {
    // each try's client port the held one, its websocket port a free one
    let picks = 0
    const pickPort = () => (picks++ % 2 === 0 ? Promise.resolve(heldPort) : freePort())
    await expect(startNats({ pickPort })).rejects.toThrow(new RegExp(`nats-server did not start on ${heldPort} .*address already in use`))
  })

  it('icecast2 starts on another port and serves its status there', async () => {
    const icecast = await startIcecast({ pickPort: takenFirst(1) })
    try {
      expect(icecast.url).not.toContain(`:${heldPort}`)
      expect((await fetch(`${icecast.url}/status-json.xsl`)).ok).toBe(true)
    } finally {
      await icecast.stop()
    }
  })

  it('icecast2 restarted where its port was taken meanwhile tries once more on that port, then names both failures', async () => {
    const icecast = await startIcecast()
    const port = Number(new URL(icecast.url).port)
    await icecast.stop()
    // another listener on its port meanwhile; its callers (the restart's tries to greet it) ended before it closes
    const mine = new Set<Socket>()
    const holder = createServer((socket) => mine.add(socket))
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve))
    try {
      await expect(icecast.restart(0)).rejects.toThrow(
        new RegExp(`did not start again, twice: icecast2 did not start on ${port}[^]*\\nicecast2 did not start on ${port}`),
      )
    } finally {
      for (const socket of mine) socket.destroy()
      await new Promise<void>((resolve) => holder.close(() => resolve()))
    }
  })

  it('icecast2 gives up after three tries, naming the port', async () => {
    await expect(startIcecast({ pickPort: takenFirst(3) })).rejects.toThrow(`icecast2 did not start on ${heldPort}`)
  })
})
