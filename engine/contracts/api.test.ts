// The REST contract's own pieces: a starting job is a valid Job, and a pulse body takes the genome's ranges.
import { Value } from '@sinclair/typebox/value'
import { describe, expect, test } from 'vitest'
import { JobSchema, PulseBody, runningJob } from './api.js'

describe('the REST contract', () => {
  test('a job as it starts is a valid Job: running, nothing done, not finished', () => {
    const job = runningJob('job-1', { material: 'vacuum', generations: 3 })
    expect(Value.Check(JobSchema, job)).toBe(true)
    expect(job).toMatchObject({ status: 'running', progress: { generation: 0, generations: 3 }, registered: [], finished_at: null })
  })

  test('a pulse body needs only its place, and keeps the genome pulse ranges', () => {
    expect(Value.Check(PulseBody, { x: 0.5, y: 0.5 })).toBe(true)
    expect(Value.Check(PulseBody, { x: 0.5, y: 0.5, radius: 0 })).toBe(false)
    expect(Value.Check(PulseBody, { x: 0.5, y: 0.5, amplitude: 101 })).toBe(false)
    expect(Value.Check(PulseBody, { x: 0.5, y: 0.5, colour: 'red' })).toBe(false)
  })
})
