// The live field's bounded work beyond the step budget: the memories it holds (recall tells those of one
// moment apart pair by pair, on the server's thread).
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { API_LIMITS } from '../../engine/contracts/api.js'
import { call, startServer, type RunningServer } from '../../testing/services.js'

let s: RunningServer
beforeAll(async () => {
  s = await startServer(['--size', '16'])
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
})
