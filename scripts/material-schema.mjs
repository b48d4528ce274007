#!/usr/bin/env node
// Writes materials/materials.schema.json from the TypeBox contract (engine/contracts/material.ts),
// via the compiled build. A test fails when the two differ: run `npm run schema` after a change.
import { writeFileSync } from 'node:fs'
const { MaterialSchema } = await import('../dist/engine/contracts/material.js')
const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', ...JSON.parse(JSON.stringify(MaterialSchema)) }
writeFileSync(new URL('../materials/materials.schema.json', import.meta.url), JSON.stringify(schema, null, 2) + '\n')
