import type { AtsKind, DirectAtsKind } from '../../../../shared/config';
import { SANDBOX_PORTS, type SandboxOptions } from './ats-sandbox-kit';
import { startAshbySandbox } from './ashby/server';
import { startGreenhouseSandbox } from './greenhouse/server';
import { startLeverSandbox } from './lever/server';
import { startWorkableSandbox } from './workable/server';

export type { AtsSandbox, AtsSandboxView } from './ats-sandbox-kit';

type PerAts = Partial<Record<AtsKind, number>> | undefined;
type Started = { close(): Promise<void> };

/** All four ATS sandboxes: fixed ports for `npm start`, free ones for tests; limits and windows as the options say. */
export async function startAtsSandboxes(fixed: boolean, options: { rateLimits?: PerAts; rateWindowsMs?: PerAts } = {}) {
  const started: Started[] = [];
  const close = async () => void (await Promise.all(started.map((s) => s.close())));
  const start = async <S extends Started>(kind: DirectAtsKind, startOne: (o: SandboxOptions) => Promise<S>) => {
    const [rateLimit, rateWindowMs] = [options.rateLimits?.[kind], options.rateWindowsMs?.[kind]];
    const sandbox = await startOne({ port: fixed ? SANDBOX_PORTS[kind] : 0, rateLimit, rateWindowMs });
    started.push(sandbox);
    return sandbox;
  };
  try {
    const greenhouse = await start('greenhouse', startGreenhouseSandbox);
    const ashby = await start('ashby', startAshbySandbox);
    const lever = await start('lever', startLeverSandbox);
    const workable = await start('workable', startWorkableSandbox);
    return { views: { greenhouse, ashby, lever, workable }, greenhouse, ashby, lever, close };
  } catch (error) {
    await close();
    throw error;
  }
}
