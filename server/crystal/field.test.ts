// GET /crystal/field: the server's whole field, as a tab takes it into its own engine (Server -> This
// tab). Its planes are size x size float32, the same field GET /crystal/state shows, with the text
// encoding of its memories (app/tab.test.ts: an engine that resumes it answers recall as the server does).
import { Value } from '@sinclair/typebox/value'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import * as api from '../../engine/contracts/api.js'
import { ENCODING_VERSION } from '../../engine/encode/text.js'
import { call, startServer, type RunningServer } from '../../testing/services.js'

const N = 32
let s: RunningServer
beforeAll(async () => {
  s = await startServer(['--size', String(N), '--material', 'europium_crystal', '--seed', '1'])
})
afterAll(async () => {
  await s?.stop()
})

const field = async () => {
  const r = await call(s.url, 'GET', '/crystal/field')
  expect(r.status).toBe(200)
  expect(r.type).toContain('application/json')
  expect(Value.Errors(api.FieldReply, r.body).First()?.message).toBeUndefined()
  return api.decodeField(r.body)
}

describe('GET /crystal/field', () => {
  test('a fresh server: the empty field (N x N zeros in each plane), step 0, no memories, its conditions and text encoding', async () => {
    const f = await field()
    expect(f).toMatchObject({ size: N, step_count: 0, memories: [], material: 'europium_crystal', noise: 0, encoding: ENCODING_VERSION })
    expect(f.temperature_k).toBeGreaterThan(0)
    expect(f.u).toHaveLength(N * N)
    expect(f.prev).toHaveLength(N * N)
    expect(f.u.every((v) => v === 0) && f.prev.every((v) => v === 0)).toBe(true)
  })

  test('after a write and steps: the field GET /crystal/state shows, the memory at its step', async () => {
    await call(s.url, 'POST', '/crystal/write', { text: 'the amber lattice hums', importance: 1 })
    await call(s.url, 'POST', '/crystal/step', { steps: 25 })
    await call(s.url, 'POST', '/crystal/conditions', { noise: 0.001 })
    const f = await field()
    expect(f).toMatchObject({
      size: N,
      step_count: 25,
      noise: 0.001,
      memories: [{ text: 'the amber lattice hums', importance: 1, step: 0 }],
    })
    const shown = (await call(s.url, 'GET', `/crystal/state?size=${N}`)).body.field as number[]
    expect(Math.max(...f.u.map((v) => Math.abs(v)))).toBeGreaterThan(0.01)
    // the state is rounded to 5 decimals; the planes are the engine's own float32
    expect(Math.max(...shown.map((v, i) => Math.abs(v - f.u[i])))).toBeLessThanOrEqual(5e-6)
    expect(f.prev.some((v, i) => v !== f.u[i])).toBe(true)
  })

  test('the OpenAPI document names the encoding as a required field, one of the encodings this build reads', async () => {
    const doc = (await call(s.url, 'GET', '/openapi.json')).body
    const schema = doc.paths['/crystal/field'].get.responses['200'].content['application/json'].schema
    expect(schema.required).toContain('encoding')
    expect(schema.properties.encoding.anyOf.flatMap((v: { enum: number[] }) => v.enum)).toEqual([...api.ENCODINGS])
  })

  test('a plane that is not size x size is refused by the decoder, naming the plane and the sizes', async () => {
    const wire = (await call(s.url, 'GET', '/crystal/field')).body as api.FieldWire
    expect(() => api.decodeField({ ...wire, size: N + 1 })).toThrow(
      `the field's u holds ${N * N * 4} bytes, not the ${(N + 1) ** 2 * 4} of ${N + 1} x ${N + 1} float32`,
    )
    expect(() => api.decodeField({ ...wire, prev: '' })).toThrow(`the field's prev holds 0 bytes`)
  })
})
