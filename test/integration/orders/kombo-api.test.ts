import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connection, parseConnections } from '../../../shared/config';
import { komboAnnouncer, komboResultOf } from '../../../shared/orders/announce';
import { komboApiFor } from '../../../shared/orders/kombo-orders';
import { diffPackages, packagesOf, publishPackages } from '../../../shared/orders/kombo-packages';
import type { OrderRecord } from '../../../shared/orders/records';
import type { ConnectionContext } from '../../../shared/pipeline/ports';
import { type KomboSandbox, startKomboSandbox } from '../../../infra/local/sandbox/kombo/server';
import { connectionDocument } from '../../helpers/connections';
import { komboPackages } from '../../../infra/cli/ops/kombo';

const QUESTIONS = [{ question: 'Walk us through a system you built.', time: 3, type: 'audio' }];
const INTEGRATION = 'teamtailor:globex';

/** Kombo's API as the sandbox plays it, through the connector's own client: results, packages, the 429. */
describe('Kombo: results and packages against the Kombo sandbox', () => {
  let kombo: KomboSandbox;
  let connection: Connection;
  let context: ConnectionContext;
  beforeAll(async () => {
    kombo = await startKomboSandbox();
    kombo.register('http://127.0.0.1:9/unused');
    [connection] = parseConnections(
      connectionDocument({
        orders: {
          kombo: {
            baseUrl: kombo.url,
            integrations: [INTEGRATION],
            tests: [
              { id: 'backend-screen', name: 'Backend screen', interview: { questions: QUESTIONS } },
              {
                id: 'culture',
                name: 'Culture',
                description: 'Values and teamwork',
                interview: { questions: QUESTIONS },
              },
            ],
          },
        },
      }),
    ) as [Connection];
    context = {
      connection,
      secrets: { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32), komboApiKey: kombo.apiKey },
    } as ConnectionContext;
  });
  afterAll(() => kombo.close());

  const orderFor = async (state: OrderRecord['state'], extra: Partial<OrderRecord> = {}) => {
    const placed = await kombo.placeOrder({
      integrationId: INTEGRATION,
      packageId: 'backend-screen',
      email: 'a@x.io',
      deliver: false,
    });
    const order: OrderRecord = {
      connectionId: connection.id,
      orderId: `ord_${placed.id}`,
      source: 'kombo',
      testId: 'backend-screen',
      state,
      candidateEmail: 'a@x.io',
      atsOrderId: placed.id,
      integrationId: INTEGRATION,
      inviteUrl: 'https://interviews.example.com/i/abc',
      profileUrl: 'https://interviews.example.com/r/1',
      score: 81,
      proctoringViolations: 0,
      endedAt: Date.UTC(2026, 10, 26, 9),
      steps: {},
      createdAt: 1,
      updatedAt: 2,
      ...extra,
    };
    return { placed, order };
  };

  it('PUTs one COMPLETED result: completed_at, a public result_url, the score of 100, TEXT attributes', async () => {
    const { placed, order } = await orderFor('completed');
    expect(await komboAnnouncer(context).announce(order, undefined)).toEqual({ warnings: [] });
    expect(placed.status).toBe('COMPLETED');
    expect(placed.result).toMatchObject({
      status: 'COMPLETED',
      result_url: 'https://interviews.example.com/r/1',
      completed_at: '2026-11-26T09:00:00.000Z',
      score: 81,
      max_score: 100,
    });
    expect(placed.result?.attributes?.every((a) => a.type === 'TEXT')).toBe(true);
    // Told again (a crash after the PUT, a lost answer, a redriven message): Kombo is asked, nothing is PUT again.
    await komboAnnouncer(context).announce(order, undefined);
    expect(kombo.calls.filter((c) => c.route === 'PUT /v1/assessment/orders/:orderId/result')).toHaveLength(1);
    expect(placed.refusedPuts).toBe(0);
  });

  it('PUTs CANCELLED with the link on expiry; an order the ATS closed is a refusal for good', async () => {
    const { placed, order } = await orderFor('expired', { profileUrl: undefined, score: undefined });
    expect(komboResultOf(order, 'https://fallback.example.com')).toMatchObject({
      status: 'CANCELLED',
      result_url: 'https://interviews.example.com/i/abc',
    });
    await komboAnnouncer(context).announce(order, undefined);
    expect(placed.status).toBe('CANCELLED');
    const closed = await orderFor('completed');
    closed.placed.status = 'REJECTED';
    await expect(komboAnnouncer(context).announce(closed.order, undefined)).rejects.toMatchObject({
      code: 'kombo-order-closed',
      retryable: false,
    });
    expect(closed.placed.result).toBeUndefined();
  });

  it('reads a concurrency 429 as a wait (retryable, rate limited), and logs Kombo’s warnings', async () => {
    const { order } = await orderFor('completed');
    kombo.concurrencyLimit = 0;
    await expect(komboAnnouncer(context).announce(order, undefined)).rejects.toMatchObject({
      code: 'kombo-rate-limited',
      retryable: true,
      rateLimited: true,
    });
    kombo.concurrencyLimit = 30;
    kombo.resultWarnings.set(INTEGRATION, ['Attributes are shown as plain text in this ATS']);
    expect(await komboAnnouncer(context).announce(order, undefined)).toEqual({
      warnings: ['Attributes are shown as plain text in this ATS'],
    });
    kombo.resultWarnings.delete(INTEGRATION);
  });

  it('publishes the packages, keeps a package no longer configured unless asked to remove it', async () => {
    const api = komboApiFor(connection, context.secrets);
    if (!api) throw new Error('no Kombo API');
    const kombo_ = connection.orders?.kombo;
    if (!kombo_) throw new Error('no kombo');
    kombo.packages.set(INTEGRATION, [
      { id: 'old-test', type: 'VIDEO_INTERVIEW', name: 'Old', description: 'Old', updated_at: '2026-01-01T00:00:00Z' },
    ]);
    const [first] = await publishPackages(api, kombo_, { remove: false });
    expect(first?.diff).toEqual({ added: ['backend-screen', 'culture'], changed: [], removed: ['old-test'] });
    expect(kombo.packages.get(INTEGRATION)?.map((p) => p.id)).toEqual(['backend-screen', 'culture', 'old-test']);
    expect(kombo.packages.get(INTEGRATION)?.find((p) => p.id === 'culture')).toMatchObject({
      type: 'VIDEO_INTERVIEW',
      description: 'Values and teamwork',
    });
    // In sync but for the kept package: nothing is PUT again.
    expect((await publishPackages(api, kombo_, { remove: false }))[0]?.published).toBe(false);
    await publishPackages(api, kombo_, { remove: true });
    expect(kombo.packages.get(INTEGRATION)?.map((p) => p.id)).toEqual(['backend-screen', 'culture']);
    expect(diffPackages(packagesOf(kombo_), await api.getPackages(INTEGRATION))).toEqual({
      added: [],
      changed: [],
      removed: [],
    });
  });

  it('ops kombo-packages: shows the difference and exits 1, publishes with --publish, then exits 0', async () => {
    const secrets = { where: 'test', read: async () => context.secrets, write: async () => undefined };
    kombo.packages.set(INTEGRATION, []);
    const lines: string[] = [];
    const print = (line: string) => void lines.push(line);
    expect(await komboPackages(connection, secrets as never, { publish: false, remove: false }, print)).toBe(1);
    expect(lines.join('\n')).toMatch(/teamtailor:globex: \+ backend-screen, \+ culture/);
    expect(kombo.packages.get(INTEGRATION)).toEqual([]);
    expect(await komboPackages(connection, secrets as never, { publish: true, remove: false }, print)).toBe(0);
    expect(lines.at(-1)).toMatch(/^teamtailor:globex: published \(/);
    expect(await komboPackages(connection, secrets as never, { publish: false, remove: false }, print)).toBe(0);
    expect(lines.at(-1)).toBe('teamtailor:globex: in sync');
    // Published again with nothing to change: said once, not 'already in sync (in sync)'.
    expect(await komboPackages(connection, secrets as never, { publish: true, remove: false }, print)).toBe(0);
    expect(lines.at(-1)).toBe('teamtailor:globex: already in sync');
  });
});
