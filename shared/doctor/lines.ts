import { AtsError, ATS_ERROR_CODES } from '../ats';
import type { Connection } from '../config';
import { distance } from '../validation/unknown-fields';

/** One line of the doctor's report: a check that passed, failed (with what to do), or could not be made here. */
export interface CheckLine {
  status: 'pass' | 'fail' | 'info';
  what: string;
  /** What the operator does about a failure, or how to check by hand what the doctor cannot. */
  fix?: string | undefined;
  /**
   * The provider's side (the connection's settings, the interview service, SES, the order sources): a customer's
   * connect page counts these lines, but does not show what their fix says of secrets and commands.
   */
  provider?: true | undefined;
}

/** The lines of the provider's side, marked so (CheckLine.provider). */
export const providers = (lines: readonly CheckLine[]): CheckLine[] => lines.map((l) => ({ ...l, provider: true }));

export const pass = (what: string): CheckLine => ({ status: 'pass', what });
export const fail = (what: string, fix: string): CheckLine => ({ status: 'fail', what, fix });
export const info = (what: string, fix?: string): CheckLine => ({ status: 'info', what, fix });

const MARK = { pass: '✓', fail: '✗', info: '–' } as const;

/** `  ✓ what` / `  ✗ what: fix`; a fix of several lines is indented under its check. */
export function formatLine(line: CheckLine): string {
  const head = `  ${MARK[line.status]} ${line.what}`;
  if (!line.fix) return head;
  const [first, ...rest] = line.fix.split('\n');
  return [`${head}\n      → ${first}`, ...rest.map((r) => `        ${r}`)].join('\n');
}

export { distance };

/** The `count` names closest to `wanted`, closest first. */
export function closest(wanted: string, names: readonly string[], count = 3): string[] {
  return [...new Set(names)]
    .map((name) => ({ name, d: distance(wanted, name) }))
    .sort((a, b) => a.d - b.d || a.name.localeCompare(b.name))
    .slice(0, count)
    .map((c) => c.name);
}

/** What to do about an ATS refusal, by its kind. */
export function atsFix(connection: Connection, error: unknown): string {
  const code = error instanceof AtsError ? error.code : undefined;
  if (code === ATS_ERROR_CODES.unauthorized)
    return `the ATS refused the credentials: put valid ones in secret ${connection.secretRef}`;
  if (code === ATS_ERROR_CODES.forbidden)
    return 'the credentials lack a permission the connector needs: grant it (docs/operations.md, "Connect a customer")';
  if (code === ATS_ERROR_CODES.notFound) return `check atsBaseUrl (${connection.atsBaseUrl})`;
  if (code === ATS_ERROR_CODES.rateLimited) return 'the ATS is rate-limiting this account: run the doctor again later';
  return `check atsBaseUrl (${connection.atsBaseUrl}) and that the ATS answers`;
}

export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));
