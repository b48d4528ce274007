// Entry of the single executable (scripts/sea/build.mjs bundles it into one CommonJS file): the CLI
// of bin/crystal.js, with nothing to find on disk but the native parts in lib/ beside it.
import { main } from '../../cli/main.ts'
import { quietWhenReaderLeaves } from '../../cli/pipes.ts'

quietWhenReaderLeaves()
// a CommonJS bundle has no top-level await; main() reports its own errors, so a rejection is a bug: say it
main(process.argv).then(
  (code) => {
    process.exitCode = code
  },
  (e) => {
    process.stderr.write(`crystal: unexpected failure: ${e?.stack ?? e}\n`)
    process.exitCode = 1
  },
)
