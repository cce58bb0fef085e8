import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAshbySandbox } from '../../../infra/local/sandbox/ats/ashby/server';
import type { AtsSandbox } from '../../../infra/local/sandbox/ats/ats-sandbox-kit';
import { type GreenhouseSandbox, startGreenhouseSandbox } from '../../../infra/local/sandbox/ats/greenhouse/server';
import { type LeverSandbox, startLeverSandbox } from '../../../infra/local/sandbox/ats/lever/server';
import { startWorkableSandbox } from '../../../infra/local/sandbox/ats/workable/server';
import { startRecordingServer, waitFor } from '../../helpers/local-http';

// The sandboxes answer what each vendor documents (../shared/spec/ats-facts.md, "Corrections, 2026-11") and
// refuse what it refuses, whatever the adapters would like: they are checked here over HTTP, with no adapter.

type Receiver = Awaited<ReturnType<typeof startRecordingServer>>;
const hmacHex = (secret: string, data: string) => createHmac('sha256', secret).update(data).digest('hex');
const SECRET = 'whsec_sandbox_0123456789';

/** Asks the Greenhouse sandbox for a token with its client credentials (`form`: the grant's fields). */
const requestToken = (sandbox: GreenhouseSandbox, form = 'grant_type=client_credentials') =>
  fetch(`${sandbox.url}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${sandbox.clientId}:${sandbox.clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: form,
  });

describe('Greenhouse sandbox: Harvest v3 as harvestdocs describes it', () => {
  let sandbox: GreenhouseSandbox;
  let receiver: Receiver;
  let token = '';
  const get = (path: string) => fetch(`${sandbox.url}${path}`, { headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    sandbox = await startGreenhouseSandbox({ port: 0, rateLimit: 1000 });
    receiver = await startRecordingServer();
    await sandbox.registerWebhook({ url: receiver.url, secret: SECRET });
    const answer = await requestToken(sandbox, 'grant_type=client_credentials&sub=4080');
    const issued = (await answer.json()) as Record<string, unknown>;
    // The token says when it ends, not how long it lasts.
    expect(Object.keys(issued).sort()).toEqual(['access_token', 'expires_at', 'token_type']);
    expect(Date.parse(issued.expires_at as string) - Date.now()).toBeGreaterThan(3_500_000);
    token = issued.access_token as string;
  });
  afterAll(async () => {
    await sandbox.close();
    await receiver.close();
  });

  it('reads applications flat through ?ids=, has no current_stage, and no single-record route', async () => {
    const application = sandbox.addCandidate({ firstName: 'A', lastName: 'B', email: 'a@example.com', jobId: '3301' });
    const list = (await (await get(`/v3/applications?ids=${application.id}`)).json()) as Record<string, unknown>[];
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: Number(application.id), job_interview_stage_id: 9000, status: 'in_process' });
    expect(list[0]).not.toHaveProperty('current_stage');
    expect((await get(`/v3/applications/${application.id}`)).status).toBe(404);
  });

  it('lists stages at /v3/job_interview_stages?job_ids= and has no /v3/job_stages', async () => {
    const stages = (await (await get('/v3/job_interview_stages?job_ids=3301')).json()) as Record<string, unknown>[];
    expect(stages.map((s) => s.name)).toEqual(['Application Review', 'AI Interview', 'Hiring Manager Review', 'Offer']);
    expect(stages[0]).toEqual({ id: 9000, job_id: 3301, name: 'Application Review', sort_order: 0, active: true });
    expect((await get('/v3/job_stages?job_id=3301')).status).toBe(404);
  });

  it('takes plural filters only, pages by the Link header alone, and a cursor carries nothing else', async () => {
    const application = sandbox.addCandidate({ firstName: 'C', lastName: 'D', email: 'c@example.com', jobId: '3301' });
    for (let i = 0; i < 3; i++) {
      const created = await fetch(`${sandbox.url}/v3/notes`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          candidate_id: Number(application.candidateId),
          body: `n${i}`,
          visibility: 'admin_only',
          user_id: 1,
        }),
      });
      expect(created.status).toBe(201);
    }
    const singular = await get(`/v3/notes?candidate_id=${application.candidateId}`);
    expect(singular.status).toBe(422);
    expect(((await singular.json()) as { errors: { field: string }[] }).errors[0]?.field).toBe('candidate_id');
    const first = await get(`/v3/notes?candidate_ids=${application.candidateId}&per_page=2`);
    const firstPage = (await first.json()) as { body: string; type: string; visibility: string }[];
    expect(firstPage.map((n) => n.body)).toEqual(['n0', 'n1']);
    expect(firstPage[0]).toMatchObject({ type: 'NOTE', visibility: 'admin_only_visible' });
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1] as string;
    expect(new URL(next).searchParams.has('per_page')).toBe(false);
    expect((await get(`${new URL(next).pathname}${new URL(next).search}&per_page=2`)).status).toBe(422);
    const second = await get(`${new URL(next).pathname}${new URL(next).search}`);
    expect(((await second.json()) as { body: string }[]).map((n) => n.body)).toEqual(['n2']);
    expect(second.headers.get('link')).toBeNull();
  });

  it('moves only from the stage the application is in (422 otherwise), answering 204', async () => {
    const application = sandbox.addCandidate({ firstName: 'E', lastName: 'F', email: 'e@example.com', jobId: '3301' });
    const move = (from: number) =>
      fetch(`${sandbox.url}/v3/applications/${application.id}/move`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from_stage_id: from, to_stage_id: 9002 }),
      });
    const stale = await move(9001);
    expect(stale.status).toBe(422);
    const moved = await move(9000);
    expect(moved.status).toBe(204);
    expect(await moved.text()).toBe('');
  });

  it('announces its 30-second window on every answer, and Retry-After on a 429', async () => {
    const limited = await startGreenhouseSandbox({ port: 0, rateLimit: 2 });
    try {
      const issued = await requestToken(limited);
      const bearer = { authorization: `Bearer ${((await issued.json()) as { access_token: string }).access_token}` };
      const answers = [];
      for (let i = 0; i < 3; i++)
        answers.push(await fetch(`${limited.url}/v3/job_interview_stages?job_ids=3301`, { headers: bearer }));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
      for (const answer of answers) {
        expect(answer.headers.get('x-ratelimit-limit')).toBe('2');
        const resetsIn = Number(answer.headers.get('x-ratelimit-reset')) * 1000 - Date.now();
        expect(resetsIn).toBeGreaterThan(10_000);
        expect(resetsIn).toBeLessThanOrEqual(31_000);
      }
      expect(Number(answers[2]?.headers.get('retry-after'))).toBeGreaterThan(10);
    } finally {
      await limited.close();
    }
  });

  it('sends merge_candidate and candidate_anonymized, signed, as the webhooks docs show them', async () => {
    const merged = sandbox.addCandidate({ firstName: 'G', lastName: 'H', email: 'g@example.com', jobId: '3301' });
    const mergedAway = merged.candidateId;
    await sandbox.mergeCandidate(merged.id);
    // The application now belongs to the record that stays.
    expect(merged.candidateId).not.toBe(mergedAway);
    const anonymized = sandbox.addCandidate({ firstName: 'I', lastName: 'J', email: 'i@example.com', jobId: '3301' });
    await sandbox.anonymizeCandidate(anonymized.id);
    await waitFor(() => receiver.received.length >= 3, 5000, 'the webhooks');
    const bodies = receiver.received.map((r) => {
      expect(r.headers.signature).toBe(`sha256 ${hmacHex(SECRET, r.body)}`);
      return JSON.parse(r.body) as { action: string; payload: Record<string, unknown> };
    });
    expect(bodies.find((b) => b.action === 'merge_candidate')?.payload.person).toMatchObject({
      id: Number(mergedAway),
      new_candidate_id: Number(merged.candidateId),
    });
    expect(bodies.find((b) => b.action === 'candidate_anonymized')?.payload).toEqual({
      candidate_id: Number(anonymized.candidateId),
      anonymized_fields: ['full_name', 'email_addresses'],
    });
  });
});

describe('Workable sandbox: names in webhooks and reads, slugs in moves', () => {
  let sandbox: AtsSandbox;
  let receiver: Receiver;
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${sandbox.url}/spi/v3${path}`, {
      ...init,
      headers: { authorization: 'Bearer workable-sandbox-token', 'content-type': 'application/json' },
    });

  beforeAll(async () => {
    sandbox = await startWorkableSandbox({ port: 0, rateLimit: 1000 });
    receiver = await startRecordingServer();
    await sandbox.registerWebhook({ url: receiver.url, secret: SECRET });
  });
  afterAll(async () => {
    await sandbox.close();
    await receiver.close();
  });

  it('names the stage in candidate_moved and in the candidate read; moves take the slug', async () => {
    const application = sandbox.addCandidate({ firstName: 'Ana', lastName: 'Ruiz', email: 'ana@example.com' });
    await sandbox.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const delivery = JSON.parse(receiver.received.at(-1)?.body ?? '{}') as { data: { stage: string } };
    expect(delivery.data.stage).toBe('AI Interview');
    const read = await api(`/candidates/${application.id}`);
    expect(((await read.json()) as { candidate: { stage: string } }).candidate.stage).toBe('AI Interview');
    expect(read.headers.get('x-rate-limit-limit')).toBe('1000');
    expect(read.headers.get('x-rate-limit-remaining')).not.toBeNull();
    const move = (stage: string) =>
      api(`/candidates/${application.id}/move`, {
        method: 'POST',
        body: JSON.stringify({ member_id: 'm-1', target_stage: stage }),
      });
    expect((await move('Hiring Manager Review')).status).toBe(422);
    expect((await move('hiring-manager-review')).status).toBe(200);
  });

  it('answers a comment 201 with an empty body, and lists it among the activities only', async () => {
    const application = sandbox.addCandidate({ firstName: 'Bo', lastName: 'Lin', email: 'bo@example.com' });
    const created = await api(`/candidates/${application.id}/comments`, {
      method: 'POST',
      body: JSON.stringify({ member_id: 'm-1', comment: { body: 'Invited [m-1]' } }),
    });
    expect(created.status).toBe(201);
    expect(await created.text()).toBe('');
    expect((await api(`/candidates/${application.id}/comments`)).status).toBe(404);
    const activities = (await (await api(`/candidates/${application.id}/activities`)).json()) as {
      activities: { action: string; body: string }[];
    };
    expect(activities.activities).toContainEqual(expect.objectContaining({ action: 'comment', body: 'Invited [m-1]' }));
  });

  it('writes a comment it answers only after the client gave up, as a server working on past a timeout', async () => {
    const application = sandbox.addCandidate({ firstName: 'Cy', lastName: 'Ng', email: 'cy@example.com' });
    sandbox.setFaults({ slowRate: 1, slowMs: 400 });
    try {
      const gaveUp = await api(`/candidates/${application.id}/comments`, {
        method: 'POST',
        body: JSON.stringify({ member_id: 'm-1', comment: { body: 'Late [m-2]' } }),
        signal: AbortSignal.timeout(100),
      }).catch((error: unknown) => error);
      expect(gaveUp).toMatchObject({ name: 'TimeoutError' });
      expect(sandbox.notesOf(application.id)).toEqual([]);
    } finally {
      sandbox.setFaults({ slowRate: 0, slowMs: 0 });
    }
    await waitFor(() => sandbox.notesOf(application.id).includes('Late [m-2]'), 5_000, 'the late comment');
  });
});

describe('Lever sandbox: a signature token per webhook, notes in fields, bursts then 429 without Retry-After', () => {
  let sandbox: LeverSandbox;
  let receiver: Receiver;
  let tokens: Record<string, string> = {};

  beforeAll(async () => {
    sandbox = await startLeverSandbox({ port: 0, rateLimit: 3 });
    receiver = await startRecordingServer();
    tokens = (await sandbox.registerWebhook({ url: receiver.url, secret: 'ignored-by-lever' })).issued ?? {};
  });
  afterAll(async () => {
    await sandbox.close();
    await receiver.close();
  });

  const signedWith = (body: string, secret: string | undefined) => {
    const { token, triggeredAt, signature } = JSON.parse(body) as Record<string, string>;
    return secret !== undefined && hmacHex(secret, `${token}${triggeredAt}`) === signature;
  };

  it('issues one token per event type and signs each event with its own', async () => {
    expect(Object.keys(tokens).sort()).toEqual([
      'candidateArchiveChange',
      'candidateDeleted',
      'candidateHired',
      'candidateStageChange',
    ]);
    expect(tokens.candidateDeleted).not.toBe(tokens.candidateStageChange);
    const application = sandbox.addCandidate({ firstName: 'Cy', lastName: 'Doe', email: 'cy@example.com' });
    await sandbox.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    await sandbox.deleteCandidate(application.id);
    const [stage, deleted] = receiver.received.slice(-2).map((r) => r.body);
    expect(signedWith(stage as string, tokens.candidateStageChange)).toBe(true);
    expect(signedWith(stage as string, tokens.candidateDeleted)).toBe(false);
    expect(JSON.parse(deleted as string).event).toBe('candidateDeleted');
    expect(signedWith(deleted as string, tokens.candidateDeleted)).toBe(true);
  });

  it('reads a note back with its text in fields[].value, and answers 429 with no Retry-After', async () => {
    const application = sandbox.addCandidate({ firstName: 'Di', lastName: 'Eve', email: 'di@example.com' });
    const auth = { authorization: `Basic ${Buffer.from('lever-sandbox-key:').toString('base64')}` };
    const created = await fetch(`${sandbox.url}/v1/opportunities/${application.id}/notes?perform_as=u-1`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ value: 'Report [m-2]', secret: true }),
    });
    expect(created.status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const notes = await fetch(`${sandbox.url}/v1/opportunities/${application.id}/notes`, { headers: auth });
    const note = ((await notes.json()) as { data: Record<string, unknown>[] }).data[0];
    expect(note).toMatchObject({ fields: [{ type: 'note', value: 'Report [m-2]' }], secret: true });
    expect(note).not.toHaveProperty('value');
    // A token bucket of 3 a second, bursts to 6: full again after the wait, one taken by the read above.
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await fetch(`${sandbox.url}/v1/stages`, { headers: auth }));
    expect(answers.slice(0, 5).map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const refused = answers.find((a) => a.status === 429);
    expect(refused).toBeDefined();
    expect(refused?.headers.get('retry-after')).toBeNull();
  });
});

describe('Ashby sandbox: webhookActionId at the top level, shared by related deliveries; candidateDelete', () => {
  it('sends candidateStageChange and applicationUpdate with one webhookActionId, then candidateDelete', async () => {
    const sandbox = await startAshbySandbox({ port: 0 });
    const receiver = await startRecordingServer();
    try {
      await sandbox.registerWebhook({ url: receiver.url, secret: SECRET });
      const application = sandbox.addCandidate({ firstName: 'Ed', lastName: 'Fay', email: 'ed@example.com' });
      await sandbox.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
      await sandbox.deleteCandidate(application.id);
      const bodies = receiver.received
        .map((r) => JSON.parse(r.body) as { action: string; webhookActionId?: string; data: Record<string, unknown> })
        .filter((b) => b.action !== 'ping');
      expect(bodies.map((b) => b.action)).toEqual(['candidateStageChange', 'applicationUpdate', 'candidateDelete']);
      expect(bodies[0]?.webhookActionId).toBeDefined();
      expect(bodies[1]?.webhookActionId).toBe(bodies[0]?.webhookActionId);
      expect(bodies[2]?.data).toEqual({ candidate: { id: application.candidateId } });
    } finally {
      await sandbox.close();
      await receiver.close();
    }
  });
});

// A parameter the route does not document is refused in the vendor's own error form, never silently ignored: a
// filter the adapter believes in but the ATS ignores would list every record (ats-facts, Corrections 2026-11b).
describe('Lever, Workable and Ashby sandboxes refuse a query parameter their route does not document', () => {
  it('Lever: 400 BadRequestError naming the parameter; documented filters are served', async () => {
    const sandbox = await startLeverSandbox({ port: 0, rateLimit: 100 });
    const get = (path: string) =>
      fetch(`${sandbox.url}${path}`, {
        headers: { authorization: `Basic ${Buffer.from(`${sandbox.credentials.atsApiKey}:`).toString('base64')}` },
      });
    try {
      const refused = await get('/v1/opportunities?stage_id=s1&stage_name=AI%20Interview');
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({ code: 'BadRequestError', message: 'Unknown query parameter: stage_name' });
      expect((await get('/v1/opportunities?stage_id=s1&posting_id=p1&archived=false&limit=10')).status).toBe(200);
      expect((await get('/v1/stages?limit=5')).status).toBe(400);
    } finally {
      await sandbox.close();
    }
  });

  it('Workable: 422 with its error naming the parameter; documented filters are served', async () => {
    const sandbox = await startWorkableSandbox({ port: 0, rateLimit: 100 });
    const get = (path: string) =>
      fetch(`${sandbox.url}/spi/v3${path}`, { headers: { authorization: 'Bearer workable-sandbox-token' } });
    try {
      const refused = await get('/jobs?state=published&page=2');
      expect(refused.status).toBe(422);
      expect(await refused.json()).toEqual({ error: 'page is not a valid parameter' });
      expect((await get('/jobs?state=published&limit=100')).status).toBe(200);
      expect((await get('/candidates?shortcode=GROOV005&stage=ai-interview')).status).toBe(200);
      expect((await get('/candidates?job=GROOV005')).status).toBe(422);
    } finally {
      await sandbox.close();
    }
  });

  it('Ashby: its RPC routes take no query string, refused as HTTP 200 with success false', async () => {
    const sandbox = await startAshbySandbox({ port: 0 });
    const post = (path: string) =>
      fetch(`${sandbox.url}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${sandbox.credentials.atsApiKey}:`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ status: ['Open'] }),
      });
    try {
      const refused = await post('/job.list?status=Open');
      expect(refused.status).toBe(200);
      expect(await refused.json()).toEqual({
        success: false,
        errors: [{ message: 'Unknown parameter status', parameter: 'status' }],
      });
      expect(await (await post('/job.list')).json()).toMatchObject({ success: true });
    } finally {
      await sandbox.close();
    }
  });
});

describe('Greenhouse sandbox: one rate window per API credential, whatever tokens it was given', () => {
  it('counts two tokens of one client id against the same window', async () => {
    // A window of an hour: the test's five requests fall in one.
    const sandbox = await startGreenhouseSandbox({ port: 0, rateLimit: 4, rateWindowMs: 3_600_000 });
    const token = async () => ((await (await requestToken(sandbox)).json()) as { access_token: string }).access_token;
    try {
      const tokens = [await token(), await token()];
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const answer = await fetch(`${sandbox.url}/v3/jobs?per_page=1`, {
          headers: { authorization: `Bearer ${tokens[i % 2]}` },
        });
        statuses.push(answer.status);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
      expect(sandbox.state.throttled).toBe(1);
    } finally {
      await sandbox.close();
    }
  });
});
