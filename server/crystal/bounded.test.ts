// The live field's bounded work beyond the step budget: the memories it holds (recall tells those of one
// moment apart pair by pair, on the server's thread) and a program whose client went away (its worker
// ends, and with it its place among SVC_CRYSTAL_MAX_RUNS).
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { API_LIMITS } from '../../engine/contracts/api.js'
import { call, startServer, type RunningServer } from '../../testing/services.js'

let s: RunningServer
beforeAll(async () => {
  s = await startServer(['--size', '16'], { SVC_CRYSTAL_MAX_RUNS: '1' })
})
afterAll(async () => {
  await s?.stop()
})

describe('bounded work', () => {
  test(`the live field holds at most ${API_LIMITS.memories} memories: one more is refused with 413 naming the limit, and recall still answers`, async () => {
    for (let i = 0; i < API_LIMITS.memories; i++) {
      const w = await call(s.url, 'POST', '/crystal/write', { text: `memory ${i}` })
      expect(w.status, `write ${i}`).toBe(200)
    }
    const over = await call(s.url, 'POST', '/crystal/write', { text: 'one too many' })
    expect(over.status).toBe(413)
    expect(over.body.detail).toBe(`memories is ${API_LIMITS.memories + 1}, over the limit of ${API_LIMITS.memories} (memories)`)
    // nothing was written
    expect((await call(s.url, 'GET', '/crystal/state?size=8')).body.memories).toBe(API_LIMITS.memories)
    const r = await call(s.url, 'POST', '/crystal/recall', { text: 'memory 7', k: 1 })
    expect(r.status).toBe(200)
    expect(r.body.memories).toBe(API_LIMITS.memories)
  })

  test('a program whose client goes away is ended: the next program runs at once (SVC_CRYSTAL_MAX_RUNS is 1)', async () => {
    // some tens of seconds of steps at N = 16, within the budget (6.4 M steps at N = 16)
    const body = JSON.stringify({ program: 'PULSE 0.5 0.5\nRESONATE 6000000' })
    const { hostname, port } = new URL(s.url)
    const gone = request({ hostname, port, path: '/crystal/run', method: 'POST', headers: { 'content-type': 'application/json' } })
    gone.on('error', () => {})
    gone.end(body)
    await new Promise((w) => setTimeout(w, 500))
    // control: while it runs the one place is taken
    expect((await call(s.url, 'POST', '/crystal/run', { program: 'RESONATE 10' })).status).toBe(429)
    gone.destroy()
    let status = 0
    for (let i = 0; i < 50 && status !== 200; i++) {
      await new Promise((w) => setTimeout(w, 100))
      status = (await call(s.url, 'POST', '/crystal/run', { program: 'RESONATE 10' })).status
    }
    expect(status).toBe(200)
  })
})
