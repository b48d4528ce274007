// `crystal markets check`: the market engine's money and ledger, checked from its database in the data
// dir (read-only, safe beside a running server): minted = balances + escrow + pools; every balance,
// pool, holding, q and trade row against its ledger replay; the hash chain, and its head against the
// head file beside the database.
import Table from 'cli-table3'
import type { Command } from 'commander'
import { existsSync } from 'node:fs'
import { CrystalError } from '../../engine/errors.js'
import type { MarketStore } from '../../server/markets/store.js'
import type { CliContext } from '../context.js'

export function registerMarkets(cli: Command, ctx: () => CliContext): void {
  const markets = cli.command('markets').description('the prediction-market engine served by `crystal serve`')
  markets
    .command('check')
    .description('check that money and holdings are conserved and the ledger chain is intact and anchored (exit 1 if not)')
    .option('--json', 'print JSON instead of a table')
    .addHelpText('after', '\nExamples:\n  crystal markets check\n  crystal --data-dir /srv/crystal markets check --json')
    .action(async (o: { json?: boolean }) => {
      const { MarketStore } = await import('../../server/markets/store.js')
      const store = new MarketStore({ dataDir: ctx().dataDir, faucetGrant: 0, readonly: true })
      let audit: ReturnType<MarketStore['audit']>
      try {
        audit = store.audit()
      } finally {
        store.close()
      }
      const { conservation: money, chain, anchor } = audit
      // an older version's database is checked as it stands, what it lacks read at its defaults; the server upgrades it
      const older =
        store.olderSchema.length === 0
          ? null
          : `the database is from an older version, without ${store.olderSchema.join(', ')}: checked with those empty or at their defaults, and nothing written; \`crystal serve\` on this data dir adds them when it next starts`
      const unanchored = !anchor && store.preAnchor && !existsSync(store.headFile)
      const head = anchor ?? (unanchored ? 'none yet (older database): the server writes it when it next starts' : null)
      if (o.json)
        process.stdout.write(
          JSON.stringify({ conservation: money, ledger: chain, anchor: head ?? 'agrees', database: older ?? 'current' }, null, 2) + '\n',
        )
      else {
        const table = new Table({ style: { head: [], border: [] }, chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' } })
        const units = (minor: number) => `${minor} (${(minor / 100).toFixed(2)})`
        table.push(
          { minted: units(money.minted) },
          { balances: units(money.balances) },
          { 'escrow (open markets)': units(money.escrow) },
          { 'pools (open markets)': units(money.pools) },
          { 'minted = balances + escrow + pools': money.ok ? 'yes' : 'NO' },
          { 'paid out to winners (in balances)': units(money.paid_out) },
          { 'refunded to funders (in balances)': units(money.refunded) },
          { 'holdings replayed from the ledger': money.positions },
          { 'ledger entries': chain.entries },
          {
            'ledger chain': chain.ok ? `intact, head ${chain.head.slice(0, 16)}...` : `BROKEN at entry ${chain.first_bad}: ${chain.reason}`,
          },
          { 'head file': head ?? 'agrees with the chain' },
          { database: older ? `older: without ${store.olderSchema.join(', ')}` : 'current' },
        )
        process.stdout.write(`${table.toString()}\n`)
        if (older) process.stdout.write(`note: ${older}\n`)
        for (const m of money.mismatches) process.stdout.write(`mismatch: ${m}\n`)
      }
      if (!chain.ok) throw new CrystalError('ledger_corrupt', `the ledger chain breaks at entry ${chain.first_bad}: ${chain.reason}`)
      if (anchor) throw new CrystalError('ledger_corrupt', anchor)
      if (!money.ok) throw new CrystalError('ledger_corrupt', `the books do not replay from the ledger: ${money.mismatches.join('; ')}`)
    })
}
