// Entry of the single executable (scripts/sea/build.mjs bundles it into one CommonJS file): the CLI
// of bin/crystal.js, with nothing to find on disk but the native parts in lib/ beside it.
import { main } from '../../cli/main.ts'
import { quietWhenReaderLeaves } from '../../cli/pipes.ts'

quietWhenReaderLeaves()
main(process.argv).then((code) => {
  process.exitCode = code
})
