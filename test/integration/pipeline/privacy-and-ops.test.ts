import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { waitFor } from '../../helpers/local-http';
import { runOps, runOpsAsTyped } from '../../helpers/ops-cli';
import { invitedInterviewId, startTestStack, scanTable, takeInterview } from '../../helpers/local-stack';

const WORK_DIR = `.local/test-privacy-${process.pid}`;

describe('Privacy, isolation and operator tools on the local stack', () => {
  let stack: LocalStack;
  const ops = (...args: string[]) => runOps(stack, ...args);
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
    ['merge_candidate', (id: string) => stack.greenhouse.mergeCandidate(id)],
    ['candidate_anonymized', (id: string) => stack.greenhouse.anonymizeCandidate(id)],
  ] as const)(
    'purges a Greenhouse candidate on %s, sent by the sandbox as Greenhouse sends it',
    async (action, send) => {
      const email = `gh-${action.slice(0, 5)}-${randomUUID().slice(0, 8)}@candidates.example.com`;
      const application = stack.ats.greenhouse.addCandidate({ firstName: 'Mo', lastName: 'Merge', email });
      await stack.ats.greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
      await invitedInterviewId(stack, email);
      await stack.waitForQuiet();
      expect(await holds([email])).toHaveLength(1);
      // A merge moves the application to the record that stays: the tombstone is the merged-away candidate's.
      const { candidateId } = application;
      const deliveries = await send(application.id);
      expect(deliveries.filter((d) => d.url.endsWith('/demo-greenhouse')).map((d) => d.status)).toEqual([200]);
      await waitFor(async () => (await holds([email])).length === 0, 20_000, `the purge after ${action}`);
      expect(await tombstoneOf('demo-greenhouse', candidateId)).toBeDefined();
    },
  );

  /** A candidate of `kind` moved into the stage and invited, whose records the store holds now. */
  const invitedCandidate = async (kind: 'ashby' | 'lever', firstName: string) => {
    const email = `purge-${randomUUID().slice(0, 8)}+${kind}@candidates.example.com`;
    const application = stack.ats[kind].addCandidate({ firstName, lastName: 'Purge', email });
    await stack.ats[kind].moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    await invitedInterviewId(stack, email);
    await stack.waitForQuiet();
    expect(await holds([email])).toHaveLength(1);
    return { email, application };
  };

  it("purges an Ashby candidate's records on candidateDelete", async () => {
    const { email, application } = await invitedCandidate('ashby', 'Ada');
    await stack.ats.ashby.deleteCandidate(application.id);
    await waitFor(async () => (await holds([email])).length === 0, 20_000, 'the purge');
    expect(await tombstoneOf('demo-ashby', application.candidateId)).toBeDefined();
  });

  it("purges a Lever candidate's records on candidateDeleted", async () => {
    const { email, application } = await invitedCandidate('lever', 'Leo');
    // Lever sends candidateDeleted signed with that webhook's own token (not the stage-change one), over its
    // token only: the connector purges once Lever's API agrees.
    await stack.ats.lever.deleteCandidate(application.id);
    expect(stack.lever.state.deliveries.filter((d) => d.action === 'deleted').at(-1)?.status).toBe(200);
    // The purge deletes the application records (the e-mail with them), then the queue ledger's: waited for whole.
    const held = () => holds([email, application.id, application.candidateId]);
    await waitFor(async () => (await held()).length === 0, 20_000, 'the purge');
    expect(await held()).toEqual([]);
    expect(await tombstoneOf('demo-lever', application.candidateId)).toBeDefined();
  });

  it("ops urls: each connection's webhook URLs from the stack's address, the token never printed", async () => {
    // As a user types it, through tsx: every other command here runs the same source bundled.
    const listed = await runOpsAsTyped(stack, 'urls', '--connections', join(WORK_DIR, 'connections.json'));
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

    // A second report parked for the same candidate is not matched to the application written back already: the
    // worker would drop it, so the command refuses and the report stays parked.
    const { report_id: second } = takeInterview(stack, interviewId, { name: 'Oli Ops', email: `third-${email}` });
    await waitFor(
      async () => (await ops('unmatched', '--connection', 'demo-greenhouse')).out.includes(second),
      60_000,
      'the second parked report',
    );
    const refused = await ops(
      'match',
      '--connection',
      'demo-greenhouse',
      '--report',
      second,
      '--application',
      application.id,
    );
    expect(refused.status).toBe(2);
    expect(refused.out).toContain(`was written back with report ${reportId} already`);
    expect((await ops('unmatched', '--connection', 'demo-greenhouse')).out).toContain(second);

    const purged = await ops('purge', '--connection', 'demo-greenhouse', '--candidate', application.candidateId);
    expect(purged.out).toContain('1 application record(s) and 0 order(s) deleted');
    expect(purged.out).not.toContain('nothing was held');
    expect(await holds([email])).toEqual([]);
    expect((await ops('status', '--connection', 'demo-greenhouse', '--application', application.id)).status).toBe(2);
    // An application id given for the candidate's finds nothing, and says so.
    const typo = await ops('purge', '--connection', 'demo-greenhouse', '--candidate', `${application.id}0`);
    expect(typo.out).toContain('nothing was held about candidate');
  }, 180_000);
});
