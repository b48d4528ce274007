// Example of the consciousness-core entry (`resonant-crystal/consciousness`): Kuramoto oscillators
// well above critical coupling synchronize; phi of their sine series is reported with its level.
import { KuramotoModel, lorentzianFrequencies, phi } from 'resonant-crystal/consciousness'

const n = 6
const model = new KuramotoModel(
  lorentzianFrequencies(n, 0.1),
  Array.from({ length: n }, (_, i) => (2 * Math.PI * i) / n),
  2,
)
const before = model.order().r
const samples = []
for (let t = 0; t < 400; t++) {
  model.step(0.05)
  samples.push(Array.from(model.theta, Math.sin))
}
const report = phi(samples)
console.log(JSON.stringify({ before, after: model.order().r, phi: report.phi, level: report.level }))
