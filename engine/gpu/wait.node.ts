// How Node waits for the device. Dawn's binding (`webgpu`) learns that the device has finished work by
// polling: while any of its promises is pending it calls the global setImmediate from native code on
// every turn of the event loop (its AsyncRunner). The main thread then spins at 100 % of a core and
// makes garbage all the while: on SwiftShader (2 cores), one evaluation of 12 genomes at N = 96 took
// 139 to 150 s, 28 to 30 s of it collecting garbage, and the spin took a core SwiftShader needed.
// Here Dawn's polls spin only for SPIN_MS of polling after a device call or its promise settling,
// where a fast device answers at once, then come once a timer's turn (about a millisecond) until the
// next call or answer: the same evaluation took 75 to 99 s, 0.3 to 0.4 s of it collecting garbage
// (docs/gpu.md, "How Node waits for the device").
import { promisify } from 'node:util'

/** How long Dawn's polls spin after the device last answered, before they wait a timer's turn each. */
export const SPIN_MS = 2

/** What the loop runs on: a clock in ms, the next turn of the event loop, and a timer's turn. */
export interface Turns {
  now(): number
  /** Returns what the caller of setImmediate gets back (Node's Immediate). */
  immediate(run: () => void): unknown
  timer(run: () => void): void
}

/**
 * Dawn's polls: spun while the device answers, on a timer once it has been quiet for `spinMs` since
 * the last device call or answer. A poll that comes late (the host was busy since it was asked, or
 * the machine did not run this thread) runs at once: the device may have answered meanwhile.
 */
export class WaitLoop {
  /** Polls run at once (spun) and after a timer (slept): what the tests and the profile read. */
  readonly polls = { spun: 0, slept: 0 }
  private answered = Number.NEGATIVE_INFINITY
  private polling = false
  private calling = 0

  constructor(
    private readonly turns: Turns,
    private readonly spinMs = SPIN_MS,
  ) {}

  /** Whether a poll asked for now is Dawn's: asked inside a device call (a wait starting) or inside a poll. */
  owns(): boolean {
    return this.polling || this.calling > 0
  }

  /** Dawn asks for its next poll (inside a device call, which was heard, or inside a poll). */
  poll(run: () => void): unknown {
    const asked = this.turns.now()
    // decided on the next turn, after the microtasks of the poll before it (where promises settle)
    return this.turns.immediate(() => {
      const now = this.turns.now()
      // late (the host was busy since it was asked): the device may have answered meanwhile, so look now
      if (now - asked > this.spinMs || now - this.answered < this.spinMs) this.run(run, 'spun')
      else this.turns.timer(() => this.run(run, 'slept'))
    })
  }

  /** Makes a device call that may wait on the device (its polls are this loop's); the call and its answer are heard. */
  call<T>(make: () => Promise<T>): Promise<T> {
    this.heard()
    this.calling++
    try {
      return make().finally(() => this.heard())
    } finally {
      this.calling--
    }
  }

  private heard(): void {
    this.answered = this.turns.now()
  }

  private run(poll: () => void, how: 'spun' | 'slept'): void {
    this.polls[how]++
    this.polling = true
    try {
      poll()
    } finally {
      this.polling = false
    }
  }
}

/** Dawn's poll: a nameless native function of no arguments, scheduled with none (Node-API's napi_create_function). */
function isNativePoll(run: unknown, args: readonly unknown[]): run is () => void {
  return (
    typeof run === 'function' &&
    args.length === 0 &&
    run.name === '' &&
    run.length === 0 &&
    Function.prototype.toString.call(run).endsWith('{ [native code] }')
  )
}

/** Dawn's calls that return a promise: their polls start there. */
const DEVICE_CALLS: [keyof typeof globalThis, string][] = [
  ['GPU', 'requestAdapter'],
  ['GPUAdapter', 'requestDevice'],
  ['GPUBuffer', 'mapAsync'],
  ['GPUQueue', 'onSubmittedWorkDone'],
  ['GPUDevice', 'popErrorScope'],
  ['GPUDevice', 'createComputePipelineAsync'],
  ['GPUDevice', 'createRenderPipelineAsync'],
  ['GPUShaderModule', 'getCompilationInfo'],
]

// on globalThis, as the patch is: a second copy of this module (sources and dist in one process) finds it
const INSTALLED = Symbol.for('resonant-crystal.dawnPolls')
const scope = globalThis as { [INSTALLED]?: WaitLoop }

/**
 * Puts Dawn's polls on a WaitLoop, once a process (the binding's globals must be on globalThis). Every
 * other setImmediate goes straight to Node's. Returns the loop.
 */
export function throttleDawnPolls(): WaitLoop {
  const installed = scope[INSTALLED]
  if (installed) return installed
  const [original, timeout] = [globalThis.setImmediate, globalThis.setTimeout]
  const loop = new WaitLoop({ now: () => performance.now(), immediate: (run) => original(run), timer: (run) => timeout(run, 0) })
  const setImmediate = (run: unknown, ...args: unknown[]) =>
    loop.owns() && isNativePoll(run, args) ? loop.poll(run) : original(run as (...a: unknown[]) => void, ...args)
  // util.promisify(setImmediate) reads the original's promisified form
  Object.defineProperty(setImmediate, promisify.custom, { value: (original as unknown as Record<symbol, unknown>)[promisify.custom] })
  globalThis.setImmediate = setImmediate as typeof globalThis.setImmediate
  for (const [type, method] of DEVICE_CALLS) {
    const proto = (globalThis[type] as { prototype?: Record<string, unknown> } | undefined)?.prototype
    const call = proto?.[method]
    if (typeof call !== 'function') continue
    proto![method] = function (this: unknown, ...args: unknown[]) {
      return loop.call(() => call.apply(this, args) as Promise<unknown>)
    }
  }
  scope[INSTALLED] = loop
  return loop
}

/** The loop Dawn's polls are on, if installed. */
export function dawnLoop(): WaitLoop | undefined {
  return scope[INSTALLED]
}
