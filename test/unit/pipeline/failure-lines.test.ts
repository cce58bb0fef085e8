import { describe, expect, it, vi } from 'vitest';
import { sayConnectionFailure } from '../../../shared/pipeline/failure-lines';
import { MemoryQueueLedger } from '../../helpers/pipeline-fakes';
import { NOW } from '../../helpers/pipeline-records';

const HOUR = 3_600_000;
/** The ATS refused the connection's key: a refusal for good (`retryable: false`). */
const refused = Object.assign(new Error('401'), { code: 'ATS_AUTH', retryable: false });

describe("Reconciler: a connection's failure met on every run", () => {
  function world() {
    let now = NOW;
    const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const ledger = new MemoryQueueLedger();
    const deps = { ledger, logger, now: () => now };
    const say = (connectionId: string, kind: string, error: unknown = refused) =>
      sayConnectionFailure(deps, connectionId, {
        message: 'sweep failed for a connection',
        kind,
        error,
        attributes: {},
      });
    return { logger, ledger, say, advance: (ms: number) => (now += ms) };
  }

  it('is an error once a day for the same refusal for good, a warning on the runs between', async () => {
    const { logger, say, advance } = world();
    await say('acme', 'sweep ATS_AUTH');
    for (let run = 0; run < 5; run++) {
      advance(10 * 60_000);
      await say('acme', 'sweep ATS_AUTH');
    }
    expect(logger.error).toHaveBeenCalledTimes(1);
    expect(logger.warn).toHaveBeenCalledTimes(5);
    expect(logger.warn).toHaveBeenLastCalledWith(expect.stringMatching(/still/), { connectionId: 'acme' });
    advance(24 * HOUR);
    await say('acme', 'sweep ATS_AUTH');
    expect(logger.error).toHaveBeenCalledTimes(2);
  });

  it('is an error at once for another failure, or another connection', async () => {
    const { logger, say } = world();
    await say('acme', 'sweep ATS_AUTH');
    await say('acme', 'follow-ups ATS_AUTH');
    await say('globex', 'sweep ATS_AUTH');
    expect(logger.error).toHaveBeenCalledTimes(3);
    expect(logger.warn).not.toHaveBeenCalled();
  });

  it('is an error every time for a failure with no verdict for good: a throttle, an outage, a bug', async () => {
    const { logger, ledger, say } = world();
    const claim = vi.spyOn(ledger, 'claimEnqueue');
    for (const error of [new Error('ThrottlingException'), new TypeError('x is undefined')]) {
      await say('acme', 'sweep Error', error);
      await say('acme', 'sweep Error', error);
    }
    expect(logger.error).toHaveBeenCalledTimes(4);
    expect(claim).not.toHaveBeenCalled();
  });

  it('is an error where the ledger cannot say whether it was said today', async () => {
    const { logger, ledger, say } = world();
    await say('acme', 'sweep ATS_AUTH');
    vi.spyOn(ledger, 'claimEnqueue').mockRejectedValue(new Error('throttled'));
    await say('acme', 'sweep ATS_AUTH');
    expect(logger.error).toHaveBeenCalledTimes(2);
  });
});
