// The .crystal experiment language (docs/language.md): one command per line, `#` starts a comment,
// double-quoted strings with escapes, keywords case-insensitive. The parser reports every error with
// file, line, column and a hint, and `check` adds the errors that need the world (an unknown material,
// an unknown primitive id), so that nothing runs unless the whole program is sound.
import { PULSE_DEFAULTS } from '../encode/pulse.js'

export type ArgType = 'string' | 'number' | 'int' | 'word' | 'mode' | 'id'

export interface ArgSpec {
  name: string
  type: ArgType
  min?: number
  max?: number
  /** Present when the argument may be omitted (trailing arguments only). */
  default?: number
  /** A value in range that is still refused, and why (WRITE's importance of 0). */
  not?: { value: number; why: string }
}

const num = (name: string, min: number, max: number, dflt?: number): ArgSpec => ({
  name,
  type: 'number',
  min,
  max,
  ...(dflt === undefined ? {} : { default: dflt }),
})

export const COMMANDS = {
  MATERIAL: [{ name: 'name', type: 'word' }],
  SEED: [{ name: 'seed', type: 'int', min: 0, max: 2 ** 32 - 1 }],
  TEMPERATURE: [num('kelvin', 0, 10000)],
  NOISE: [num('amplitude', 0, 1)],
  WRITE: [
    { name: 'text', type: 'string' },
    { ...num('importance', -10, 10, 1), not: { value: 0, why: 'a memory written with none could never be recalled' } },
  ],
  PULSE: [
    num('x', 0, 1),
    num('y', 0, 1),
    num('radius', 0.0001, 1, PULSE_DEFAULTS.radius),
    num('amplitude', -100, 100, PULSE_DEFAULTS.amplitude),
    num('frequency', -1000, 1000, PULSE_DEFAULTS.frequency),
    num('phase', -1e6, 1e6, PULSE_DEFAULTS.phase),
  ],
  RESONATE: [{ name: 'steps', type: 'int', min: 0, max: 10_000_000 }],
  PROBE: [{ name: 'text', type: 'string' }],
  DREAM: [{ name: 'mode', type: 'mode' }],
  STABILIZE: [],
  RECALL: [
    { name: 'text', type: 'string' },
    { name: 'k', type: 'int', min: 1, max: 1000, default: 5 },
  ],
  MERGE: [
    { name: 'a', type: 'id' },
    { name: 'b', type: 'id' },
  ],
  SPLIT: [{ name: 'id', type: 'id' }],
} as const satisfies Record<string, readonly ArgSpec[]>

export type CommandName = keyof typeof COMMANDS
export const COMMAND_NAMES = Object.keys(COMMANDS) as CommandName[]

export interface Arg {
  value: string | number
  line: number
  column: number
}

export interface Command {
  name: CommandName
  /** One per argument of the signature, defaults filled in. */
  args: (string | number)[]
  /** Where each argument written in the source stands (absent for defaults). */
  at: Arg[]
  line: number
  column: number
  source: string
}

export interface ProgramError {
  file: string
  line: number
  column: number
  message: string
  hint?: string
}

export function formatError(e: ProgramError): string {
  return `${e.file}:${e.line}:${e.column}: ${e.message}${e.hint ? ` (${e.hint})` : ''}`
}

interface Token {
  kind: 'string' | 'bare'
  text: string
  column: number
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\', '0': '\0' }
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i

/** The tokens of a line, or undefined when the line cannot be read (its error is already reported). */
function tokenize(text: string, line: number, file: string, errors: ProgramError[]): Token[] | undefined {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (c === ' ' || c === '\t' || c === '\r') {
      i++
    } else if (c === '#') {
      break
    } else if (c === '"') {
      const start = i
      let value = ''
      i++
      let closed = false
      while (i < text.length) {
        const d = text[i]
        if (d === '"') {
          closed = true
          i++
          break
        }
        if (d === '\\') {
          const e = text[i + 1]
          if (e === 'u' && text[i + 2] === '{') {
            const end = text.indexOf('}', i + 3)
            const code = end > 0 ? Number.parseInt(text.slice(i + 3, end), 16) : NaN
            if (!Number.isFinite(code) || code > 0x10ffff) {
              errors.push({
                file,
                line,
                column: i + 1,
                message: 'bad \\u{...} escape in a string',
                hint: 'write \\u{hex digits}, e.g. \\u{e9}',
              })
              i += 2
              continue
            }
            value += String.fromCodePoint(code)
            i = end + 1
            continue
          }
          if (e === undefined || !(e in ESCAPES)) {
            errors.push({
              file,
              line,
              column: i + 1,
              message: `unknown escape \\${e ?? ''} in a string`,
              hint: 'escapes: \\" \\\\ \\n \\t \\r \\0 \\u{hex}',
            })
            i += 2
            continue
          }
          value += ESCAPES[e]
          i += 2
          continue
        }
        value += d
        i++
      }
      if (!closed) {
        errors.push({
          file,
          line,
          column: start + 1,
          message: 'unterminated string',
          hint: 'close it with a double quote on the same line',
        })
        return undefined
      }
      tokens.push({ kind: 'string', text: value, column: start + 1 })
    } else {
      const start = i
      while (i < text.length && !' \t\r#"'.includes(text[i])) i++
      tokens.push({ kind: 'bare', text: text.slice(start, i), column: start + 1 })
    }
  }
  return tokens
}

function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) d[0][j] = j
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++)
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
  return d[a.length][b.length]
}

/** "did you mean X?" for the nearest of `options` within two edits. */
export function suggest(word: string, options: readonly string[]): string | undefined {
  const best = options.map((o) => [o, distance(word.toUpperCase(), o.toUpperCase())] as const).sort((a, b) => a[1] - b[1])[0]
  return best && best[1] <= 2 ? `did you mean ${best[0]}?` : undefined
}

function usage(name: CommandName): string {
  return `${name} ${COMMANDS[name].map((a: ArgSpec) => (a.default !== undefined ? `[${a.name}]` : a.type === 'string' ? `"${a.name}"` : a.name)).join(' ')}`.trim()
}

function parseArg(
  spec: ArgSpec,
  tok: Token,
  name: CommandName,
  file: string,
  line: number,
): { value?: string | number; error?: ProgramError } {
  const at = { file, line, column: tok.column }
  const what = `${name} ${spec.name}`
  if (spec.type === 'string') {
    if (tok.kind !== 'string')
      return { error: { ...at, message: `${what}: expected a double-quoted string, got ${tok.text}`, hint: `${name} "${tok.text}"` } }
    if (tok.text.trim() === '') return { error: { ...at, message: `${what}: the text is empty` } }
    return { value: tok.text }
  }
  if (tok.kind === 'string')
    return {
      error: {
        ...at,
        message: `${what}: expected ${spec.type === 'number' || spec.type === 'int' ? 'a number' : 'a word'}, got a string`,
        hint: usage(name),
      },
    }
  if (spec.type === 'number' || spec.type === 'int') {
    if (!NUMBER.test(tok.text)) return { error: { ...at, message: `${what}: expected a number, got "${tok.text}"`, hint: usage(name) } }
    const v = Number(tok.text)
    if (spec.type === 'int' && !Number.isInteger(v))
      return { error: { ...at, message: `${what}: expected a whole number, got ${tok.text}` } }
    if (v < spec.min! || v > spec.max!)
      return { error: { ...at, message: `${what} must be between ${spec.min} and ${spec.max}, got ${tok.text}` } }
    if (spec.not && v === spec.not.value) return { error: { ...at, message: `${what} must not be ${spec.not.value}: ${spec.not.why}` } }
    return { value: v }
  }
  if (spec.type === 'mode') {
    const m = tok.text.toLowerCase()
    if (m !== 'light' && m !== 'deep') return { error: { ...at, message: `${what}: expected light or deep, got "${tok.text}"` } }
    return { value: m }
  }
  if (spec.type === 'id') {
    if (!/^CRY-\d+$/i.test(tok.text))
      return { error: { ...at, message: `${what}: expected a primitive id like CRY-000001, got "${tok.text}"` } }
    return { value: `CRY-${tok.text.slice(4).padStart(6, '0')}` }
  }
  return { value: tok.text }
}

/** Parses a whole program; collects every error instead of stopping at the first. */
export function parse(source: string, file = '<program>'): { commands: Command[]; errors: ProgramError[] } {
  const commands: Command[] = []
  const errors: ProgramError[] = []
  // a leading byte order mark (editors on Windows write one) is not part of the first command
  if (source.startsWith('\ufeff')) source = source.slice(1)
  source.split('\n').forEach((text, index) => {
    const line = index + 1
    const tokens = tokenize(text, line, file, errors)
    if (!tokens?.length) return
    const [head, ...rest] = tokens
    const name = head.text.toUpperCase() as CommandName
    if (head.kind !== 'bare' || !(name in COMMANDS)) {
      errors.push({
        file,
        line,
        column: head.column,
        message: `unknown command ${head.kind === 'string' ? `"${head.text}"` : head.text}`,
        hint: suggest(head.text, COMMAND_NAMES) ?? `commands: ${COMMAND_NAMES.join(', ')}`,
      })
      return
    }
    const specs: readonly ArgSpec[] = COMMANDS[name]
    const required = specs.filter((s) => s.default === undefined).length
    if (rest.length < required || rest.length > specs.length) {
      const count = required === specs.length ? `${required}` : `${required} to ${specs.length}`
      errors.push({
        file,
        line,
        column: rest.length > specs.length ? rest[specs.length].column : head.column,
        message: `${name} takes ${count} argument${specs.length === 1 && required === 1 ? '' : 's'}, got ${rest.length}`,
        hint: usage(name),
      })
      return
    }
    const args: (string | number)[] = []
    const at: Arg[] = []
    let ok = true
    specs.forEach((spec, k) => {
      const tok = rest[k]
      if (!tok) {
        args.push(spec.default!)
        return
      }
      const { value, error } = parseArg(spec, tok, name, file, line)
      if (error) {
        errors.push(error)
        ok = false
        return
      }
      args.push(value!)
      at.push({ value: value!, line, column: tok.column })
    })
    if (ok) commands.push({ name, args, at, line, column: head.column, source: text.trim() })
  })
  return { commands, errors }
}

export interface World {
  materials: readonly string[]
  primitiveIds: ReadonlySet<string>
  /** --material: it replaces every MATERIAL of the program, so the program's names are not looked up. */
  material?: string
}

/** Commands that need the field to exist; SEED must come before the first of them. */
export const FIELD_COMMANDS: readonly CommandName[] = ['WRITE', 'PULSE', 'RESONATE', 'PROBE', 'DREAM', 'STABILIZE', 'RECALL']

/**
 * The errors that need to know the world: unknown materials (unless `world.material` replaces them
 * all) and primitive ids, SEED too late.
 */
export function check(commands: readonly Command[], world: World, file = '<program>'): ProgramError[] {
  const errors: ProgramError[] = []
  let fieldStarted = false
  for (const c of commands) {
    if (c.name === 'MATERIAL' && world.material === undefined && !world.materials.includes(String(c.args[0]))) {
      errors.push({
        file,
        line: c.line,
        column: c.at[0].column,
        message: `unknown material "${c.args[0]}"`,
        hint: suggest(String(c.args[0]), world.materials) ?? `materials: ${world.materials.join(', ')}`,
      })
    }
    if (c.name === 'MERGE' || c.name === 'SPLIT') {
      c.args.forEach((id, k) => {
        if (!world.primitiveIds.has(String(id)))
          errors.push({
            file,
            line: c.line,
            column: c.at[k].column,
            message: `unknown primitive ${id}`,
            hint: 'crystal primitives lists the registry',
          })
      })
    }
    if (c.name === 'SEED' && fieldStarted)
      errors.push({
        file,
        line: c.line,
        column: c.column,
        message: 'SEED must come before the first command that uses the field',
        hint: `move it above the first ${FIELD_COMMANDS.join('/')}`,
      })
    if (FIELD_COMMANDS.includes(c.name)) fieldStarted = true
  }
  return errors
}
