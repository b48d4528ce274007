// The SQLite connection the market store opens: Node's own node:sqlite where this Node has it
// (22.13 and later), better-sqlite3 on older ones (Node 20), behind the few calls the store makes.
// Why two: better-sqlite3 12, the last to support Node 20, aborts the process on Node 24 when V8
// collects a statement (its ObjectWrap removes a cleanup hook after the environment is gone), and 13
// needs Node 22. The platform's module has neither problem, and better-sqlite3 is loaded only where
// it is used, so its Node 20 build is never opened by a newer Node.
import { requireOptional } from '../../engine/util/optional.node.js'

export interface RunResult {
  changes: number | bigint
  lastInsertRowid: number | bigint
}

export interface Statement<P extends unknown[] = unknown[], R = unknown> {
  run(...params: P): RunResult
  get(...params: P): R | undefined
  all(...params: P): R[]
  iterate(...params: P): IterableIterator<R>
}

export interface Sqlite {
  /** Which module holds the connection: 'node:sqlite' or 'better-sqlite3'. */
  readonly driver: string
  exec(sql: string): void
  prepare<P extends unknown[] = unknown[], R = unknown>(sql: string): Statement<P, R>
  /** `fn` wrapped in a transaction: BEGIN/COMMIT at the outermost call, a savepoint when nested; a throw rolls back its own level. */
  transaction<A extends unknown[], T>(fn: (...args: A) => T): (...args: A) => T
  close(): void
}

export interface OpenOptions {
  readonly?: boolean
  /** How long a write waits for another connection's lock, in ms. */
  busyTimeoutMs?: number
}

interface NodeSqliteModule {
  DatabaseSync: new (
    path: string,
    options?: { readOnly?: boolean },
  ) => {
    exec(sql: string): void
    prepare(sql: string): Statement & { setAllowUnknownNamedParameters?(on: boolean): void }
    close(): void
  }
  StatementSync: { prototype: object }
}

function nodeSqlite(): NodeSqliteModule | undefined {
  const m = withoutSqliteWarning(() => process.getBuiltinModule?.('node:sqlite')) as NodeSqliteModule | undefined
  // iterate() arrived with 22.13, the release that also dropped the flag
  return m && 'iterate' in m.StatementSync.prototype ? m : undefined
}

/**
 * `load()` with Node 22's "SQLite is an experimental feature" warning dropped: `crystal serve` printed
 * it on stderr at every start, though the store chose node:sqlite knowingly and its tests hold it to
 * better-sqlite3's behaviour (Node 24 no longer warns). Every other warning passes as before.
 */
export function withoutSqliteWarning<T>(load: () => T): T {
  const emit = process.emitWarning
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message
    if (text.startsWith('SQLite is an experimental feature')) return
    return (emit as (...args: unknown[]) => void).call(process, warning, ...rest)
  }) as typeof process.emitWarning
  try {
    return load()
  } finally {
    process.emitWarning = emit
  }
}

export function openSqlite(file: string, o: OpenOptions = {}): Sqlite {
  const native = nodeSqlite()
  const db = native ? fromNodeSqlite(native, file, o) : fromBetterSqlite(file, o)
  db.exec(`PRAGMA busy_timeout = ${Math.round(o.busyTimeoutMs ?? 5000)}`)
  return db
}

function fromNodeSqlite(m: NodeSqliteModule, file: string, o: OpenOptions): Sqlite {
  const db = new m.DatabaseSync(file, { readOnly: !!o.readonly })
  let depth = 0
  return {
    driver: 'node:sqlite',
    exec: (sql) => db.exec(sql),
    prepare: <P extends unknown[], R>(sql: string) => {
      const statement = db.prepare(sql)
      // as better-sqlite3 does: an object of parameters may hold keys a statement does not use
      statement.setAllowUnknownNamedParameters?.(true)
      return statement as Statement<P, R>
    },
    close: () => db.close(),
    transaction:
      <A extends unknown[], T>(fn: (...args: A) => T) =>
      (...args: A): T => {
        const name = `sp${depth}`
        const outermost = depth === 0
        db.exec(outermost ? 'BEGIN' : `SAVEPOINT ${name}`)
        depth++
        try {
          const value = fn(...args)
          // a COMMIT that fails (a busy disk, a full one) leaves the transaction open: it is rolled back below
          db.exec(outermost ? 'COMMIT' : `RELEASE ${name}`)
          return value
        } catch (e) {
          db.exec(outermost ? 'ROLLBACK' : `ROLLBACK TO ${name}; RELEASE ${name}`)
          throw e
        } finally {
          depth--
        }
      },
  }
}

function fromBetterSqlite(file: string, o: OpenOptions): Sqlite {
  const Database = requireOptional<typeof import('better-sqlite3')>(
    'better-sqlite3',
    `the market store on Node ${process.versions.node} (before 22.13, which has node:sqlite)`,
    'run Node 22.13 or later',
  )
  const db = new Database(file, { readonly: !!o.readonly })
  return {
    driver: 'better-sqlite3',
    exec: (sql) => void db.exec(sql),
    prepare: <P extends unknown[], R>(sql: string) => db.prepare(sql) as unknown as Statement<P, R>,
    close: () => void db.close(),
    transaction: (fn) => db.transaction(fn),
  }
}

/**
 * What a SQLite error says of the file itself, in either module's shape: 'notadb' when it is not a
 * SQLite database at all (SQLITE_NOTADB: "file is not a database"), 'corrupt' when it is one that is
 * damaged (SQLITE_CORRUPT: "database disk image is malformed"), null for anything else. better-sqlite3
 * names the code (`code: 'SQLITE_NOTADB'`); node:sqlite has `code: 'ERR_SQLITE_ERROR'` and the number
 * (`errcode`, possibly extended: its low byte is the primary code).
 */
export function sqliteFileFault(e: unknown): 'notadb' | 'corrupt' | null {
  if (typeof e !== 'object' || e === null) return null
  const { code, errcode, message } = e as { code?: unknown; errcode?: unknown; message?: unknown }
  const primary = typeof errcode === 'number' ? errcode & 0xff : undefined
  const text = typeof message === 'string' ? message : ''
  if (code === 'SQLITE_NOTADB' || primary === 26 || text.startsWith('file is not a database')) return 'notadb'
  if (
    (typeof code === 'string' && code.startsWith('SQLITE_CORRUPT')) ||
    primary === 11 ||
    text.startsWith('database disk image is malformed')
  )
    return 'corrupt'
  return null
}
