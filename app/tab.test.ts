// "Server -> This tab" as the tab's worker does it (app/tab.ts resumeField), without the browser: the
// server's field from GET /crystal/field continues in a tab engine in the field's own text encoding,
// whatever encoding that engine was opened with, so recall in the tab reads the server's memories.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { decodeField, ENCODINGS } from '../engine/contracts/api.js'
import { ENCODING_VERSION } from '../engine/encode/text.js'
import { createEngine } from '../engine/field/engine.js'
import { call, startServer, type RunningServer } from '../testing/services.js'
import { resumeField } from './tab'

let s: RunningServer
beforeAll(async () => {
  s = await startServer(['--size', '32', '--material', 'europium_crystal', '--seed', '1'])
})
afterAll(async () => {
  await s?.stop()
})

describe("the server's field in a tab engine", () => {
  test("it takes the field's encoding and conditions; recall in it finds the text as the server does", async () => {
    await call(s.url, 'POST', '/crystal/write', { text: 'the amber lattice hums', importance: 1 })
    await call(s.url, 'POST', '/crystal/step', { steps: 30 })
    await call(s.url, 'POST', '/crystal/conditions', { noise: 0.001 })
    const f = decodeField((await call(s.url, 'GET', '/crystal/field')).body)
    expect(f.encoding).toBe(ENCODING_VERSION)
    // opened with the encoding new fields do not take (nothing is written with it here)
    const other = ENCODINGS.find((v) => v !== f.encoding)!
    const e = await createEngine({ backend: 'cpu', size: 32, material: 'vacuum', encoding: other })
    try {
      await resumeField(e, f)
      expect(e).toMatchObject({ encoding: f.encoding, step_count: 30, temperature_k: f.temperature_k, noise: 0.001 })
      expect(e.material.name).toBe('europium_crystal')
      const ours = await e.recall('the amber lattice hums', 1)
      const theirs = (await call(s.url, 'POST', '/crystal/recall', { text: 'the amber lattice hums', k: 1 })).body
      expect(ours.hits[0]?.text).toBe('the amber lattice hums')
      expect(ours.hits[0].match).toBeCloseTo(theirs.hits[0].match, 3)
    } finally {
      e.destroy()
    }
  })
})
