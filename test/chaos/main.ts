import { parseArgs } from 'node:util';
import { DIRECT_ATS_KINDS } from '../../shared/config';
import { CHAOS_DEFAULTS, formatChaosReport, runChaos } from './chaos';

/**
 * `npm run chaos [-- --candidates 500 --orders 40 --kombo 40 --seed 20261121 --crash-rate 0.25 --per-candidate
 * --one-process]`: prints the invariant table; exit 1 on a violation.
 */
const { values } = parseArgs({
  options: {
    candidates: { type: 'string', default: String(CHAOS_DEFAULTS.candidates) },
    seed: { type: 'string', default: String(CHAOS_DEFAULTS.seed) },
    'crash-rate': { type: 'string', default: String(CHAOS_DEFAULTS.crashRate) },
    orders: { type: 'string', default: String(CHAOS_DEFAULTS.orders) },
    kombo: { type: 'string', default: String(CHAOS_DEFAULTS.komboCandidates) },
    'per-candidate': { type: 'boolean', default: false },
    // Every function in this process, one module state for all: for a debugger, never for the verdict.
    'one-process': { type: 'boolean', default: false },
  },
});
const report = await runChaos({
  ...CHAOS_DEFAULTS,
  candidates: Number(values.candidates),
  seed: Number(values.seed),
  crashRate: Number(values['crash-rate']),
  orders: Number(values.orders),
  komboCandidates: Number(values.kombo),
  perCandidateInvites: values['per-candidate'] ? DIRECT_ATS_KINDS : [],
  runtime: values['one-process'] ? 'one-process' : 'environments',
  progress: (line) => process.stderr.write(`${line}\n`),
});
process.stderr.write(`${formatChaosReport(report)}\n`);
const failed = report.invariants.some((i) => i.violations > 0) || report.logLeaks.length > 0;
process.exit(failed ? 1 : 0);
