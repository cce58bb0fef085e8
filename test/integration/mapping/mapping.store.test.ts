import { randomBytes } from 'node:crypto';
import { lifecycleRules } from '../../helpers/lifecycle-rules';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { emulatorEnvironment, startEmulators, type Emulators } from '../../../infra/local/emulators';
import { createTables } from '../../../infra/local/provision';
import { type DynamoMappingStore, dynamoMappingStore } from '../../../shared/mapping';
import { DynamoActivity } from '../../../shared/mapping/activity.records';
import { DynamoSeenChanges } from '../../../shared/mapping/seen-changes.records';
import { DynamoOrderStore } from '../../../shared/mapping';
import { withDeadline } from '../../../shared/aws/deadline';
import type { ApplicationState } from '../../../shared/pipeline';
import { claimInput, delivery, lease, mappingRules, NOW } from '../../helpers/mapping-rules';

describe('Repositories: dynamoMappingStore (DynamoDB Local)', () => {
  let emulators: Emulators;
  let store: DynamoMappingStore;
  let client: DynamoDBClient;
  let tables: Awaited<ReturnType<typeof createTables>>;
  beforeAll(async () => {
    emulators = await startEmulators({}, inject('emulators'));
    const env = emulatorEnvironment(emulators.endpoints);
    client = new DynamoDBClient({
      endpoint: emulators.endpoints.dynamodb,
      region: env.AWS_REGION,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    tables = await createTables(client, `store-test-${randomBytes(4).toString('hex')}`);
    store = dynamoMappingStore({ client, tables });
  });
  afterAll(async () => {
    await emulators?.stop();
  });

  /** An expired application as an item stood before the steps map, with the expiry note's old `fields`. */
  async function oldExpiredItem(prefix: string, fields: Record<string, number>) {
    const atsApplicationId = `${prefix}-${Date.now()}`;
    const key = { connectionId: 'acme', atsApplicationId, triggerId: 'ai-screen' };
    const item = { pk: `acme#${atsApplicationId}`, sk: 'ai-screen', ...key, atsCandidateId: 'c', atsJobId: 'j' };
    const Item = marshall({ ...item, state: 'expired', ...fields, createdAt: NOW, updatedAt: NOW });
    await client.send(new PutItemCommand({ TableName: tables.applications, Item }));
    return key;
  }

  mappingRules(() => store);
  lifecycleRules(() => store);

  it('lists for the operator a write-back whose stage move the ATS refused, beside the failed ones', async () => {
    const connectionId = `refused-${Date.now()}`;
    const put = (atsApplicationId: string, state: string, steps: Record<string, unknown>) =>
      client.send(
        new PutItemCommand({
          TableName: tables.applications,
          Item: marshall({
            ...{ pk: `${connectionId}#${atsApplicationId}`, sk: 'ai-screen', connectionId, atsApplicationId },
            ...{ triggerId: 'ai-screen', atsCandidateId: 'c', atsJobId: 'j', state, steps, reportId: 'rep-1' },
            ...{ createdAt: NOW, updatedAt: NOW },
          }),
        }),
      );
    await put('moved', 'written_back', { stageMove: { doneAt: NOW, value: 'stage-2' } });
    await put('refused', 'written_back', {
      stageMove: { doneAt: NOW, outcome: 'refused', value: 'ats-invalid-request' },
    });
    await put('unnoted', 'written_back', {
      ...{ reportFile: { doneAt: NOW, value: 'file-1' }, status: { doneAt: NOW, value: 'advanced', rank: 4 } },
      reportNote: { doneAt: NOW, outcome: 'refused', value: 'ats-forbidden' },
      reportLink: { doneAt: NOW, outcome: 'refused', value: 'ats-forbidden' },
    });
    // A link refused beside a note posted: the note carries it, nothing to list or retry.
    await put('unlinked', 'written_back', { reportLink: { doneAt: NOW, outcome: 'refused', value: 'ats-forbidden' } });
    await put('failed', 'failed', {});
    await put('uninvited-note', 'invited', {
      inviteEmail: { doneAt: NOW },
      inviteNote: { doneAt: NOW, outcome: 'refused', value: 'ats-forbidden' },
    });
    const listed = await store.listFailedApplications(connectionId);
    const names = ['failed', 'refused', 'uninvited-note', 'unnoted'];
    expect(listed.map((a) => a.atsApplicationId).sort()).toEqual(names);
    // An operator's retry reopens a failed write-back and one written back with a refusal: the refused steps and the
    // status taken off to be done again, the rest kept. Not one written back cleanly, nor one read before a retry.
    const read = new Map(listed.map((a) => [a.atsApplicationId, a]));
    const reopened = await store.reopenWriteBack(read.get('unnoted') as (typeof listed)[number]);
    expect([reopened?.state, Object.keys(reopened?.steps ?? {})]).toEqual(['completed', ['reportFile']]);
    expect(await store.reopenWriteBack(read.get('unnoted') as (typeof listed)[number])).toBeUndefined();
    expect((await store.reopenWriteBack(read.get('failed') as (typeof listed)[number]))?.state).toBe('completed');
    for (const id of ['moved', 'unlinked']) {
      const [clean] = await store.findApplicationsByAtsId(connectionId, id);
      expect(clean?.state).toBe('written_back');
      expect(clean && (await store.reopenWriteBack(clean))).toBeUndefined();
    }
    expect(await store.reopenWriteBack(read.get('uninvited-note') as (typeof listed)[number])).toBeUndefined();
  });

  it('reads an application recorded before the steps map as steps, and goes on with it as before', async () => {
    // As an item stood before the map: each step in fields of its own, no `steps`.
    const atsApplicationId = `legacy-${Date.now()}`;
    const key = { connectionId: 'acme', atsApplicationId, triggerId: 'ai-screen' };
    await client.send(
      new PutItemCommand({
        TableName: tables.applications,
        Item: marshall({
          pk: `acme#${atsApplicationId}`,
          sk: 'ai-screen',
          ...key,
          atsCandidateId: `legacy-cand-${atsApplicationId}`,
          atsJobId: '3301',
          candidateKey: `acme#legacy-cand-${atsApplicationId}`,
          state: 'invited',
          interviewId: 'int-legacy',
          inviteEmailStartedAt: NOW - 10,
          inviteEmailAt: NOW - 5,
          inviteEmailUncertain: true,
          inviteNoteAt: NOW - 4,
          remindersStarted: 1,
          remindersSent: 1,
          lastReminderAt: NOW - 3,
          statusTag: 'invited',
          statusRank: 1,
          createdAt: NOW - 20,
          updatedAt: NOW - 3,
        }),
      }),
    );
    const read = await store.getApplication(key);
    expect(read?.steps).toEqual({
      inviteEmail: { startedAt: NOW - 10, doneAt: NOW - 5, outcome: 'uncertain' },
      inviteNote: { doneAt: NOW - 4 },
      reminder1: { startedAt: NOW - 3, doneAt: NOW - 3 },
      status: { value: 'invited', rank: 1 },
    });
    expect(read).not.toHaveProperty('inviteEmailAt');
    // The first reminder was begun under the old fields: not again. The second begins, making the map.
    const once = { kind: 'once', state: 'invited', now: NOW } as const;
    expect(await store.beginStep(key, 'reminder1', once)).toBe(false);
    expect(await store.beginStep(key, 'reminder2', once)).toBe(true);
    expect(await store.beginStep(key, 'reminder2', once)).toBe(false);
    // A status below the old rank is refused; one above is begun.
    expect(await store.beginStep(key, 'status', { kind: 'rank', value: 'x', rank: 0, now: NOW })).toBe(false);
    expect(await store.beginStep(key, 'status', { kind: 'rank', value: 'expired', rank: 2, now: NOW })).toBe(true);
    expect(await store.candidateStatuses('acme', `legacy-cand-${atsApplicationId}`)).toEqual(['expired']);
    await store.recordStep(key, { step: { name: 'inviteNote', record: { doneAt: NOW } } });
    const after = await store.getApplication(key);
    expect(after?.steps).toMatchObject({
      inviteEmail: { outcome: 'uncertain' },
      inviteNote: { doneAt: NOW },
      reminder1: { doneAt: NOW - 3 },
      reminder2: { startedAt: NOW },
      status: { value: 'expired', rank: 2 },
    });
    // No reminder begins once the interview was taken: its report came and waits for its turn.
    await store.recordStep(key, { step: { name: 'reportArrived', record: { doneAt: NOW } } });
    const unlessTaken = { ...once, unless: ['reportArrived', 'failureNoteReportUnreadable'] } as const;
    expect(await store.beginStep(key, 'reminder3', unlessTaken)).toBe(false);
    expect(await store.beginStep(key, 'reminder3', once)).toBe(true);
    // Nor does it expire: the expiry holds only without the steps that show it taken.
    expect(await store.expireApplication(key, NOW, unlessTaken.unless)).toBeUndefined();
    expect(await store.getApplication(key)).toMatchObject({ state: 'invited' });
    const raw = await client.send(
      new GetItemCommand({
        TableName: tables.applications,
        Key: marshall({ pk: `acme#${atsApplicationId}`, sk: 'ai-screen' }),
      }),
    );
    // The step written again lost its old field; the map holds it.
    expect(unmarshall(raw.Item ?? {})).not.toHaveProperty('inviteNoteAt');
  });

  it('makes the steps map on an old item whose expiry note a worker holds, for one worker at a time', async () => {
    const key = await oldExpiredItem('legacy-exp', { expiryLeaseUntil: NOW + 1000 });
    const lease1 = { kind: 'lease', state: 'expired', now: NOW, until: NOW + 60_000 } as const;
    expect(await store.beginStep(key, 'expiryNote', lease1)).toBe(false);
    const racing = await Promise.all([
      store.beginStep(key, 'expiryNote', { ...lease1, now: NOW + 2000 }),
      store.beginStep(key, 'expiryNote', { ...lease1, now: NOW + 2000 }),
    ]);
    expect(racing.sort()).toEqual([false, true]);
  });

  it("begins another leased step on an old item whose expiry note was done: old fields hold that note's", async () => {
    const key = await oldExpiredItem('legacy-told', { expiryNoteAt: NOW - 10 });
    const lease = { kind: 'lease', state: 'expired', now: NOW, until: NOW + 60_000, round: 0 } as const;
    expect(await store.beginStep(key, 'expiryNote', lease)).toBe(false);
    expect(await store.beginStep(key, 'failureNoteReportUnreadable', lease)).toBe(true);
    expect(await store.beginStep(key, 'failureNoteReportUnreadable', lease)).toBe(false);
  });

  it('sets a TTL on every record it writes', async () => {
    const input = claimInput();
    await store.claimApplication(delivery('evt-6'), input, lease('w1'));
    const [record] = await store.findApplicationsByAtsId('acme', input.atsApplicationId);
    expect((record as unknown as { expiresAt: number }).expiresAt).toBe(Math.floor(NOW / 1000) + 180 * 86_400);
    await store.parkUnmatchedReport(
      'acme',
      { reportId: 'r', interviewId: 'i', candidateId: 'c' },
      'no application',
      NOW,
    );
    expect((await store.listJobs('acme')).length).toBeGreaterThan(0);
  });

  it('purges a candidate whose records fill more than 50 pages, all of them; a pager past its cap throws', async () => {
    // Two records a page: 120 applications of one candidate are 60 pages of the candidate index.
    const paged = dynamoMappingStore({ client, tables, paging: { pageSize: 2 } });
    const candidate = `many-${Date.now()}`;
    for (let i = 0; i < 120; i++)
      await paged.claimApplication(
        delivery(`evt-many-${candidate}-${i}`),
        { ...claimInput(), atsCandidateId: candidate },
        lease('w1'),
      );
    expect(await paged.purgeCandidate('acme', candidate)).toEqual({ applications: 120, orders: 0 });
    const capped = dynamoMappingStore({ client, tables, paging: { pageSize: 2, maxPages: 3 } });
    await expect(capped.listFailedApplications()).rejects.toMatchObject({
      code: 'page-cap',
      message: expect.stringContaining('more than 3 pages'),
    });
  });

  it("reads a connection's jobs by its index: other customers' jobs are neither scanned nor returned", async () => {
    for (const connectionId of ['jobs-a', 'jobs-b', 'jobs-c'])
      for (let i = 0; i < 4; i++)
        await store.leaseJob(
          { connectionId, atsJobId: `j${i}`, triggerId: 't' },
          { interviewName: 'n', templateHash: 'h', jobName: i === 0 ? 'Data Engineer' : undefined },
          lease('w'),
        );
    expect(await store.getJob({ connectionId: 'jobs-a', atsJobId: 'j0', triggerId: 't' })).toMatchObject({
      jobName: 'Data Engineer',
    });
    expect(await store.getJob({ connectionId: 'jobs-a', atsJobId: 'j1', triggerId: 't' })).not.toHaveProperty(
      'jobName',
    );
    const reads: { command: string; scanned: number }[] = [];
    const counting = new Proxy(client, {
      get: (target, property, receiver) =>
        property === 'send'
          ? async (command: { constructor: { name: string } }, options?: object) => {
              const result = await target.send(command as never, options);
              reads.push({
                command: command.constructor.name,
                scanned: Number((result as { ScannedCount?: number }).ScannedCount),
              });
              return result;
            }
          : Reflect.get(target, property, receiver),
    });
    const jobs = await dynamoMappingStore({ client: counting, tables }).listJobs('jobs-b');
    expect(jobs.map((j) => j.atsJobId).sort()).toEqual(['j0', 'j1', 'j2', 'j3']);
    expect(reads).toEqual([{ command: 'QueryCommand', scanned: 4 }]);
  });

  it("reads a connection's open invitations by the state index, none of its 200 closed applications", async () => {
    const connectionId = `states-${Date.now()}`;
    const put = (i: number, state: string) => {
      const key = { connectionId, atsApplicationId: `a${i}`, triggerId: 'ai-screen' };
      const item = { pk: `${connectionId}#a${i}`, sk: 'ai-screen', ...key, atsCandidateId: `c${i}`, atsJobId: 'j' };
      const Item = marshall({ ...item, interviewId: 'int-s', state, steps: {}, createdAt: NOW, updatedAt: NOW });
      return client.send(new PutItemCommand({ TableName: tables.applications, Item }));
    };
    for (let i = 0; i < 200; i++) await put(i, i % 2 ? 'written_back' : 'left');
    for (let i = 200; i < 203; i++) await put(i, 'invited');
    const reads: { command: string; items: number }[] = [];
    const counting = new Proxy(client, {
      get: (target, property, receiver) =>
        property === 'send'
          ? async (command: { constructor: { name: string } }, options?: object) => {
              const result = (await target.send(command as never, options)) as {
                ScannedCount?: number;
                Responses?: Record<string, unknown[]>;
              };
              const got = Object.values(result.Responses ?? {}).flat().length;
              reads.push({ command: command.constructor.name, items: result.ScannedCount ?? got });
              return result;
            }
          : Reflect.get(target, property, receiver),
    });
    const states: ApplicationState[] = ['claimed', 'completed', 'expired', 'failed', 'invited'];
    const open = await dynamoMappingStore({ client: counting, tables }).listApplicationsInStates(connectionId, states);
    expect(open.map((a) => a.atsApplicationId).sort()).toEqual(['a200', 'a201', 'a202']);
    // One Query over the open states' range (keys only), then the three records whole: 6 items read, of 203.
    expect(reads).toEqual([
      { command: 'QueryCommand', items: 3 },
      { command: 'BatchGetItemCommand', items: 3 },
    ]);
  });

  it('stops a paged read at the deadline between two pages, as a retryable error naming what it read', async () => {
    const interviewId = `int-deadline-${Date.now()}`;
    for (let i = 0; i < 5; i++) {
      const input = { ...claimInput(), atsApplicationId: `app-deadline-${i}` };
      await store.claimApplication(delivery(`evt-deadline-${i}`), input, lease('w1'));
      await store.recordStep(input, { owner: 'w1', finish: 'invited', data: { interviewId } });
    }
    const deadline = new AbortController();
    let requests = 0;
    const aborting = new Proxy(client, {
      get: (target, property, receiver) =>
        property === 'send'
          ? async (command: never, options?: object) => {
              requests++;
              const result = await target.send(command, options);
              // The worker's deadline passes while the first page is on its way back.
              deadline.abort();
              return result;
            }
          : Reflect.get(target, property, receiver),
    });
    const paged = dynamoMappingStore({ client: aborting, tables, paging: { pageSize: 2 } });
    await expect(
      withDeadline(deadline.signal, () => paged.listApplicationsByInterview(interviewId)),
    ).rejects.toMatchObject({
      code: 'deadline-reached',
      retryable: true,
      message: expect.stringContaining('byInterview'),
    });
    expect(requests).toBe(1);
    // Without a deadline the same read goes through all three pages.
    expect(
      await dynamoMappingStore({ client, tables, paging: { pageSize: 2 } }).listApplicationsByInterview(interviewId),
    ).toHaveLength(5);
  });

  it('keeps one timeline entry for a keyed note written twice, and one each for unkeyed notes', async () => {
    const activity = new DynamoActivity(tables.activity, client);
    const atsApplicationId = `timeline-${Date.now()}`;
    const delivered = { connectionId: 'acme', atsApplicationId, at: NOW, kind: 'webhook' as const };
    const keyed = { ...delivered, detail: 'webhook: entered AI Interview', key: 'enqueue-1' };
    await activity.addTimeline([keyed]);
    await activity.addTimeline([keyed, { ...delivered, detail: 'unkeyed' }, { ...delivered, detail: 'unkeyed' }]);
    const timeline = await activity.timeline('acme', atsApplicationId);
    expect(timeline.map((e) => e.detail).sort()).toEqual(['unkeyed', 'unkeyed', 'webhook: entered AI Interview']);
    // The key makes the entry one; it is not part of what the console reads.
    expect(timeline.every((e) => !('key' in e))).toBe(true);
  });

  it("deletes a purged candidate's assessment orders (their e-mail and name), and no one else's", async () => {
    const orders = new DynamoOrderStore({ table: tables.orders, client });
    const order = (candidate: string) => ({
      connectionId: 'acme',
      orderId: `order-${candidate}-${Date.now()}`,
      source: 'greenhouse' as const,
      testId: 'backend-screen',
      state: 'received' as const,
      candidateEmail: `${candidate}@example.com`,
      candidateName: 'Pat Doe',
      atsCandidateId: candidate,
      steps: {},
      createdAt: NOW,
      updatedAt: NOW,
    });
    const [theirs, others] = [order(`gone-${Date.now()}`), order(`kept-${Date.now()}`)];
    await orders.recordOrder(theirs);
    await orders.recordOrder(others);
    const removed = await store.purgeCandidate('acme', theirs.atsCandidateId);
    expect(removed).toEqual({ applications: 0, orders: 1 });
    expect(await orders.getOrder(theirs)).toBeUndefined();
    expect(await orders.getOrder(others)).toMatchObject({ candidateEmail: others.candidateEmail });
  });

  it("answers the link a new connect link replaces, so it can be spent; another connection's is its own", async () => {
    const activity = new DynamoActivity(tables.activity, client);
    const connectionId = `links-${Date.now()}`;
    const link = { connectionId, createdBy: 'ops', createdAt: NOW, validUntil: NOW + 86_400_000 };
    expect(await activity.putLink(`${connectionId}-1`, link)).toBeUndefined();
    expect(await activity.putLink(`${connectionId}-2`, link)).toBe(`${connectionId}-1`);
    expect(await activity.putLink(`${connectionId}-other`, { ...link, connectionId: `${connectionId}-b` })).toBe(
      undefined,
    );
    expect(await activity.useLink(`${connectionId}-1`, NOW)).toBe(true);
    expect(await activity.link(`${connectionId}-1`, NOW)).toBeUndefined();
    expect(await activity.link(`${connectionId}-2`, NOW)).toMatchObject({ connectionId });
    // A connection written before it recorded when it was made: the link's field is undefined, and left out.
    const unrecorded = { ...link, connectionVersion: 4, connectionCreatedAt: undefined };
    expect(await activity.putLink(`${connectionId}-3`, unrecorded)).toBe(`${connectionId}-2`);
    const stored = await activity.link(`${connectionId}-3`, NOW);
    expect(stored).toMatchObject({ ...link, connectionVersion: 4 });
    expect(stored).not.toHaveProperty('connectionCreatedAt');
  });

  it("keeps a synced copy's read where it stopped short, and forgets it once a read goes to the end", async () => {
    const seen = new DynamoSeenChanges(tables.events, client);
    const [connectionId, other] = [`resume-${Date.now()}`, `resume-other-${Date.now()}`];
    expect(await seen.resumePoint(connectionId)).toBeUndefined();
    const point = { since: NOW - 86_400_000, cursor: 'eyJwYWdlIjoyMH0', startedAt: NOW };
    await seen.saveResumePoint(connectionId, point);
    expect(await seen.resumePoint(connectionId)).toEqual(point);
    expect(await seen.resumePoint(other)).toBeUndefined();
    await seen.saveResumePoint(connectionId, undefined);
    expect(await seen.resumePoint(connectionId)).toBeUndefined();
    await seen.advanceWatermark(connectionId, NOW);
    expect(await seen.watermark(connectionId)).toBe(NOW);
  });
});
