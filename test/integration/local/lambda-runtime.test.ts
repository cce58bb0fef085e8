import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { environmentExecArgv, type LocalFunction, startLocalFunction } from '../../../infra/local/lambda-runtime';
import { faultInjection, SimulatedCrash } from '../../../shared/pipeline/fault-injection';

// The local runtime isolates what Lambda isolates: each execution environment has its own module state, is reused
// while warm, is discarded after a timeout, and two functions never share one.
const ENTRY = join(import.meta.dirname, '..', '..', 'helpers', 'lambda', 'module-state.handler.ts');
type Answer = {
  invocations: number;
  threadId: number;
  loadedAt: number;
  remainingMs: number;
  fn: string;
  env?: string;
  execArgv: string[];
};

describe('Local Lambda runtime: one module state per execution environment', () => {
  const started: LocalFunction[] = [];
  const start = (name: 'InviteWorker' | 'WritebackWorker' | 'InterviewWebhook', maxEnvironments: number) => {
    const fn = startLocalFunction({ name, maxEnvironments, entry: ENTRY });
    started.push(fn);
    return fn;
  };
  const invoke = (fn: LocalFunction, event: object = {}, budgetMs = 5_000) =>
    fn.invoke(event, budgetMs) as Promise<Answer>;
  afterEach(async () => {
    await Promise.all(started.splice(0).map((fn) => fn.stop()));
  });

  it('reuses a warm environment: its module state carries from one invocation to the next', async () => {
    const fn = start('InviteWorker', 3);
    const answers = [await invoke(fn), await invoke(fn), await invoke(fn)];
    expect(answers.map((a) => a.invocations)).toEqual([1, 2, 3]);
    expect(new Set(answers.map((a) => a.threadId)).size).toBe(1);
    expect(fn.stats).toMatchObject({ invocations: 3, coldStarts: 1, environments: 1 });
    expect(fn.stats.initMs).toHaveLength(1);
  });

  it('starts an environment per concurrent invocation up to the concurrency, then waits for a free one', async () => {
    const fn = start('InviteWorker', 3);
    const answers = await Promise.all([1, 2, 3, 4].map(() => invoke(fn, { sleepMs: 300 })));
    expect(new Set(answers.map((a) => a.threadId)).size).toBe(3);
    // Three environments each ran its first invocation; the fourth waited and ran in a warm one.
    expect(answers.map((a) => a.invocations).sort()).toEqual([1, 1, 1, 2]);
    expect(fn.stats).toMatchObject({ coldStarts: 3, environments: 3 });
  });

  it('gives the handler the time left of its timeout, and discards the environment it ran past', async () => {
    const fn = start('WritebackWorker', 1);
    const first = await invoke(fn, {}, 2_000);
    expect(first.remainingMs).toBeLessThanOrEqual(2_000);
    expect(first.remainingMs).toBeGreaterThan(1_000);
    expect(first.fn).toBe('WritebackWorker');
    await expect(invoke(fn, { sleepMs: 2_000 }, 200)).rejects.toThrow('WritebackWorker timed out after 200 ms');
    expect(fn.stats.timeouts).toBe(1);
    // A new environment, cold: the module state of the one that timed out is gone.
    const after = await invoke(fn);
    expect(after.invocations).toBe(1);
    expect(after.threadId).not.toBe(first.threadId);
    expect(fn.stats.coldStarts).toBe(2);
  });

  it("gives each function's environments its own variables, and no other function's", async () => {
    const parent = process.env.POWERTOOLS_SERVICE_NAME;
    const [invite, writeback] = [start('InviteWorker', 1), start('WritebackWorker', 1)];
    const event = { env: 'POWERTOOLS_SERVICE_NAME' };
    const answers = [await invoke(invite, event), await invoke(writeback, event)];
    expect(answers.map((a) => a.env)).toEqual(['InviteWorker', 'WritebackWorker']);
    // The process that runs them keeps its own.
    expect(process.env.POWERTOOLS_SERVICE_NAME).toBe(parent);
  });

  it("puts a local run's settings over the function's own variables", async () => {
    const fn = startLocalFunction({
      name: 'InterviewWebhook',
      maxEnvironments: 1,
      entry: ENTRY,
      environment: { POWERTOOLS_SERVICE_NAME: 'local-run' },
    });
    started.push(fn);
    expect((await invoke(fn, { env: 'POWERTOOLS_SERVICE_NAME' })).env).toBe('local-run');
    // Without it, the function's own.
    const own = start('InterviewWebhook', 1);
    expect((await invoke(own, { env: 'POWERTOOLS_SERVICE_NAME' })).env).toBe('InterviewWebhook');
  });

  it('keeps the environment warm after the handler throws, and passes the error on', async () => {
    const fn = start('InviteWorker', 1);
    await expect(invoke(fn, { fail: 'refused by the test' })).rejects.toThrow('refused by the test');
    expect((await invoke(fn)).invocations).toBe(2);
    expect(fn.stats.coldStarts).toBe(1);
  });

  it('never shares an environment between two functions', async () => {
    const invite = start('InviteWorker', 1);
    const writeback = start('WritebackWorker', 1);
    const [a, b] = await Promise.all([invoke(invite), invoke(writeback)]);
    expect(a.threadId).not.toBe(b.threadId);
    expect([a.invocations, b.invocations]).toEqual([1, 1]);
    expect([a.fn, b.fn]).toEqual(['InviteWorker', 'WritebackWorker']);
  });

  it('asks the process about a side effect only while it has a crash seam (a chaos run)', async () => {
    const fn = start('InviteWorker', 1);
    expect((await invoke(fn, { sideEffect: true })).invocations).toBe(1);
    expect(fn.stats.sideEffectQuestions).toBe(0);
    const asked: string[] = [];
    faultInjection.afterSideEffect = (point, key) => {
      asked.push(`${point} ${key}`);
      throw new SimulatedCrash(point);
    };
    try {
      await expect(invoke(fn, { sideEffect: true })).rejects.toThrow('invite-emailed');
    } finally {
      faultInjection.afterSideEffect = undefined;
    }
    expect(asked).toEqual(['invite-emailed a candidate']);
    // Without the seam again, the same warm environment asks nothing.
    expect((await invoke(fn, { sideEffect: true })).invocations).toBe(3);
    expect(fn.stats.sideEffectQuestions).toBe(1);
  });

  it('leaves out of its environments only the TypeScript loader the process was started with', () => {
    const loader = ['--require', '/w/node_modules/tsx/dist/preflight.cjs', '--import', 'file:///w/tsx/dist/loader.mjs'];
    const others = ['--enable-source-maps', '--require', '/home/me/tsx-work/setup.cjs', '--conditions=development'];
    expect(environmentExecArgv([...loader, ...others, '-r', 'tsx/cjs', '--import=tsx'])).toEqual(others);
    // Nothing to leave out: the environment inherits the process's options as they are.
    expect(environmentExecArgv(others)).toBeUndefined();
  });

  it('starts environments without tsx under `tsx`, and still starts them beside a V8 option', async () => {
    const probe = (...options: string[]) =>
      new Promise<{ process: string[]; environment: string[] }>((resolve, reject) => {
        execFile(
          process.execPath,
          [
            ...options,
            '--import',
            'tsx',
            join(import.meta.dirname, '..', '..', 'helpers', 'lambda', 'exec-argv-probe.ts'),
          ],
          { timeout: 30_000 },
          (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout))),
        );
      });
    const [plain, withV8Option] = await Promise.all([probe(), probe('--stack-size=2000')]);
    expect(plain.process).toContain('tsx');
    expect(plain.environment.filter((arg) => arg.includes('tsx'))).toEqual([]);
    // Node refuses a V8 option in a worker's explicit options: the environment then inherits the process's.
    expect(withV8Option.environment).toEqual(withV8Option.process);
  });
});
