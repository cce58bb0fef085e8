import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startAshbySandbox } from '../../../infra/local/sandbox/ats/ashby/server';
import type { AtsSandbox, SandboxOptions } from '../../../infra/local/sandbox/ats/ats-sandbox-kit';
import { type GreenhouseSandbox, startGreenhouseSandbox } from '../../../infra/local/sandbox/ats/greenhouse/server';
import { startLeverSandbox } from '../../../infra/local/sandbox/ats/lever/server';
import { startWorkableSandbox } from '../../../infra/local/sandbox/ats/workable/server';
import { undocumentedCalls } from '../../../infra/local/sandbox/documented-routes';
import { textPdf } from '../../../infra/local/sandbox/interview-service/report.pdf';

// The report PDF as a file on the candidate's record: each sandbox takes it as its vendor documents
// (../shared/spec/ats-routes.md, "The report PDF as a file"), keeps the bytes, serves them back from its control
// routes, and refuses what the vendor refuses. Checked over HTTP, with no adapter.

const PDF = textPdf('AI interview report r0upload', ['AI match score: 88 / 100']);
const basic = (key: string) => ({ authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` });
type Listed = { id: string; owner: string; name: string; size: number; contentType: string; url: string };

/** The files a sandbox's control route lists for an application, candidate or opportunity. */
async function filesOf(sandboxUrl: string, owner: string): Promise<Listed[]> {
  return ((await (await fetch(`${sandboxUrl}/_sandbox/files?owner=${owner}`)).json()) as { files: Listed[] }).files;
}

/** The bytes a listed file's URL serves, and their type. */
async function served(url: string): Promise<{ type: string | null; bytes: Buffer }> {
  const answer = await fetch(url);
  return { type: answer.headers.get('content-type'), bytes: Buffer.from(await answer.arrayBuffer()) };
}

const refuseUploads = (sandboxUrl: string, count: number) =>
  fetch(`${sandboxUrl}/_sandbox/refuse-uploads`, { method: 'POST', body: JSON.stringify({ count }) });

/** A kit sandbox on a free port with one candidate: the sandbox, and the candidate's application id. */
async function withCandidate(start: (options: SandboxOptions) => Promise<AtsSandbox>, firstName: string) {
  const sandbox = await start({ port: 0, rateLimit: 1000 });
  const email = `${firstName.toLowerCase()}@example.com`;
  return { sandbox, id: sandbox.addCandidate({ firstName, lastName: 'Doe', email }).id };
}

describe('Greenhouse sandbox: POST /v3/attachments as JSON, listed by GET /v3/attachments', () => {
  let sandbox: GreenhouseSandbox;
  let token = '';
  let applicationId = 0;
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${sandbox.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const attachment = (fields: Record<string, unknown> = {}) => ({
    ...{ application_id: applicationId, filename: 'AI interview report.pdf', type: 'other' },
    ...{ content: PDF.toString('base64'), visibility: 'admin_only', ...fields },
  });

  beforeAll(async () => {
    sandbox = await startGreenhouseSandbox({ port: 0, rateLimit: 1000 });
    const credentials = Buffer.from(`${sandbox.clientId}:${sandbox.clientSecret}`).toString('base64');
    const answer = await fetch(`${sandbox.url}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${credentials}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    token = ((await answer.json()) as { access_token: string }).access_token;
    applicationId = Number(sandbox.addCandidate({ firstName: 'Kemi', lastName: 'A', email: 'k@example.com' }).id);
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('attaches base64 content (201, the attachment) and serves the bytes back', async () => {
    const created = await call('POST', '/v3/attachments', attachment());
    expect(created.status).toBe(201);
    const body = (await created.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      ...{ id: expect.any(Number), application_id: applicationId, filename: 'AI interview report.pdf' },
      ...{ type: 'other', url: expect.stringContaining(sandbox.url), created_at: expect.any(String) },
    });
    expect(await served(body.url as string)).toEqual({ type: 'application/pdf', bytes: PDF });
    const [listed] = await filesOf(sandbox.url, String(applicationId));
    expect(listed).toMatchObject({ name: 'AI interview report.pdf', size: PDF.length, contentType: 'application/pdf' });
    expect((await served(listed?.url as string)).bytes.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('downloads a public url once, as Greenhouse does for a url instead of content', async () => {
    const [first] = await filesOf(sandbox.url, String(applicationId));
    const fields = { content: undefined, url: first?.url, filename: 'AI interview report (link).pdf' };
    const created = await call('POST', '/v3/attachments', attachment(fields));
    expect(created.status).toBe(201);
    expect((await served(((await created.json()) as { url: string }).url)).bytes).toEqual(PDF);
  });

  it('lists by application_ids and type, pages by the Link header, and refuses an undocumented filter', async () => {
    const other = await call('GET', `/v3/attachments?application_ids=${applicationId}&type=other`);
    const listed = (await other.json()) as { application_id: number; filename: string }[];
    expect(listed.map((a) => a.filename)).toEqual(['AI interview report.pdf', 'AI interview report (link).pdf']);
    expect(await (await call('GET', `/v3/attachments?application_ids=${applicationId}&type=resume`)).json()).toEqual(
      [],
    );
    const first = await call('GET', `/v3/attachments?application_ids=${applicationId}&per_page=1`);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1] as string;
    const second = (await (await call('GET', new URL(next).pathname + new URL(next).search)).json()) as unknown[];
    expect(second).toHaveLength(1);
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const since = (op: string) =>
      call('GET', `/v3/attachments?application_ids=${applicationId}&created_at=${op}|${hourAgo}`);
    expect(await (await since('gte')).json()).toHaveLength(2);
    expect(await (await since('lt')).json()).toEqual([]);
    expect((await call('GET', `/v3/attachments?application_id=${applicationId}`)).status).toBe(422);
  });

  it.each([
    ['no application_id', { application_id: undefined }, 'application_id'],
    ['an unknown application', { application_id: 1 }, 'application_id'],
    ['no filename', { filename: undefined }, 'filename'],
    ['both content and url', { url: 'https://files.example.com/r.pdf' }, 'content'],
    ['neither content nor url', { content: undefined }, 'content'],
    ['a type outside the enum', { type: 'report' }, 'type'],
    ['a blocklisted .exe', { filename: 'report.exe' }, 'filename'],
    ['a blocklisted .html', { filename: 'report.html' }, 'filename'],
    ['content that is not base64', { content: 'not base64!' }, 'content'],
    ['a visibility outside the enum', { visibility: 'everyone' }, 'visibility'],
  ])('refuses %s with 422 naming the field', async (_what, fields, field) => {
    const refused = await call('POST', '/v3/attachments', attachment(fields));
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { errors: { field: string }[] }).errors[0]?.field).toBe(field);
  });

  it('refuses the next uploads with 422 when told, then takes them again', async () => {
    expect(await (await refuseUploads(sandbox.url, 1)).json()).toEqual({ refusing: 1 });
    const refused = await call('POST', '/v3/attachments', attachment({ filename: 'refused.pdf' }));
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({ message: 'Validation error', errors: [{ field: 'content' }] });
    expect((await call('POST', '/v3/attachments', attachment({ filename: 'taken.pdf' }))).status).toBe(201);
    expect((await filesOf(sandbox.url, String(applicationId))).map((f) => f.name)).not.toContain('refused.pdf');
    expect(undocumentedCalls('greenhouse', Object.values(sandbox.state.calls))).toEqual([
      'greenhouse GET /v3/attachments: undocumented query parameter application_id',
    ]);
  });
});

describe('Ashby sandbox: a presigned upload, then candidate.uploadFile, seen in candidate.info', () => {
  let sandbox: AtsSandbox;
  let application: { id: string; candidateId: string };
  const rpc = async (method: string, body: unknown) => {
    const answer = await fetch(`${sandbox.url}/${method}`, {
      method: 'POST',
      headers: { ...basic(sandbox.credentials.atsApiKey as string), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(answer.status).toBe(200);
    return (await answer.json()) as { success: boolean; results?: Record<string, unknown>; errors?: unknown[] };
  };
  type Handle = { handle: string; url: string; fields: Record<string, string> };
  const createHandle = async (contentLength = PDF.length) =>
    (await rpc('file.createFileUploadHandle', {
      ...{ fileUploadContext: 'CandidateFiles', filename: 'AI interview report.pdf' },
      ...{ contentType: 'application/pdf', contentLength },
    })) as { success: true; results: Handle };
  /** The S3-style POST: the fields as given (`edit` changes them), then the file last as `file`. */
  const upload = (target: Handle, bytes: Buffer = PDF, edit = (fields: Record<string, string>) => fields) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(edit({ ...target.fields }))) form.append(name, value);
    form.append('file', new Blob([bytes], { type: 'application/pdf' }), 'AI interview report.pdf');
    return fetch(target.url, { method: 'POST', body: form });
  };

  beforeAll(async () => {
    sandbox = await startAshbySandbox({ port: 0 });
    application = sandbox.addCandidate({ firstName: 'Ed', lastName: 'Fay', email: 'ed@example.com' });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('takes the bytes at the storage URL (204) and puts them on the candidate, listed in fileHandles', async () => {
    const { results } = await createHandle();
    expect(results.url).toBe(`${sandbox.url}/_storage/upload`);
    expect(Object.keys(results.fields)).toEqual(expect.arrayContaining(['key', 'policy']));
    const stored = await upload(results);
    expect(stored.status).toBe(204);
    const attached = await rpc('candidate.uploadFile', {
      candidateId: application.candidateId,
      fileHandle: results.handle,
    });
    expect(attached).toMatchObject({ success: true, results: { id: application.candidateId } });
    const info = await rpc('candidate.info', { id: application.candidateId });
    expect(info.results?.fileHandles).toEqual([
      { id: expect.any(String), name: 'AI interview report.pdf', handle: expect.any(String) },
    ]);
    // Files are the candidate's; the control route finds them by the application too.
    const [listed] = await filesOf(sandbox.url, application.id);
    expect(listed).toMatchObject({ owner: application.candidateId, size: PDF.length, contentType: 'application/pdf' });
    expect((await served(listed?.url as string)).bytes).toEqual(PDF);
    expect(sandbox.filesOf(application.id)).toHaveLength(1);
  });

  it.each([
    ['a field changed', 403, (f: Record<string, string>) => ({ ...f, 'x-amz-signature': '00' })],
    ['a field left out', 403, ({ policy: _left, ...f }: Record<string, string>) => f],
    ['a size other than contentLength', 400, undefined, Buffer.concat([PDF, Buffer.from('\n')])],
  ])('refuses an upload with %s (%i)', async (_what, status, edit, bytes: Buffer = PDF) => {
    const { results } = await createHandle();
    const refused = await upload(results, bytes, edit);
    expect(refused.status).toBe(status);
    const attached = await rpc('candidate.uploadFile', {
      candidateId: application.candidateId,
      fileHandle: results.handle,
    });
    expect(attached).toMatchObject({ success: false });
  });

  it('refuses an upload after the presigned URL expired (10 minutes)', async () => {
    const { results } = await createHandle();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 10 * 60_000 + 1000);
    expect((await upload(results)).status).toBe(403);
  });

  it('answers errors as success false in a 200: an unknown handle or candidate, a bad body, a refusal', async () => {
    const { results } = await createHandle();
    expect((await upload(results)).status).toBe(204);
    const candidateId = application.candidateId;
    expect(await rpc('candidate.uploadFile', { candidateId, fileHandle: 'nope' })).toMatchObject({ success: false });
    const unknown = await rpc('candidate.uploadFile', { candidateId: 'nobody', fileHandle: results.handle });
    expect(unknown).toEqual({ success: false, errors: ['candidate_not_found'] });
    const bad = await rpc('file.createFileUploadHandle', { fileUploadContext: 'Reports', filename: 'r.pdf' });
    expect(bad).toMatchObject({ success: false });
    expect(await (await refuseUploads(sandbox.url, 1)).json()).toEqual({ refusing: 1 });
    const refused = await rpc('candidate.uploadFile', { candidateId, fileHandle: results.handle });
    expect(refused).toEqual({ success: false, errors: ['file_upload_failed'] });
    expect(await rpc('candidate.uploadFile', { candidateId, fileHandle: results.handle })).toMatchObject({
      success: true,
    });
    expect(undocumentedCalls('ashby', sandbox.calls())).toEqual([]);
  });
});

describe('Lever sandbox: POST /v1/opportunities/{id}/files as multipart, listed by its GET', () => {
  let sandbox: AtsSandbox;
  let opportunityId = '';
  const auth = () => basic(sandbox.credentials.atsApiKey as string);
  const post = (bytes: Buffer, { part = 'file', query = '?perform_as=lever-user-1' } = {}) => {
    const form = new FormData();
    form.append(part, new Blob([bytes], { type: 'application/pdf' }), 'AI interview report.pdf');
    return fetch(`${sandbox.url}/v1/opportunities/${opportunityId}/files${query}`, {
      ...{ method: 'POST', headers: auth(), body: form },
    });
  };

  beforeAll(async () => {
    ({ sandbox, id: opportunityId } = await withCandidate(startLeverSandbox, 'Cy'));
  });
  afterAll(() => sandbox.close());

  it('takes one binary part named file (201) and lists it with hasNext false', async () => {
    const created = await post(PDF);
    expect(created.status).toBe(201);
    const { data } = (await created.json()) as { data: Record<string, unknown> };
    expect(data).toEqual({
      ...{ id: expect.any(String), downloadUrl: expect.any(String), ext: 'pdf', name: 'AI interview report.pdf' },
      ...{ uploadedAt: expect.any(Number), status: 'processed', size: PDF.length },
    });
    expect(await served(data.downloadUrl as string)).toEqual({ type: 'application/pdf', bytes: PDF });
    const listed = await fetch(`${sandbox.url}/v1/opportunities/${opportunityId}/files`, { headers: auth() });
    expect(await listed.json()).toEqual({ data: [data], hasNext: false });
    expect((await filesOf(sandbox.url, opportunityId)).map((f) => f.size)).toEqual([PDF.length]);
  });

  it.each([
    ['no perform_as', { query: '' }, 400],
    ['no part named file', { part: 'resume' }, 400],
  ])('refuses %s', async (_what, options, status) => {
    expect((await post(PDF, options)).status).toBe(status);
  });

  it('refuses a file over 30 MB with 413, and the next uploads when told', async () => {
    const tooLarge = await post(Buffer.alloc(30 * 1024 * 1024 + 1, 0x20));
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toEqual({ code: 'RequestEntityTooLarge', message: 'File exceeds 30 MB' });
    await refuseUploads(sandbox.url, 2);
    expect([(await post(PDF)).status, (await post(PDF)).status, (await post(PDF)).status]).toEqual([413, 413, 201]);
    expect(await filesOf(sandbox.url, opportunityId)).toHaveLength(2);
    expect(undocumentedCalls('lever', sandbox.calls())).toEqual([]);
  });
});

describe('Workable sandbox: a comment carrying one base64 attachment', () => {
  let sandbox: AtsSandbox;
  let candidateId = '';
  const comment = (fields: Record<string, unknown>) =>
    fetch(`${sandbox.url}/spi/v3/candidates/${candidateId}/comments`, {
      method: 'POST',
      headers: { authorization: 'Bearer workable-sandbox-token', 'content-type': 'application/json' },
      body: JSON.stringify({ member_id: 'workable-member-1', comment: fields }),
    });
  const attached = { name: 'AI interview report.pdf', data: PDF.toString('base64') };

  beforeAll(async () => {
    ({ sandbox, id: candidateId } = await withCandidate(startWorkableSandbox, 'Bo'));
  });
  afterAll(() => sandbox.close());

  it('records the attachment (201, empty body); the activity shows the comment body only', async () => {
    const created = await comment({ body: 'AI interview report: AI interview report.pdf', attachment: attached });
    expect(created.status).toBe(201);
    expect(await created.text()).toBe('');
    const [listed] = await filesOf(sandbox.url, candidateId);
    expect(listed).toMatchObject({ name: 'AI interview report.pdf', size: PDF.length, contentType: 'application/pdf' });
    expect((await served(listed?.url as string)).bytes).toEqual(PDF);
    const activities = await fetch(`${sandbox.url}/spi/v3/candidates/${candidateId}/activities?actions=comment`, {
      headers: { authorization: 'Bearer workable-sandbox-token' },
    });
    const [activity] = ((await activities.json()) as { activities: Record<string, unknown>[] }).activities;
    expect(activity).toMatchObject({ action: 'comment', body: 'AI interview report: AI interview report.pdf' });
    expect(activity).not.toHaveProperty('attachment');
  });

  it.each([
    ['a list of attachments', [attached]],
    ['no name', { data: attached.data }],
    ['data that is not base64', { name: 'r.pdf', data: '%PDF-1.4' }],
  ])('refuses an attachment with %s (422), and the comment with it', async (_what, attachment) => {
    const notes = sandbox.notesOf(candidateId).length;
    expect((await comment({ body: 'Report', attachment })).status).toBe(422);
    expect(sandbox.notesOf(candidateId)).toHaveLength(notes);
  });

  it('refuses the next uploads with 422 when told; a comment without a file is no upload', async () => {
    await refuseUploads(sandbox.url, 1);
    expect((await comment({ body: 'No file' })).status).toBe(201);
    const refused = await comment({ body: 'With file', attachment: attached });
    expect(refused.status).toBe(422);
    expect(await refused.json()).toEqual({ error: 'comment.attachment could not be saved' });
    expect((await comment({ body: 'With file', attachment: attached })).status).toBe(201);
    expect(await filesOf(sandbox.url, candidateId)).toHaveLength(2);
    expect(undocumentedCalls('workable', sandbox.calls())).toEqual([]);
  });
});
