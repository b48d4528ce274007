// Dawn's polls (wait.node.ts): spun only while the device answers, on a timer once it is quiet; every
// other setImmediate untouched. The loop's policy on a clock of the test's own, then on this machine's
// real WebGPU: a long device wait polls a tenth as often as a plain spin of the same event loop.
import { setImmediate as immediatePromise } from 'node:timers/promises'
import { promisify } from 'node:util'
import { describe, expect, test } from 'vitest'
import { dawnPolls, WaitLoop } from './wait.node.js'
import { nodeGpu } from './webgpu.node.js'

/** Turns of the test's own: a clock moved by hand, immediates and timers run when told. */
function manualTurns() {
  let t = 0
  const queued: { timer: boolean; run: () => void }[] = []
  return {
    turns: {
      now: () => t,
      immediate: (run: () => void) => queued.push({ timer: false, run }),
      timer: (run: () => void) => queued.push({ timer: true, run }),
    },
    advance: (ms: number) => void (t += ms),
    /** Runs what is queued now (not what that queues); says which were timers. */
    turn: () => queued.splice(0).map((q) => (q.run(), q.timer)),
  }
}

describe('WaitLoop', () => {
  test('polls spin for spinMs after a wait starts or the device answers, and wait a timer each otherwise', () => {
    const m = manualTurns()
    const loop = new WaitLoop(m.turns, 2)
    let polls = 0
    // Dawn's poll asks for the next one, as the binding's does while a promise is pending
    const poll = () => {
      polls++
      loop.poll(poll)
    }
    loop.poll(poll)
    m.turn()
    expect(polls).toBe(1)
    m.advance(1.5)
    m.turn()
    expect(loop.polls).toEqual({ spun: 2, slept: 0 })
    // quiet past spinMs: the next poll goes to a timer
    m.advance(1)
    expect(m.turn()).toEqual([false])
    expect(polls).toBe(2)
    expect(m.turn()).toEqual([true])
    expect(loop.polls).toEqual({ spun: 2, slept: 1 })
    // an answer: spinning again
    loop.heard()
    expect(m.turn()).toEqual([false])
    expect(loop.polls).toEqual({ spun: 3, slept: 1 })
  })

  test('a poll asked from outside a poll starts a new wait, which spins', () => {
    const m = manualTurns()
    const loop = new WaitLoop(m.turns, 2)
    loop.poll(() => {})
    m.advance(10)
    expect([...m.turn(), ...m.turn()]).toEqual([false, true])
    expect(loop.polls).toEqual({ spun: 0, slept: 1 })
    loop.poll(() => {})
    expect(m.turn()).toEqual([false])
    expect(loop.polls).toEqual({ spun: 1, slept: 1 })
  })
})

describe("Dawn's polls in Node", () => {
  test('a long device wait polls a tenth as often as a plain spin of the event loop would; other immediates pass straight through', async () => {
    const gpu = await nodeGpu()
    const device = await (await gpu.requestAdapter())!.requestDevice()
    const polls = dawnPolls()!
    expect(polls).toBeDefined()
    // work that keeps SwiftShader (or any device) busy a while: each invocation loops
    const module = device.createShaderModule({
      code: `@group(0) @binding(0) var<storage, read_write> out: array<f32>;
        @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
          var x = f32(id.x);
          for (var i = 0u; i < 400000u; i++) { x = fract(x * 1.0001 + 0.37); }
          out[id.x] = x;
        }`,
    })
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } })
    const out = device.createBuffer({ size: 64 * 64 * 4, usage: GPUBufferUsage.STORAGE })
    const encoder = device.createCommandEncoder()
    const pass = encoder.beginComputePass()
    pass.setPipeline(pipeline)
    pass.setBindGroup(
      0,
      device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: out } }] }),
    )
    pass.dispatchWorkgroups(64)
    pass.end()
    const before = { ...polls }
    const t0 = performance.now()
    device.queue.submit([encoder.finish()])
    await device.queue.onSubmittedWorkDone()
    const waited = performance.now() - t0
    const count = polls.spun - before.spun + (polls.slept - before.slept)
    expect(waited).toBeGreaterThan(40)
    expect(polls.slept - before.slept).toBeGreaterThan(0)

    // the control, the same event loop spun with plain immediates (as Dawn's polls were) for a while
    let turns = 0
    const until = performance.now() + 50
    while (performance.now() < until) {
      await new Promise((resolve) => setImmediate(resolve))
      turns++
    }
    expect(count / waited).toBeLessThan(turns / 50 / 10)

    // immediates of others, and their promised forms, are Node's own
    let args: unknown[] = []
    await new Promise<void>((resolve) => setImmediate((...a: unknown[]) => ((args = a), resolve()), 'a', 2))
    expect(args).toEqual(['a', 2])
    expect(await promisify(setImmediate)('v')).toBe('v')
    expect(await immediatePromise('w')).toBe('w')
    out.destroy()
    device.destroy()
  }, 120_000)
})
