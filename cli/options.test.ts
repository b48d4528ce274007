// Options that cannot work are refused before any work, naming the option and what it takes (exit 2),
// rather than ignored or failing later as an "unexpected failure".
import { spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'

const BIN = new URL('../bin/crystal.js', import.meta.url).pathname
const dataDir = mkdtempSync(join(tmpdir(), 'crystal-options-'))
const crystal = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, '--backend', 'cpu', '--data-dir', dataDir, ...args], { encoding: 'utf8', timeout: 60_000 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('refused before any work', () => {
  test("serve --log-level takes one of its levels (an unknown one failed after the engine opened, with the logger's words)", () => {
    const r = crystal('serve', '--port', '0', '--log-level', 'loud')
    expect(r.status).toBe(2)
    expect(r.stderr).toContain(
      "option '--log-level <level>' argument 'loud' is invalid. Allowed choices are fatal, error, warn, info, debug.",
    )
  })

  test('primitives: a material neither known nor held is an unknown material, not "no primitives match"', () => {
    const r = crystal('primitives', '--material', 'unobtainium')
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('unknown material "unobtainium"')
    // control: a known material with nothing held is an empty answer
    const known = crystal('primitives', '--material', 'silicon')
    expect(known.status).toBe(0)
    expect(known.stdout).toBe('no primitives match\n')
  })

  test('primitives: an id with a filter or --similar, or --export with another option, is refused, not half ignored', () => {
    const similar = crystal('primitives', 'CRY-000001', '--similar', 'CRY-000002')
    expect(similar.status).toBe(2)
    expect(similar.stderr).toContain('--similar cannot be used with an id (CRY-000001): the id shows that one primitive')
    expect(crystal('primitives', 'CRY-000001', '--export').stderr).toContain('--export cannot be used with an id')
    const exported = crystal('primitives', '--export', '--class', 'echo_ring')
    expect(exported.status).toBe(2)
    expect(exported.stderr).toContain("option '--export' cannot be used with option '--class <token>'")
  })

  test('bench --sizes names the range it takes for any side outside it, 0 included', () => {
    for (const sizes of ['0', '8', 'abc', '128,5000']) {
      const r = crystal('bench', 'field', '--sizes', sizes)
      expect(r.status, sizes).toBe(2)
      expect(r.stderr, sizes).toMatch(/--sizes takes sides from 16 to 4096, got (0|8|abc|5000)\n/)
    }
  })

  test('write --importance 0 is refused: a memory of no importance could never be recalled', () => {
    const r = crystal('write', 'nothing at all', '--importance', '0', '--size', '16')
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('importance must not be 0')
  })

  test("--help marks evolve's and explore's required options", () => {
    const evolve = crystal('evolve', '--help').stdout
    expect(evolve).toMatch(/--material <name>\s+the material to search in \(required\)/)
    expect(evolve).toMatch(/--generations <n>\s+generations to run \(required\)/)
    expect(crystal('explore', '--help').stdout).toMatch(/--material <names>[\s\S]*\(required\)/)
  })
})
