// The .crystal language: a golden parse of every command, and every kind of error with its place.
import { describe, expect, test } from 'vitest'
import { check, formatError, parse } from './parse.js'

const ok = (source: string) => {
  const { commands, errors } = parse(source, 'x.crystal')
  expect(errors).toEqual([])
  return commands.map((c) => [c.name, ...c.args])
}

describe('golden parse', () => {
  test('every command, with defaults filled in', () => {
    const program = [
      'MATERIAL europium_crystal',
      'seed 7',
      'Temperature 4',
      'NOISE 0.002',
      'WRITE "the cold glyph" 0.9',
      'WRITE "defaults to importance one"',
      'PULSE 0.3 0.6 0.05 1 2 0.5',
      'PULSE 0.5 0.5',
      'PULSE 0.5 0.5 0.1',
      'RESONATE 400',
      'PROBE "glyph"',
      'DREAM Deep',
      'STABILIZE',
      'RECALL "glyph" 3',
      'RECALL "glyph"',
      'MERGE CRY-000001 cry-2',
      'SPLIT CRY-000145',
    ].join('\n')
    expect(ok(program)).toEqual([
      ['MATERIAL', 'europium_crystal'],
      ['SEED', 7],
      ['TEMPERATURE', 4],
      ['NOISE', 0.002],
      ['WRITE', 'the cold glyph', 0.9],
      ['WRITE', 'defaults to importance one', 1],
      ['PULSE', 0.3, 0.6, 0.05, 1, 2, 0.5],
      ['PULSE', 0.5, 0.5, 0.05, 1, 0, 0],
      ['PULSE', 0.5, 0.5, 0.1, 1, 0, 0],
      ['RESONATE', 400],
      ['PROBE', 'glyph'],
      ['DREAM', 'deep'],
      ['STABILIZE'],
      ['RECALL', 'glyph', 3],
      ['RECALL', 'glyph', 5],
      ['MERGE', 'CRY-000001', 'CRY-000002'],
      ['SPLIT', 'CRY-000145'],
    ])
  })

  test('comments, blank lines, escapes and places', () => {
    const { commands } = parse('# a comment\n\n  WRITE "say \\"hi\\"\\n\\t\\u{e9}" 2  # trailing comment\nRESONATE 1e2', 'x.crystal')
    expect(commands[0].args).toEqual(['say "hi"\n\té', 2])
    expect(commands[0]).toMatchObject({ line: 3, column: 3 })
    expect(commands[0].at.map((a) => a.column)).toEqual([9, 32])
    expect(commands[1].args).toEqual([100])
  })

  test('a leading UTF-8 byte order mark is skipped; columns count from after it', () => {
    const { commands, errors } = parse('\ufeffRESONATE 5\nPROBE "a\ufeffb"\n', 'bom.crystal')
    expect(errors).toEqual([])
    expect(commands.map((c) => [c.name, ...c.args])).toEqual([
      ['RESONATE', 5],
      ['PROBE', 'a\ufeffb'],
    ])
    expect(commands[0]).toMatchObject({ line: 1, column: 1, source: 'RESONATE 5' })
    // only the leading one: a mark further in is text, and an unknown command reports it
    expect(parse('RESONATE 5\n\ufeffSTABILIZE', 'x.crystal').errors.map(formatError)).toEqual([
      'x.crystal:2:1: unknown command \ufeffSTABILIZE (did you mean STABILIZE?)',
    ])
  })
})

describe('every kind of error gives the line and column', () => {
  const errorsOf = (source: string) => parse(source, 'bad.crystal').errors.map(formatError)

  test('unknown command, with a suggestion', () => {
    expect(errorsOf('RESONATE 10\n  RESONTE 10')).toEqual(['bad.crystal:2:3: unknown command RESONTE (did you mean RESONATE?)'])
    expect(errorsOf('FROBNICATE')[0]).toMatch(/^bad.crystal:1:1: unknown command FROBNICATE \(commands: MATERIAL, SEED/)
  })

  test('wrong argument count', () => {
    expect(errorsOf('PULSE 0.5')).toEqual([
      'bad.crystal:1:1: PULSE takes 2 to 6 arguments, got 1 (PULSE x y [radius] [amplitude] [frequency] [phase])',
    ])
    expect(errorsOf('RESONATE 10 20')).toEqual(['bad.crystal:1:13: RESONATE takes 1 argument, got 2 (RESONATE steps)'])
    expect(errorsOf('STABILIZE now')[0]).toContain('1:11: STABILIZE takes 0 arguments, got 1')
  })

  test('bad number, out of range, not a whole number, wrong kind', () => {
    expect(errorsOf('PULSE 0.5 abc')).toEqual([
      'bad.crystal:1:11: PULSE y: expected a number, got "abc" (PULSE x y [radius] [amplitude] [frequency] [phase])',
    ])
    expect(errorsOf('PULSE 1.5 0.5')[0]).toBe('bad.crystal:1:7: PULSE x must be between 0 and 1, got 1.5')
    expect(errorsOf('RESONATE 10.5')[0]).toBe('bad.crystal:1:10: RESONATE steps: expected a whole number, got 10.5')
    expect(errorsOf('WRITE hello')[0]).toBe('bad.crystal:1:7: WRITE text: expected a double-quoted string, got hello (WRITE "hello")')
    expect(errorsOf('DREAM sideways')[0]).toBe('bad.crystal:1:7: DREAM mode: expected light or deep, got "sideways"')
    // in range, but a memory of importance 0 could never be recalled: refused before the program runs
    expect(errorsOf('WRITE "x" 0')[0]).toBe(
      'bad.crystal:1:11: WRITE importance must not be 0: a memory written with none could never be recalled',
    )
    expect(errorsOf('WRITE "x" -0.5')).toEqual([])
  })

  test('unterminated string and bad escapes', () => {
    expect(errorsOf('RESONATE 5\nWRITE "no end')).toEqual([
      'bad.crystal:2:7: unterminated string (close it with a double quote on the same line)',
    ])
    expect(errorsOf('WRITE "a\\qb"')[0]).toContain('1:9: unknown escape \\q in a string')
  })

  test('all errors of a program are reported, not just the first', () => {
    expect(errorsOf('FOO\nPULSE x y\nWRITE "a')).toHaveLength(4)
  })

  test('unknown material and unknown primitive id (they need the world), and SEED too late', () => {
    const { commands } = parse('MATERIAL unobtainum\nWRITE "x"\nSEED 3\nMERGE CRY-000001 CRY-000009', 'w.crystal')
    const errors = check(
      commands,
      { materials: ['europium_crystal', 'ideal_resonator'], primitiveIds: new Set(['CRY-000001']) },
      'w.crystal',
    ).map(formatError)
    expect(errors).toEqual([
      'w.crystal:1:10: unknown material "unobtainum" (materials: europium_crystal, ideal_resonator)',
      'w.crystal:3:1: SEED must come before the first command that uses the field (move it above the first WRITE/PULSE/RESONATE/PROBE/DREAM/STABILIZE/RECALL)',
      'w.crystal:4:18: unknown primitive CRY-000009 (crystal primitives lists the registry)',
    ])
  })

  test('with --material the MATERIALs of the program are replaced, so their names are not looked up', () => {
    const { commands } = parse('MATERIAL unobtainum\nWRITE "x"\nSPLIT CRY-000009', 'w.crystal')
    const world = { materials: ['europium_crystal'], primitiveIds: new Set<string>(), material: 'europium_crystal' }
    // the other checks still apply
    expect(check(commands, world, 'w.crystal').map(formatError)).toEqual([
      'w.crystal:3:7: unknown primitive CRY-000009 (crystal primitives lists the registry)',
    ])
  })
})
