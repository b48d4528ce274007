// scripts/prepare.mjs (npm's `prepare`, run before every `npx crystal` in the package folder): it
// builds only where the build is not current. Here on a made-up tree, times set by hand: a source, a
// setting or the installed dependencies changed since the stamp make it build; what the build and the
// tests write below the sources (generated files, results, screenshots) does not; nor an output missing.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
// @ts-expect-error: a plain ES module of the build's, without types
import { buildIsCurrent, STAMP } from './prepare.mjs'

const root = mkdtempSync(join(tmpdir(), 'crystal-prepare-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** Writes `path` under the tree, dated `minutes` from an hour ago, and its folders (a new file dates its folder). */
function at(path: string, minutes: number): void {
  const file = join(root, path)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, path)
  const when = new Date(Date.now() - 3_600_000 + minutes * 60_000)
  for (let p = file; p.startsWith(root) && p !== root; p = dirname(p)) utimesSync(p, when, when)
}

test('current after a build, not after a change to a source, a setting or the installed packages; what builds and tests write below the sources is no change', () => {
  const outputs = ['dist/bundle/main.js', 'dist/cli/main.js', 'dist/server/app.js', 'dist/app/index.html']
  for (const f of ['engine/field/engine.ts', 'shaders/field_step.wgsl', 'package.json', 'node_modules/.package-lock.json', ...outputs])
    at(f, 0)
  expect(buildIsCurrent(root)).toBe(false)
  at(STAMP, 1)
  expect(buildIsCurrent(root)).toBe(true)
  // written by the build (generated modules) or by the tests and benchmarks: still current
  for (const f of ['engine/gpu/shaders.gen.ts', 'bench/results/field.json', 'e2e/screenshots/observatory.png']) at(f, 2)
  expect(buildIsCurrent(root)).toBe(true)
  for (const changed of ['engine/field/engine.ts', 'shaders/field_step.wgsl', 'package.json', 'node_modules/.package-lock.json']) {
    at(changed, 3)
    expect(buildIsCurrent(root), changed).toBe(false)
    at(STAMP, 4)
    expect(buildIsCurrent(root)).toBe(true)
    // back to before the stamp for the next one
    at(changed, 0)
    at(STAMP, 1)
  }
  // an output missing (a build that stopped halfway)
  rmSync(join(root, 'dist/app/index.html'))
  expect(buildIsCurrent(root)).toBe(false)
})
