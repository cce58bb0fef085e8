import { spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { waitFor } from '../../helpers/local-http';
import { emailsTo, invitedInterviewId, startTestStack, scanTable, takeInterview } from '../../helpers/local-stack';

const WORK_DIR = `.local/test-privacy-${process.pid}`;

describe('Privacy, isolation and operator tools on the local stack', () => {
  let stack: LocalStack;
  // Asynchronous: the local SQS emulator and gateway run in this process and must keep answering the CLI.
  const ops = (...args: string[]) =>
    new Promise<{ status: number | null; out: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'infra/cli/ops/main.ts', ...args, '--stack', stack.stackFile],
        { timeout: 60_000 },
      );
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('close', (status) => resolve({ status, out }));
    });
  const secretsOf = (id: string) => stack.secrets[stack.connections.find((c) => c.id === id)!.secretRef]!;
  const ghSign = (secret: string, body: string) => `sha256 ${createHmac('sha256', secret).update(body).digest('hex')}`;
  const post = (connection: string, body: string, headers: Record<string, string>) =>
    fetch(`${stack.gatewayUrl}/webhooks/ats/${connection}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  /** Records mentioning any needle, besides the deletion tombstones (which hold the ATS's candidate id alone). */
  const holds = async (needles: string[]) => {
    const items = [
      ...(await scanTable(stack, stack.tables.applications)),
      ...(await scanTable(stack, stack.tables.events)),
      ...(await scanTable(stack, stack.tables.jobs)),
    ].filter((item) => item.kind !== 'candidate-deleted');
    return items.filter((item) => needles.some((n) => JSON.stringify(item).includes(n)));
  };
  const tombstoneOf = async (connectionId: string, atsCandidateId: string) =>
    (await scanTable(stack, stack.tables.events)).find((e) => e.pk === `deleted#${connectionId}#${atsCandidateId}`);

  beforeAll(async () => {
    // Two Greenhouse customers beside the demo connections, to show one's secret opens nothing of the other's.
    mkdirSync(WORK_DIR, { recursive: true });
    const config = JSON.parse(readFileSync('config/connections.local.json', 'utf8'));
    // It shares the Greenhouse sandbox here, so it triggers on a stage no candidate enters.
    const second = JSON.parse(JSON.stringify(config.connections[0]));
    second.triggers[0].stage = { name: 'Never Entered' };
    config.connections.push({ ...second, id: 'second-greenhouse', secretRef: 'connector/second-greenhouse' });
    writeFileSync(join(WORK_DIR, 'connections.template.json'), JSON.stringify(config));
    stack = await startTestStack(WORK_DIR, { configPath: join(WORK_DIR, 'connections.template.json') });
  });
  afterAll(async () => {
    await stack?.stop();
    rmSync(WORK_DIR, { recursive: true, force: true });
  });

  it("refuses a webhook signed with connection A's secret when it is sent to connection B", async () => {
    const body = JSON.stringify({ action: 'ping', payload: {} });
    expect(
      (
        await post('second-greenhouse', body, {
          signature: ghSign(secretsOf('demo-greenhouse').atsWebhookSecret as string, body),
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await post('second-greenhouse', body, {
          signature: ghSign(secretsOf('second-greenhouse').atsWebhookSecret as string, body),
        })
      ).status,
    ).toBe(200);
    const report = JSON.stringify({
      event: 'interview_report.created',
      data: { report_id: 'r', interview_id: 'i', candidate_id: 'c' },
    });
    const wrongToken = await fetch(
      `${stack.gatewayUrl}/webhooks/interview/second-greenhouse/${secretsOf('demo-greenhouse').interviewWebhookToken}`,
      { method: 'POST', body: report },
    );
    expect(wrongToken.status).toBe(401);
  });

  it("purges a Greenhouse candidate's records on delete_candidate", async () => {
    const email = `purge-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = stack.ats.greenhouse.addCandidate({ firstName: 'Pia', lastName: 'Purge', email });
    await stack.ats.greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    await invitedInterviewId(stack, email);
    await stack.waitForQuiet();
    expect(await holds([email])).toHaveLength(1);
    const body = JSON.stringify({
      action: 'delete_candidate',
      payload: {
        person: {
          id: Number(application.candidateId),
          first_name: 'Pia',
          deleted_application_ids: [Number(application.id)],
        },
      },
    });
    const answer = await post('demo-greenhouse', body, {
      signature: ghSign(secretsOf('demo-greenhouse').atsWebhookSecret as string, body),
      'greenhouse-event-id': randomUUID(),
    });
    expect(answer.status).toBe(200);
    // The purge deletes the applications, then the queue ledger's records of their stage changes: it is done when
    // nothing holds the e-mail or either id.
    const traces = [email, `#${application.id}`, `#${application.candidateId}`];
    await waitFor(async () => (await holds(traces)).length === 0, 20_000, 'the purge');
    expect(await holds(traces)).toEqual([]);
    const tombstone = await tombstoneOf('demo-greenhouse', application.candidateId);
    expect(Object.keys(tombstone ?? {}).sort()).toEqual(['connectionId', 'deletedAt', 'expiresAt', 'kind', 'pk']);
  });

  it.each([
    ['merge_candidate', (id: number) => stack.greenhouse.mergeCandidate(id)],
    ['candidate_anonymized', (id: number) => stack.greenhouse.anonymizeCandidate(id)],
  ] as const)(
    'purges a Greenhouse candidate on %s, sent by the sandbox as Greenhouse sends it',
    async (action, send) => {
      const email = `gh-${action.slice(0, 5)}-${randomUUID().slice(0, 8)}@candidates.example.com`;
      const application = stack.ats.greenhouse.addCandidate({ firstName: 'Mo', lastName: 'Merge', email });
      await stack.ats.greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
      await invitedInterviewId(stack, email);
      await stack.waitForQuiet();
      expect(await holds([email])).toHaveLength(1);
      const deliveries = await send(Number(application.id));
      expect(deliveries.filter((d) => d.url.endsWith('/demo-greenhouse')).map((d) => d.status)).toEqual([200]);
      await waitFor(async () => (await holds([email])).length === 0, 20_000, `the purge after ${action}`);
      expect(await tombstoneOf('demo-greenhouse', application.candidateId)).toBeDefined();
    },
  );

  it("purges an Ashby candidate's records on candidateDelete", async () => {
    const email = `purge-${randomUUID().slice(0, 8)}+ashby@candidates.example.com`;
    const application = stack.ats.ashby.addCandidate({ firstName: 'Ada', lastName: 'Purge', email });
    await stack.ats.ashby.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    await invitedInterviewId(stack, email);
    await stack.waitForQuiet();
    expect(await holds([email])).toHaveLength(1);
    await stack.ats.ashby.deleteCandidate(application.id);
    await waitFor(async () => (await holds([email])).length === 0, 20_000, 'the purge');
    expect(await tombstoneOf('demo-ashby', application.candidateId)).toBeDefined();
  });

  it("purges a Lever candidate's records on candidateDeleted", async () => {
    const email = `purge-${randomUUID().slice(0, 8)}+lever@candidates.example.com`;
    const application = stack.ats.lever.addCandidate({ firstName: 'Leo', lastName: 'Purge', email });
    await stack.ats.lever.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    await invitedInterviewId(stack, email);
    await stack.waitForQuiet();
    expect(await holds([email])).toHaveLength(1);
    // Lever sends candidateDeleted signed with that webhook's own token (not the stage-change one), over its
    // token only: the connector purges once Lever's API agrees.
    await stack.ats.lever.deleteCandidate(application.id);
    expect(stack.lever.state.deliveries.filter((d) => d.action === 'deleted').at(-1)?.status).toBe(200);
    await waitFor(async () => (await holds([email])).length === 0, 20_000, 'the purge');
    expect(await holds([email, application.id, application.candidateId])).toEqual([]);
    expect(await tombstoneOf('demo-lever', application.candidateId)).toBeDefined();
  });

  it("ops urls: each connection's webhook URLs from the stack's address, the token never printed", async () => {
    const listed = await ops('urls', '--connections', join(WORK_DIR, 'connections.json'));
    expect(listed.status).toBe(0);
    for (const connection of stack.connections) {
      expect(listed.out).toContain(
        `${connection.id} (${connection.ats}): ${stack.gatewayUrl}/webhooks/ats/${connection.id}`,
      );
      expect(listed.out).toContain(`${stack.gatewayUrl}/webhooks/interview/${connection.id}/<interviewWebhookToken>`);
      expect(listed.out).not.toContain(stack.secrets[connection.secretRef]!.interviewWebhookToken);
    }
  });

  it('ops: status, unmatched, match and purge', async () => {
    const email = `ops-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = stack.ats.greenhouse.addCandidate({ firstName: 'Oli', lastName: 'Ops', email });
    await stack.ats.greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const interviewId = await invitedInterviewId(stack, email);
    await stack.waitForQuiet();
    const status = await ops('status', '--connection', 'demo-greenhouse', '--application', application.id);
    expect(status.status).toBe(0);
    expect(status.out).toMatch(new RegExp(`application ${application.id} .*: invited`));
    expect(status.out).not.toContain(email);

    // The candidate took the interview under another address: the report is parked, then matched by hand.
    const { report_id: reportId } = takeInterview(stack, interviewId, { name: 'Oli Ops', email: `other-${email}` });
    await waitFor(
      async () => (await ops('unmatched', '--connection', 'demo-greenhouse')).out.includes(reportId),
      60_000,
      'the parked report',
    );
    expect((await ops('unmatched')).out).toContain('no application has this interview and candidate e-mail');
    const matched = await ops(
      'match',
      '--connection',
      'demo-greenhouse',
      '--report',
      reportId,
      '--application',
      application.id,
    );
    expect(matched.status).toBe(0);
    await waitFor(
      () => stack.ats.greenhouse.notesOf(application.id).some((n) => n.includes(`ai-interview-report:${reportId}`)),
      60_000,
      'the matched write-back',
    );
    await waitFor(
      async () => !(await ops('unmatched', '--connection', 'demo-greenhouse')).out.includes(reportId),
      60_000,
      'the report leaving the parked list',
    );
    expect((await ops('status', '--connection', 'demo-greenhouse', '--application', application.id)).out).toContain(
      'written_back',
    );

    const purged = await ops('purge', '--connection', 'demo-greenhouse', '--candidate', application.candidateId);
    expect(purged.out).toContain('1 application record(s) deleted');
    expect(await holds([email])).toEqual([]);
    expect((await ops('status', '--connection', 'demo-greenhouse', '--application', application.id)).status).toBe(2);
  }, 180_000);

  it('ops: lists a candidate refused for good; invites them once fixed and back in the stage', async () => {
    const greenhouse = stack.ats.greenhouse;
    const email = `refused-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = greenhouse.addCandidate({ firstName: 'Ren', lastName: 'Refused', email });
    // The key lost its permission for notes: the e-mail goes out, the invite note is refused for good.
    greenhouse.setFaults({ rate403: 1 });
    try {
      await greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
      await waitFor(
        async () =>
          (await ops('failed', '--connection', 'demo-greenhouse')).out.includes(`application ${application.id} `),
        60_000,
        'the failed application',
      );
    } finally {
      greenhouse.setFaults({ rate403: 0 });
    }
    const listed = await ops('failed', '--connection', 'demo-greenhouse');
    expect(listed.status).toBe(0);
    expect(listed.out).toMatch(new RegExp(`application ${application.id} .*\\(invite\\).*ats-forbidden`));
    expect(listed.out).not.toContain(email);

    // Fixed; the recruiter moves the candidate out of the stage and back in.
    await greenhouse.moveCandidate({ applicationId: application.id, stageName: 'Application Review' });
    await greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    await waitFor(
      () => greenhouse.notesOf(application.id).some((n) => n.includes('ai-interview-invite:')),
      60_000,
      'the invite note',
    );
    await stack.waitForQuiet();
    expect(greenhouse.notesOf(application.id).filter((n) => n.includes('ai-interview-invite:'))).toHaveLength(1);
    expect(await emailsTo(stack, email)).toHaveLength(1);
    expect((await ops('status', '--connection', 'demo-greenhouse', '--application', application.id)).out).toMatch(
      new RegExp(`application ${application.id} .*: invited`),
    );
    expect((await ops('failed', '--connection', 'demo-greenhouse')).out).not.toContain(
      `application ${application.id} `,
    );
  }, 180_000);

  it('ops: writes back again, once, a report the ATS refused for good, after the cause is fixed', async () => {
    const greenhouse = stack.ats.greenhouse;
    const email = `refused-wb-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = greenhouse.addCandidate({ firstName: 'Wes', lastName: 'Refused', email });
    await greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const interviewId = await invitedInterviewId(stack, email);
    await stack.waitForQuiet();
    greenhouse.setFaults({ rate403: 1 });
    let reportId = '';
    try {
      ({ report_id: reportId } = stack.interview.completeInterview({
        interview_id: interviewId,
        candidate_name: 'Wes Refused',
        candidate_email: email,
        ai_match_score: 90,
        proctoring_violations: 0,
        delay_ms: 0,
      }));
      await waitFor(
        async () =>
          (await ops('failed', '--connection', 'demo-greenhouse')).out.includes(`application ${application.id} `),
        60_000,
        'the failed write-back',
      );
    } finally {
      greenhouse.setFaults({ rate403: 0 });
    }
    expect((await ops('failed', '--connection', 'demo-greenhouse')).out).toMatch(
      new RegExp(`application ${application.id} .*report ${reportId} \\(write-back\\).*ats-forbidden`),
    );
    expect(greenhouse.notesOf(application.id).filter((n) => n.includes('ai-interview-report:'))).toEqual([]);

    const retried = await ops('retry', '--connection', 'demo-greenhouse', '--application', application.id);
    expect(retried.status).toBe(0);
    expect(retried.out).toContain(`report ${reportId} queued for write-back again`);
    await waitFor(
      () => greenhouse.stageNameOf(application.id) === 'Hiring Manager Review',
      60_000,
      'the retried write-back and its stage move',
    );
    await stack.waitForQuiet();
    expect(
      greenhouse.notesOf(application.id).filter((n) => n.includes(`ai-interview-report:${reportId}`)),
    ).toHaveLength(1);
    expect((await ops('status', '--connection', 'demo-greenhouse', '--application', application.id)).out).toContain(
      ': written_back',
    );
    // Nothing is failed any more: a second retry is refused and changes nothing.
    expect((await ops('retry', '--connection', 'demo-greenhouse', '--application', application.id)).status).toBe(2);
  }, 180_000);

  it('ops: lists a DLQ and redrives it', async () => {
    await stack.sqs.send(
      new SendMessageCommand({
        QueueUrl: stack.queues.report.dlqUrl,
        MessageBody: JSON.stringify({
          v: 1,
          kind: 'report-created',
          connectionId: 'demo-greenhouse',
          reportId: 'r-dlq',
        }),
      }),
    );
    const listed = await ops('dlq', 'list', '--queue', 'report');
    expect(listed.out).toContain('1 message(s) in the report DLQ');
    expect(listed.out).toContain('report-created connection=demo-greenhouse report=r-dlq');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const redriven = await ops('dlq', 'redrive', '--queue', 'report');
    expect(redriven.status).toBe(0);
    expect(redriven.out).toContain('1 message(s) moved back to the report queue');
    await stack.waitForQuiet();
    expect((await stack.dlqDepths()).report).toBe(0);
    expect((await ops('nonsense')).status).toBe(2);
  }, 120_000);
});
