// `crystal write` and `crystal ask` on a medium that persists between commands: ranked answers on
// 2,000 and 100,000 wavefronts; every failure exits non-zero with a message.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'

const BIN = new URL('../bin/crystal.js', import.meta.url).pathname
const crystal = (dataDir: string, ...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, SVC_CRYSTAL_DATA_DIR: dataDir }, timeout: 300_000 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** `count` distinct four-word texts. */
function texts(count: number, seed: number): string[] {
  const syllables = ['ka', 'lo', 'mi', 'ren', 'tu', 'sha', 'vel', 'or', 'quin', 'da', 'pe', 'zor', 'ly', 'an', 'thi', 'bo']
  let s = seed
  const rand = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32)
  const word = () => syllables[Math.floor(rand() * 16)] + syllables[Math.floor(rand() * 16)]
  return Array.from({ length: count }, (_, i) => `${word()} ${word()} ${word()} ${i}`)
}

describe('crystal write and ask', () => {
  test('the medium persists between commands and answers in rank order', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-medium-'))
    expect(crystal(dir, 'write', 'the cold glyph remembers').stdout.trim()).toBe('wrote "the cold glyph remembers"; the medium holds 1 memory')
    expect(crystal(dir, 'write', 'amber river at dusk', '--importance', '0.5').status).toBe(0)
    const r = crystal(dir, 'ask', 'glyph', '-k', '2')
    expect(r.status).toBe(0)
    expect(r.stdout.split('\n')[0]).toMatch(/^1\. "the cold glyph remembers" {2}score [\d.]+ \(relevance [\d.-]+, presence [\d.-]+\)$/)
    const hits = JSON.parse(crystal(dir, 'ask', 'amber river at dusk', '--json').stdout)
    expect(hits[0]).toMatchObject({ rank: 1, text: 'amber river at dusk', importance: 0.5 })
  })

  for (const [count, size] of [[2_000, 32], [100_000, 16]] as const) {
    test(`${count.toLocaleString('en')} wavefronts: the text asked for comes first`, () => {
      const dir = mkdtempSync(join(tmpdir(), 'crystal-medium-'))
      const all = texts(count, count)
      const file = join(dir, 'lines.txt')
      writeFileSync(file, all.join('\n'))
      const w = crystal(dir, 'write', '--file', file, '--size', String(size))
      expect(w.status).toBe(0)
      expect(w.stdout.trim()).toBe(`wrote ${count} texts; the medium holds ${count} memories`)
      for (const q of [7, Math.floor(count / 2), count - 1]) {
        const r = crystal(dir, 'ask', all[q], '-k', '3', '--json')
        expect(r.status).toBe(0)
        const hits = JSON.parse(r.stdout)
        expect(hits.map((h: { rank: number }) => h.rank)).toEqual([1, 2, 3])
        expect(hits[0].text).toBe(all[q])
        expect(hits[0].score).toBeGreaterThanOrEqual(hits[1].score)
      }
    }, 300_000)
  }

  test('failures exit non-zero with a message: no medium, a broken medium, nothing to write, a bad k', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-medium-'))
    const none = crystal(dir, 'ask', 'anything')
    expect(none.status).toBe(1)
    expect(none.stderr.trim()).toBe(`crystal: there is no medium in ${dir} yet; write something first (crystal write "text")`)
    expect(none.stdout).toBe('')
    const nothing = crystal(dir, 'write')
    expect(nothing.status).toBe(2)
    expect(nothing.stderr).toContain('nothing to write')
    crystal(dir, 'write', 'something')
    expect(crystal(dir, 'ask', 'x', '-k', '0').status).toBe(2)
    const path = join(dir, 'medium.bin')
    const bytes = readFileSync(path)
    bytes[bytes.length - 10] ^= 0xff // one flipped byte in the field
    writeFileSync(path, bytes)
    const broken = crystal(dir, 'ask', 'something')
    expect(broken.status).toBe(1)
    expect(broken.stderr.trim()).toBe(`crystal: ${path}: its content hash does not match its contents; the file was left as it is (move it away to start a new medium)`)
    expect(readFileSync(path)).toEqual(bytes)
    writeFileSync(path, 'not a medium')
    expect(crystal(dir, 'ask', 'something').stderr).toContain('its header runs past the end of the file')
  })
})
