// Example of the contracts entry (`resonant-crystal/contracts`): a bus message checked against its
// subject's schema, and a material file's JSON refused with the field that is wrong.
import { checkMessage, parseMaterial } from 'resonant-crystal/contracts'

const phase = { schema_version: 1, ts: new Date().toISOString(), sender: 'example', agent: 'a1', phase: 0.5, frequency: 1, order: 0.9 }
let refused
try {
  parseMaterial({ name: 'broken' }, 'broken.json')
} catch (e) {
  refused = e.code
}
console.log(
  JSON.stringify({
    valid: checkMessage('QUEEN.phase.a1', phase) ?? null,
    invalid: checkMessage('QUEEN.phase.a1', { ...phase, order: 2 }),
    refused,
  }),
)
