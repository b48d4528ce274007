#!/usr/bin/env node
// Writes the JSON Schema files from the TypeBox contracts, via the compiled build:
// materials/materials.schema.json and engine/contracts/json/<subject>.schema.json. Tests fail when a
// file and its contract differ: run `npm run schema` after changing one.
import { mkdirSync, writeFileSync } from 'node:fs'
const { MaterialSchema } = await import('../dist/engine/contracts/material.js')
const { CONTRACTS } = await import('../dist/engine/contracts/subjects.js')
const draft = 'https://json-schema.org/draft/2020-12/schema'
const write = (url, schema) =>
  writeFileSync(new URL(url, import.meta.url), JSON.stringify({ $schema: draft, ...JSON.parse(JSON.stringify(schema)) }, null, 2) + '\n')
write('../materials/materials.schema.json', MaterialSchema)
mkdirSync(new URL('../engine/contracts/json/', import.meta.url), { recursive: true })
for (const c of CONTRACTS) write(`../engine/contracts/json/${c.pattern.replace(/[<>]/g, '')}.schema.json`, c.schema)
