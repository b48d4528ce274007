// STABILIZE's registration (docs/language.md): what crystallized in a live field is found by the same
// detection and perturbation experiment as discovery's and offered to the registry through the same novelty check.
import type { Genome } from '../contracts/registry.js'
import { detect, type Later, persistenceOf, type Structure } from '../detect/detect.js'
import type { WindowSpectra } from '../detect/spectra.js'
import type { Engine } from '../field/engine.js'
import { quality, type Candidate, type RegisterOutcome, type Registry } from '../registry/registry.js'
import { DEFAULT_MIN_PERSISTENCE } from './discovery.js'
import { MAX_PULSES } from './genome.js'
import { likenessOf, perturb, recordWindows } from './evaluate.js'

export interface Crystallized extends RegisterOutcome {
  /** Every structure detected, registered or not, strongest first. */
  structures: Structure[]
}

/** What made the field, as far as a genome can say: its last pulses (or, with none, each structure's own footprint), its steps and its last dream. */
export interface FieldHistory {
  pulses: Genome['pulses']
  dream: Genome['dream']
}

/**
 * The perturbation experiment (docs/detection.md) for each structure, on a quiet copy of the field as
 * it is now (the user's field is not disturbed); those that no longer meet a class rule drop out.
 */
async function answered(
  engine: Engine,
  structures: Structure[],
  window: { spectra: WindowSpectra; later: Later },
): Promise<{ found: Structure; answered: Structure }[]> {
  const out: { found: Structure; answered: Structure }[] = []
  for (const s of structures) {
    const copy = await engine.fork(0)
    try {
      const [r] = await perturb(copy, [s], [window])
      if (r) out.push({ found: s, answered: r })
    } finally {
      copy.destroy()
    }
  }
  return out
}

/**
 * Records two windows of field 0, detects its structures in the first, and registers those at least
 * DEFAULT_MIN_PERSISTENCE persistent. Noise tolerance is measured against the field's own noise: how
 * alike the structure found nearest in the second window is (signature cosine, halved if the class changed).
 */
export async function crystallize(
  engine: Engine,
  registry: Pick<Registry, 'register'>,
  history: FieldHistory,
  limit = Infinity,
): Promise<Crystallized> {
  const [first] = (await recordWindows(engine, limit)).windows
  const [second] = (await recordWindows(engine)).windows
  // each structure found is perturbed in a twin of the field: `limit` (the strongest first) bounds that work
  const found = await answered(engine, await detect(first.spectra, first.later, limit), { spectra: first.spectra, later: second.later })
  const again = await detect(second.spectra, second.later)
  const candidates: Candidate[] = []
  for (const { found: before, answered: s } of found) {
    const persistence = persistenceOf(first.spectra.stabilityAt(s.cells), s.cells, first.later, s.features.sustain)
    if (persistence < DEFAULT_MIN_PERSISTENCE) continue
    const f = s.features
    const near = again.length
      ? again.reduce((a, b) =>
          Math.hypot(a.features.centroid_x - f.centroid_x, a.features.centroid_y - f.centroid_y) <=
          Math.hypot(b.features.centroid_x - f.centroid_x, b.features.centroid_y - f.centroid_y)
            ? a
            : b,
        )
      : undefined
    // the second window was not perturbed: compare it with the structure as first found
    const noise_tolerance = near ? likenessOf(before, near) : 0
    const footprint = {
      x: f.centroid_x,
      y: f.centroid_y,
      radius: Math.min(1, Math.max(0.01, Math.sqrt(f.area / Math.PI))),
      amplitude: 1,
      frequency: 0,
      phase: 0,
    }
    const genome: Genome = {
      pulses: history.pulses.length ? history.pulses.slice(-MAX_PULSES) : [footprint],
      resonate_steps: Math.max(1, engine.step_count),
      dream: history.dream,
    }
    candidates.push({
      class: s.class,
      persistence,
      noise_tolerance,
      material: engine.material.name,
      lineage: [],
      signature: s.signature,
      hash: s.hash,
      genome,
      metrics: { fitness: quality({ persistence, noise_tolerance }), confidence: s.confidence, ...f },
    })
  }
  return { ...(await registry.register(candidates)), structures: found.map((f) => f.answered) }
}
