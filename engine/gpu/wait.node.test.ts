// Dawn's polls (wait.node.ts): spun while the device answers or the host was busy, on a timer once the
// device is quiet; every other setImmediate untouched. The loop's policy on a clock of the test's own,
// then on this machine's real WebGPU: a long device wait polls a tenth as often as a plain spin of the
// same event loop (the control, measured in the same test), and device calls are heard.
import { promisify } from 'node:util'
import { describe, expect, test, vi } from 'vitest'
import { dawnLoop, WaitLoop } from './wait.node.js'
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

/** Dawn's poll as the binding's: the first asked inside a device call (its promise pending here), each asking for the next. */
function dawnLike(loop: WaitLoop) {
  const state = { polls: 0 }
  const poll = () => {
    state.polls++
    loop.poll(poll)
  }
  const start = () =>
    void loop.call(() => {
      loop.poll(poll)
      return new Promise(() => {})
    })
  return { state, start }
}

describe('WaitLoop', () => {
  test('polls spin for spinMs after a wait starts or the device is called, and wait a timer each otherwise', () => {
    const m = manualTurns()
    const loop = new WaitLoop(m.turns, 2)
    const dawn = dawnLike(loop)
    dawn.start()
    m.turn()
    m.advance(1.5)
    m.turn()
    expect(loop.polls).toEqual({ spun: 2, slept: 0 })
    // quiet past spinMs: the next poll goes to a timer, and so do those after it
    m.advance(1)
    expect(m.turn()).toEqual([false])
    expect(dawn.state.polls).toBe(2)
    expect(m.turn()).toEqual([true])
    expect([...m.turn(), ...m.turn()]).toEqual([false, true])
    expect(loop.polls).toEqual({ spun: 2, slept: 2 })
    // a device call (a promise that never settles here): spinning again
    void loop.call(() => new Promise(() => {}))
    expect(m.turn()).toEqual([false])
    expect(loop.polls).toEqual({ spun: 3, slept: 2 })
  })

  test('a poll that comes late (the host busy since it was asked) runs at once; the next waits its timer', () => {
    const m = manualTurns()
    const loop = new WaitLoop(m.turns, 2)
    const dawn = dawnLike(loop)
    dawn.start()
    m.advance(5)
    expect(m.turn()).toEqual([false])
    expect(loop.polls).toEqual({ spun: 1, slept: 0 })
    expect([...m.turn(), ...m.turn()]).toEqual([false, true])
    expect(loop.polls).toEqual({ spun: 1, slept: 1 })
  })

  test('only polls asked inside a device call or a poll are the loop’s', async () => {
    const m = manualTurns()
    const loop = new WaitLoop(m.turns, 2)
    expect(loop.owns()).toBe(false)
    let inside = false
    await loop.call(async () => {
      inside = loop.owns()
    })
    expect(inside).toBe(true)
    expect(loop.owns()).toBe(false)
  })
})

describe("Dawn's polls in Node", () => {
  test('a long device wait polls a tenth as often as a plain spin of the event loop would; other immediates are Node’s', async () => {
    const gpu = await nodeGpu()
    const loop = dawnLoop()!
    expect(loop).toBeDefined()
    const device = await (await gpu.requestAdapter())!.requestDevice()
    const out = device.createBuffer({ size: 64 * 64 * 4, usage: GPUBufferUsage.STORAGE })
    try {
      // work that keeps the device busy a while: each invocation loops, and the dispatches double until the wait is long
      const module = device.createShaderModule({
        code: `@group(0) @binding(0) var<storage, read_write> out: array<f32>;
          @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
            var x = f32(id.x);
            for (var i = 0u; i < 20000u; i++) { x = fract(x * 1.0001 + 0.37); }
            out[id.x] = x;
          }`,
      })
      const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } })
      const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: out } }] })
      const calls = vi.spyOn(loop, 'call')
      let wait = { waited: 0, polls: 0, slept: 0 }
      for (let dispatches = 1; wait.waited < 200 && dispatches <= 1 << 16; dispatches *= 2) {
        const encoder = device.createCommandEncoder()
        const pass = encoder.beginComputePass()
        pass.setPipeline(pipeline)
        pass.setBindGroup(0, group)
        for (let d = 0; d < dispatches; d++) pass.dispatchWorkgroups(64)
        pass.end()
        const before = { ...loop.polls }
        const t0 = performance.now()
        device.queue.submit([encoder.finish()])
        await device.queue.onSubmittedWorkDone()
        const slept = loop.polls.slept - before.slept
        wait = { waited: performance.now() - t0, polls: loop.polls.spun - before.spun + slept, slept }
      }
      // the device's call went through the loop, and its polls were the loop's
      expect(calls).toHaveBeenCalled()
      calls.mockRestore()
      expect(wait.waited).toBeGreaterThan(200)
      expect(wait.slept).toBeGreaterThan(0)

      // the control, the same event loop spun with plain immediates (as Dawn's polls were) for a while
      let turns = 0
      const until = performance.now() + 50
      while (performance.now() < until) {
        await new Promise((resolve) => setImmediate(resolve))
        turns++
      }
      expect(wait.polls / wait.waited).toBeLessThan(turns / 50 / 10)
    } finally {
      out.destroy()
      device.destroy()
    }

    // immediates of others are Node's: their arguments, an Immediate back, a clear that clears, the promised form
    let args: unknown[] = []
    await new Promise<void>((resolve) => setImmediate((...a: unknown[]) => ((args = a), resolve()), 'a', 2))
    expect(args).toEqual(['a', 2])
    // a nameless native function, as Dawn's poll looks, asked outside a device call
    const spun = loop.polls.spun
    const immediate = setImmediate(Function.prototype as () => void)
    expect(typeof immediate.unref).toBe('function')
    clearImmediate(immediate)
    await new Promise((resolve) => setImmediate(resolve))
    expect(loop.polls.spun).toBe(spun)
    expect(await promisify(setImmediate)('v')).toBe('v')
  }, 120_000)
})
