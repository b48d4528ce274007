// The engines a worker (an evolve job, a program) opens: on the server's backend, with what the
// environment sets of engines, one thread each; under `crystal --debug serve`, their GPU transfers
// counted and sent back with the outcome.
import type { EngineSettings } from '../../engine/config.js'
import type { Engine, EngineOptions } from '../../engine/field/engine.js'
import { TransferTally } from '../../engine/field/transfer_tally.js'
import { createNodeEngine } from '../../engine/node.js'

/** What the service hands every worker of its engines. */
export interface WorkerEngineSettings {
  /** The server engine's backend: the worker's engines run on the same kind. */
  backend: Engine['backend']
  /** What the environment sets of its engines (SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH above all). */
  engineSettings: EngineSettings
  /** Count the engines' GPU transfers (`crystal --debug serve`). */
  tallyTransfers: boolean
}

export function workerEngines(w: WorkerEngineSettings): { open(o: EngineOptions): Promise<Engine>; transfers(): string[] } {
  const tally = w.tallyTransfers ? new TransferTally() : undefined
  return {
    open: async (o) => {
      const engine = await createNodeEngine({ ...w.engineSettings, ...o, backend: w.backend, threads: 1 })
      return tally ? tally.track(engine) : engine
    },
    transfers: () => tally?.lines() ?? [],
  }
}
