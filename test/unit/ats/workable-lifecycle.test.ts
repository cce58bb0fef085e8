import { createHmac } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createAtsAdapter } from '../../../shared/ats';
import { parseConnections } from '../../../shared/config';
import { connectionDocument, workableFields } from '../../helpers/connections';
import { loadFixture, loadRawFixture } from '../../helpers/fixtures';
import { route, stubFetch, type StubAnswer, type StubCall } from '../../helpers/stub-fetch';

// Workable documents no disqualify, withdraw or hire event: each arrives as candidate_moved with `disqualified`,
// `disqualification_reason`, `disqualified_at` (reference: candidate-events) or `hired_at` (job-candidates-show).

const SECRET = 'whsec_test_0123456789';
const noRetry = { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 }, sleep: async () => undefined };
const json = (status: number, body: unknown): StubAnswer => ({ status, json: body });
const notFound = (call: StubCall): StubAnswer => json(404, { error: `no route ${route(call)}` });
const ref = { atsApplicationId: '3fc9a8', atsCandidateId: '3fc9a8', atsJobId: 'GROOV005' };
const STAGES = loadFixture('contract/ats/fixtures/workable-job-stages.json');
const STAGES_WITH_HIRED = {
  stages: [...(STAGES.stages as unknown[]), { slug: 'hired', name: 'Hired', kind: 'hired', position: 3 }],
};

function workable(answer: (call: StubCall) => StubAnswer) {
  const stub = stubFetch(answer);
  const connection = parseConnections(connectionDocument(workableFields()))[0]!;
  const adapter = createAtsAdapter(
    connection,
    { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32), atsWebhookSecret: SECRET, atsApiKey: 'key' },
    { fetch: stub.fetch, ...noRetry },
  );
  return { adapter, calls: stub.calls };
}

/** A candidate read (reference: job-candidates-show) with the given fields over the published example. */
const candidateRead = (fields: Record<string, unknown>) => {
  const document = loadFixture<{ candidate: Record<string, unknown> }>('contract/ats/fixtures/workable-candidate.json');
  return { candidate: { ...document.candidate, ...fields } };
};

const withData = (path: string, data: Record<string, unknown>, envelope: Record<string, unknown> = {}) => {
  const document = loadFixture<Record<string, unknown> & { data: Record<string, unknown> }>(path);
  return Buffer.from(JSON.stringify({ ...document, ...envelope, data: { ...document.data, ...data } }));
};
const DISQUALIFIED = 'contract/ats/fixtures/workable-candidate-moved-disqualified.json';
const HIRED = 'contract/ats/fixtures/workable-candidate-moved-hired.json';

describe('Workable lifecycle: candidate_moved of a candidate who left or came back', () => {
  const { adapter } = workable(notFound);

  it.each([
    ['a disqualification (rejected)', withData(DISQUALIFIED, {}), '0b6f2d4a-8c1e-4f7a-9d3b-5e2c1a7f8b90'],
    [
      'a withdrawal (a disqualification with its reason: no flag of its own)',
      withData(DISQUALIFIED, { disqualification_reason: 'Candidate withdrew' }),
      '0b6f2d4a-8c1e-4f7a-9d3b-5e2c1a7f8b90',
    ],
    [
      'a hire (moved into the hired stage, hired_at set)',
      loadRawFixture(HIRED),
      '4d9e7c2b-1a3f-4b6e-8c5d-2f0a9b8e7d61',
    ],
  ])('verifies %s as signed today and parses it as left, never a stage entry', (_what, rawBody, deliveryId) => {
    const signature = createHmac('sha256', SECRET).update(rawBody).digest('hex');
    expect(adapter.verifyWebhook({ headers: { 'x-workable-signature': signature }, rawBody }, Date.now())).toEqual({
      valid: true,
    });
    expect(adapter.parseWebhook({ headers: {}, rawBody })).toEqual({
      kind: 'application-changed',
      event: { deliveryId, atsApplicationId: '3fc9a8', change: 'left' },
    });
  });

  it('keeps a requalified candidate a stage entry (the payload cannot say "requalified"; the read tells)', () => {
    const requalified = withData(DISQUALIFIED, {
      disqualified: false,
      disqualification_reason: null,
      disqualified_at: null,
    });
    expect(adapter.parseWebhook({ headers: {}, rawBody: requalified })).toMatchObject({
      kind: 'stage-entered',
      event: { atsApplicationId: '3fc9a8', stage: { name: 'AI Interview' }, atsJobId: 'GROOV005' },
    });
  });

  it('leaves a move into the Hired stage without hired_at to the read: a stage entry no trigger matches', () => {
    const hiredNoDate = withData(HIRED, { hired_at: undefined });
    expect(adapter.parseWebhook({ headers: {}, rawBody: hiredNoDate })).toMatchObject({
      kind: 'stage-entered',
      event: { stage: { name: 'Hired' } },
    });
  });

  it('derives the same delivery id for a replay of a delivery without an id, and another for the stage entry', () => {
    const left = withData(DISQUALIFIED, {}, { id: null });
    const first = adapter.parseWebhook({ headers: {}, rawBody: left });
    const again = adapter.parseWebhook({ headers: {}, rawBody: Buffer.from(left) });
    expect(first.kind).toBe('application-changed');
    const id = first.kind === 'application-changed' ? first.event.deliveryId : '';
    expect(id).toMatch(/^derived:[0-9a-f]{40}$/);
    expect(again).toEqual(first);
    const entered = adapter.parseWebhook({
      headers: {},
      rawBody: withData(DISQUALIFIED, { disqualified: false }, { id: null }),
    });
    expect(entered.kind === 'stage-entered' && entered.event.deliveryId).not.toBe(id);
  });
});

describe('Workable readStanding: one GET /spi/v3/candidates/{id}', () => {
  it.each([
    [
      'disqualified: rejected, with the reason',
      { disqualified: true, disqualification_reason: 'Not a fit', disqualified_at: '2026-03-06T14:01:57Z' },
      { active: false, exit: 'rejected', reason: 'Not a fit' },
    ],
    [
      'disqualified as withdrawn: still rejected (Workable has no withdrawn flag)',
      { disqualified: true, disqualification_reason: 'Candidate withdrew' },
      { active: false, exit: 'rejected', reason: 'Candidate withdrew' },
    ],
    [
      'hired_at set: hired',
      { stage: 'Hired', disqualified: false, hired_at: '2026-03-20T10:29:41Z' },
      { active: false, exit: 'hired' },
    ],
    [
      'neither: active, in its stage by name',
      { disqualified: false, hired_at: null },
      {
        active: true,
        stageId: undefined,
        stageName: 'AI Interview',
      },
    ],
  ])('%s', async (_what, fields, standing) => {
    const { adapter, calls } = workable((call) =>
      route(call) === 'GET /spi/v3/candidates/3fc9a8' ? json(200, candidateRead(fields)) : notFound(call),
    );
    expect(await adapter.readStanding(ref)).toEqual(standing);
    expect(calls.map(route)).toEqual(['GET /spi/v3/candidates/3fc9a8']);
  });

  it("gives the stage's slug, and takes a stage of kind hired as a hire, once the job's stages are held", async () => {
    let stage = 'AI Interview';
    const { adapter, calls } = workable((call) => {
      if (route(call) === 'GET /spi/v3/jobs/GROOV005/stages') return json(200, STAGES_WITH_HIRED);
      if (route(call) === 'GET /spi/v3/candidates/3fc9a8') return json(200, candidateRead({ stage }));
      return notFound(call);
    });
    await adapter.moveToStage(ref, { name: 'AI Interview' });
    const before = calls.length;
    expect(await adapter.readStanding(ref)).toEqual({
      active: true,
      stageId: 'ai-interview',
      stageName: 'AI Interview',
    });
    stage = 'Hired';
    expect(await adapter.readStanding(ref)).toEqual({ active: false, exit: 'hired' });
    expect(calls.slice(before).map(route)).toEqual(['GET /spi/v3/candidates/3fc9a8', 'GET /spi/v3/candidates/3fc9a8']);
  });
});

describe('Workable moveToStage and setStatusTag for a candidate who left', () => {
  it.each([
    [{ disqualified: true, disqualification_reason: 'Not a fit' }, 'ai-interview', 'rejected'],
    [{ stage: 'Hired', hired_at: '2026-03-20T10:29:41Z' }, 'hired', 'hired'],
  ])('answers unmoved with the exit, without a move (%o)', async (fields, stageId, exit) => {
    const { adapter, calls } = workable((call) => {
      if (route(call) === 'GET /spi/v3/jobs/GROOV005/stages') return json(200, STAGES_WITH_HIRED);
      if (route(call) === 'GET /spi/v3/candidates/3fc9a8') return json(200, candidateRead(fields));
      return json(200, {});
    });
    expect(await adapter.moveToStage(ref, { name: 'Hiring Manager Review' })).toEqual({ moved: false, stageId, exit });
    expect(calls.filter((c) => c.method !== 'GET')).toEqual([]);
  });

  it('leaves a candidate moved on since the invitation where they are, and moves one still there', async () => {
    let stage = 'Applied';
    const { adapter, calls } = workable((call) => {
      if (route(call) === 'GET /spi/v3/jobs/GROOV005/stages') return json(200, STAGES_WITH_HIRED);
      if (route(call) === 'GET /spi/v3/candidates/3fc9a8') return json(200, candidateRead({ stage }));
      return { status: 200 };
    });
    const seen = { ...ref, fromStageId: 'ai-interview', fromStage: { name: 'AI Interview' } };
    expect(await adapter.moveToStage(seen, { name: 'Hiring Manager Review' })).toEqual({
      moved: false,
      stageId: 'applied',
      skipped: 'not-moved:moved-on',
    });
    expect(calls.filter((c) => c.method !== 'GET')).toEqual([]);
    // A stage outside the job's list (added since) is told by its name.
    stage = 'Reference Check';
    const unlisted = { moved: false, stageId: '', skipped: 'not-moved:moved-on' };
    expect(await adapter.moveToStage(seen, { name: 'Hiring Manager Review' })).toEqual(unlisted);
    expect(calls.filter((c) => c.method !== 'GET')).toEqual([]);
    stage = 'AI Interview';
    expect(await adapter.moveToStage(seen, { name: 'Hiring Manager Review' })).toMatchObject({ moved: true });
  });

  it('removes only the other status tags when no tag is given, and sends nothing when none is there', async () => {
    let tags = ['ai-interview-invited', 'python', 'ai-interview-expired'];
    const { adapter, calls } = workable((call) => {
      if (route(call) === 'GET /spi/v3/candidates/3fc9a8') return json(200, candidateRead({ tags }));
      if (route(call) === 'PUT /spi/v3/candidates/3fc9a8/tags') return { status: 202 };
      return notFound(call);
    });
    const others = ['ai-interview-invited', 'ai-interview-expired', 'ai-interview-completed'];
    await adapter.setStatusTag?.(ref, undefined, others);
    expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([{ tags: ['python'] }]);
    tags = ['python'];
    await adapter.setStatusTag?.(ref, undefined, others);
    expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(1);
  });
});

describe("Workable: an invocation's recent candidate read serves its status tag", () => {
  const STATUSES = ['ai-interview-invited', 'ai-interview-expired', 'ai-interview-cancelled'];
  /** The other status tags, as the pipeline names them beside the one it shows. */
  const besides = (tag: string) => STATUSES.filter((t) => t !== tag);
  function candidateApi() {
    const candidate = { stage: 'AI Interview', tags: ['python', 'ai-interview-invited'] };
    const api = workable((call) => {
      if (route(call) === 'GET /spi/v3/jobs/GROOV005/stages') return json(200, STAGES);
      if (route(call) === 'GET /spi/v3/candidates/3fc9a8') return json(200, candidateRead(candidate));
      if (route(call) === 'PUT /spi/v3/candidates/3fc9a8/tags') {
        candidate.tags = (call.body as { tags: string[] }).tags;
        return { status: 202 };
      }
      if (route(call) === 'POST /spi/v3/candidates/3fc9a8/move') return json(200, {});
      return notFound(call);
    });
    return { ...api, candidate, gets: () => api.calls.filter((c) => route(c) === 'GET /spi/v3/candidates/3fc9a8') };
  }

  it("an exit's look and its status tag: one read, the tags put from it", async () => {
    const { adapter, calls, gets } = candidateApi();
    const run = new AbortController().signal;
    expect(await adapter.readStanding(ref, run)).toMatchObject({ active: true });
    await adapter.setStatusTag?.(ref, 'ai-interview-cancelled', besides('ai-interview-cancelled'), run);
    expect(gets()).toHaveLength(1);
    expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([
      { tags: ['python', 'ai-interview-cancelled'] },
    ]);
    // The run's read shows the tags it put: the same status again sends nothing, reads nothing.
    await adapter.setStatusTag?.(ref, 'ai-interview-cancelled', besides('ai-interview-cancelled'), run);
    expect([gets().length, calls.filter((c) => c.method === 'PUT').length]).toEqual([1, 1]);
  });

  it("a move reads the candidate afresh; the status after it uses the move's read", async () => {
    const { adapter, calls, gets, candidate } = candidateApi();
    const run = new AbortController().signal;
    await adapter.readStanding(ref, run);
    candidate.tags = ['python', 'ai-interview-invited', 'referral'];
    expect(await adapter.moveToStage(ref, { name: 'Hiring Manager Review' }, run)).toMatchObject({ moved: true });
    await adapter.setStatusTag?.(ref, 'ai-interview-completed', ['ai-interview-invited'], run);
    expect(gets()).toHaveLength(2);
    expect(calls.filter((c) => c.method === 'POST')).toHaveLength(1);
    // The tag the recruiter added after the look is kept: the tags came from the move's own read.
    expect(candidate.tags).toEqual(['python', 'referral', 'ai-interview-completed']);
  });

  it('a read older than a few seconds is not used for the tags', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const { adapter, gets, candidate } = candidateApi();
      const run = new AbortController().signal;
      await adapter.readStanding(ref, run);
      candidate.tags = ['python', 'ai-interview-invited', 'referral'];
      vi.setSystemTime(Date.now() + 3_001);
      await adapter.setStatusTag?.(ref, 'ai-interview-cancelled', besides('ai-interview-cancelled'), run);
      expect(gets()).toHaveLength(2);
      expect(candidate.tags).toEqual(['python', 'referral', 'ai-interview-cancelled']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('another run, or no run, reads the candidate again', async () => {
    const { adapter, gets, candidate } = candidateApi();
    await adapter.readStanding(ref, new AbortController().signal);
    candidate.tags = ['python'];
    await adapter.setStatusTag?.(
      ref,
      'ai-interview-expired',
      besides('ai-interview-expired'),
      new AbortController().signal,
    );
    await adapter.readStanding(ref);
    await adapter.readStanding(ref);
    expect(gets()).toHaveLength(4);
    expect(candidate.tags).toEqual(['python', 'ai-interview-expired']);
  });
});

describe('Workable report note: the report file on the same comment', () => {
  it('sends one comment with the note, a line naming the file, the marker and the file in base64', async () => {
    const { adapter, calls } = workable((call) => (call.method === 'POST' ? { status: 201 } : notFound(call)));
    const file = { name: 'AI interview report r1.pdf', contentType: 'application/pdf', bytes: Buffer.from('%PDF-1') };
    expect(adapter.filesOnNotes).toBe(true);
    await adapter.postNote(ref, { body: 'AI interview completed', marker: 'ai-interview-report:r1', file });
    expect(calls).toHaveLength(1);
    expect(calls[0]?.url.pathname).toBe('/spi/v3/candidates/3fc9a8/comments');
    const sent = calls[0]?.body as
      | { comment: { body: string; attachment: { name: string; data: string } } }
      | undefined;
    expect(sent?.comment.body).toBe(
      'AI interview completed\n\nReport file: AI interview report r1.pdf\n\n[ai-interview-report:r1]',
    );
    expect(sent?.comment.attachment).toEqual({ name: file.name, data: Buffer.from('%PDF-1').toString('base64') });
  });
});
