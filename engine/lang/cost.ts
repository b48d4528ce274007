// What a checked .crystal program will cost before it runs (docs/language.md, "Cost"): each command
// counted in field steps (one leapfrog step of one N x N field), so a server can refuse a program over
// its budget instead of finding out. The counts are upper bounds drawn from the constants the commands run by.
import { DREAM_PARAMS } from '../dream/dream.js'
import { OBSERVE_STEPS, RECORD_DT, RECORD_FRAMES, RECOVERY_STEPS } from '../discovery/evaluate.js'
import { MAX_LOOKBACK } from '../recall/recall.js'
import { STABILIZE } from './interpret.js'
import type { Command } from './parse.js'

/** A recorded window and the stability window after it (evaluate's and crystallize's recordWindows). */
const WINDOW = RECORD_FRAMES * RECORD_DT + OBSERVE_STEPS
/** The perturbation experiment on one structure: recovery, then a stability window. */
const PERTURB = RECOVERY_STEPS + OBSERVE_STEPS
/** A dream: observe, then settle (the longer of the two modes). */
const DREAM = Math.max(...Object.values(DREAM_PARAMS).map((p) => p.observe_steps + p.settle_steps))

/**
 * Recall's work beyond its sweep, in field steps a pair of memories: the memories written at one
 * moment are told apart pair by pair (each pair a product over the field), so a recall over M of them
 * costs some M^2 such products. Measured (N = 128, CPU backend, 2 cores): 400 memories at one moment,
 * 3.1 s a recall, where 20,000 steps took 0.89 s: 0.44 step a pair. Counted as if every memory
 * were written at one moment, as a program's WRITEs between steps may be.
 */
const RECALL_STEPS_PER_PAIR = 0.5

/**
 * One genome's evaluation (MERGE, SPLIT), at most: a clean field that is perturbed and its rerun under
 * noise beside it (the rerun rests through the perturbation since 2026-12-08, a bound all the same).
 */
const evaluation = (resonateSteps: number) => 2 * (resonateSteps + DREAM + WINDOW + PERTURB)

export interface CommandCost {
  line: number
  column: number
  command: Command['name']
  steps: number
}

/**
 * The field steps each command will run, at most. `genomeSteps` gives a registered primitive's
 * resonate_steps (MERGE and SPLIT re-run their parents' genomes). Conditions cost nothing; an
 * injection (WRITE, PULSE) counts as one step; PROBE and RECALL sweep back over the field's age
 * (at most MAX_LOOKBACK steps); STABILIZE counts all its windows and the perturbation of up to
 * STABILIZE.max_structures structures.
 */
export function programCost(commands: readonly Command[], genomeSteps: (id: string) => number): CommandCost[] {
  let age = 0
  let memories = 0
  return commands.map((c) => {
    let steps = 0
    switch (c.name) {
      case 'WRITE':
        memories += 1
        steps = 1
        break
      case 'PULSE':
        steps = 1
        break
      case 'RESONATE':
        steps = Number(c.args[0])
        age += steps
        break
      case 'DREAM':
        steps = DREAM
        age += steps
        break
      case 'STABILIZE':
        steps = STABILIZE.max_windows * STABILIZE.window_steps + 2 * WINDOW + STABILIZE.max_structures * PERTURB
        age += steps
        break
      case 'PROBE':
        steps = 1 + Math.min(age, MAX_LOOKBACK)
        break
      case 'RECALL':
        steps = 1 + Math.min(age, MAX_LOOKBACK) + Math.ceil(RECALL_STEPS_PER_PAIR * memories ** 2)
        break
      case 'MERGE':
        steps = evaluation(Math.max(genomeSteps(String(c.args[0])), genomeSteps(String(c.args[1]))))
        break
      case 'SPLIT':
        // two children in one batch of two fields
        steps = 2 * evaluation(genomeSteps(String(c.args[0])))
        break
    }
    return { line: c.line, column: c.column, command: c.name, steps }
  })
}

/** The steps a budget of `cellUpdates` buys at side N: the budget is in cell updates, so it scales as 1 / N^2. */
export const stepBudget = (cellUpdates: number, size: number): number => Math.floor(cellUpdates / (size * size))
