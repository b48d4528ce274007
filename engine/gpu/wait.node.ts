// How Node waits for the device. Dawn's binding (`webgpu`) learns that the device has finished work by
// polling: while any of its promises is pending it calls the global setImmediate from native code on
// every turn of the event loop (its AsyncRunner). The main thread then spins at 100 % of a core and
// makes garbage all the while: on SwiftShader (2 cores), one evaluation of 12 genomes at N = 96 took
// 139 s, 28 s of it collecting garbage, and the spin took a core SwiftShader's own threads needed.
// Here Dawn's polls spin only for SPIN_MS after a device call or its promise settling, where a
// fast device answers at once, then come once a timer's turn (about a millisecond) until the next
// call or answer: the same evaluation took 75 to 78 s, 0.3 s of it collecting garbage (docs/gpu.md).
import { promisify } from 'node:util'

/** How long Dawn's polls spin after the device last answered, before they wait a timer's turn each. */
export const SPIN_MS = 2

/** What the loop runs on: a clock in ms, the next turn of the event loop, and a timer's turn. */
export interface Turns {
  now(): number
  immediate(run: () => void): void
  timer(run: () => void): void
}

/** Dawn's polls: spun while the device answers, on a timer once it has been quiet for `spinMs`. */
export class WaitLoop {
  /** Polls run at once (spun) and after a timer (slept): what the tests and the profile read. */
  readonly polls = { spun: 0, slept: 0 }
  private answered = Number.NEGATIVE_INFINITY
  private polling = false

  constructor(
    private readonly turns: Turns,
    private readonly spinMs = SPIN_MS,
  ) {}

  /** Dawn asks for its next poll. One asked from outside a poll starts a wait, which counts as an answer. */
  poll(run: () => void): void {
    if (!this.polling) this.answered = this.turns.now()
    // decided on the next turn, after the microtasks of the poll before it (where promises settle)
    this.turns.immediate(() => {
      if (this.turns.now() - this.answered < this.spinMs) this.run(run, 'spun')
      else this.turns.timer(() => this.run(run, 'slept'))
    })
  }

  /** A call that waits on the device was made, or its promise settled. */
  heard(): void {
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
function isDawnPoll(run: unknown, args: readonly unknown[]): run is () => void {
  return (
    typeof run === 'function' &&
    args.length === 0 &&
    run.name === '' &&
    run.length === 0 &&
    Function.prototype.toString.call(run).endsWith('{ [native code] }')
  )
}

/** The device calls whose promises wait on the device's work: each call, and each settling, counts as an answer. */
const ANSWERS: [keyof typeof globalThis, string][] = [
  ['GPUBuffer', 'mapAsync'],
  ['GPUQueue', 'onSubmittedWorkDone'],
  ['GPUDevice', 'popErrorScope'],
  ['GPUDevice', 'createComputePipelineAsync'],
]

let installed: WaitLoop | undefined

/**
 * Puts Dawn's polls on a WaitLoop, once a process (the binding's globals must be on globalThis). Every
 * other setImmediate goes straight through. Returns the loop.
 */
export function throttleDawnPolls(): WaitLoop {
  if (installed) return installed
  const original = globalThis.setImmediate
  const loop = new WaitLoop({ now: () => performance.now(), immediate: (run) => original(run), timer: (run) => setTimeout(run, 0) })
  const setImmediate = (run: unknown, ...args: unknown[]) =>
    isDawnPoll(run, args) ? loop.poll(run) : original(run as (...a: unknown[]) => void, ...args)
  // timers/promises and util.promisify(setImmediate) read the original's promisified form
  Object.defineProperty(setImmediate, promisify.custom, { value: (original as unknown as Record<symbol, unknown>)[promisify.custom] })
  globalThis.setImmediate = setImmediate as typeof globalThis.setImmediate
  for (const [type, method] of ANSWERS) {
    const proto = (globalThis[type] as { prototype?: Record<string, unknown> } | undefined)?.prototype
    const call = proto?.[method]
    if (typeof call !== 'function') continue
    proto![method] = function (this: unknown, ...args: unknown[]) {
      loop.heard()
      return (call.apply(this, args) as Promise<unknown>).finally(() => loop.heard())
    }
  }
  installed = loop
  return loop
}

/** The installed loop's counts, if Dawn's polls are on one. */
export function dawnPolls(): Readonly<WaitLoop['polls']> | undefined {
  return installed?.polls
}
