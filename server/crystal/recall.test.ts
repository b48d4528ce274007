// Recall over REST as a new user tries it: texts written one after another at the current step (no
// steps between), then one-word questions. Each finds its own memory first, with its match and strength.
import { Value } from '@sinclair/typebox/value'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import * as api from '../../engine/contracts/api.js'
import { TWELVE, WORDS } from '../../testing/fixtures.js'
import { call, startServer, type RunningServer } from '../../testing/services.js'

let s: RunningServer
beforeAll(async () => {
  s = await startServer(['--size', '128', '--material', 'ideal_resonator'])
})
afterAll(async () => {
  await s?.stop()
})

describe('POST /crystal/recall after writes at one step', () => {
  test('twelve texts written at one step, 300 steps on: each one-word query finds its memory first, with match and strength; a word never written finds nothing', async () => {
    for (const text of TWELVE) expect((await call(s.url, 'POST', '/crystal/write', { text })).status).toBe(200)
    expect((await call(s.url, 'POST', '/crystal/step', { steps: 300 })).status).toBe(200)
    for (const [i, text] of WORDS.entries()) {
      const r = await call(s.url, 'POST', '/crystal/recall', { text, k: 3 })
      expect(r.status).toBe(200)
      expect(Value.Check(api.RecallReply, r.body)).toBe(true)
      expect(r.body.hits[0]).toMatchObject({ rank: 1, text: TWELVE[i] })
      // ideal_resonator keeps nearly all of each memory; one word of several matches well under 1
      expect(r.body.hits[0].strength).toBeGreaterThan(0.9)
      expect(r.body.hits[0].match).toBeLessThan(0.6)
      expect(r.body.hits[0].score).toBe(r.body.hits[0].match)
    }
    const exact = await call(s.url, 'POST', '/crystal/recall', { text: TWELVE[3], k: 3 })
    expect(exact.body.hits[0].text).toBe(TWELVE[3])
    expect(exact.body.hits[0].match).toBeCloseTo(1, 1)
    const never = await call(s.url, 'POST', '/crystal/recall', { text: 'quartz', k: 3 })
    expect(never.body).toMatchObject({ hits: [], memories: 12, reason: 'nothing resonates above the noise floor' })
  }, 120_000)
})
