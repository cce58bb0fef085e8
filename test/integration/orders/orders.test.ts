import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/local-http';
import { emailsTo, invitedInterviewId, scanTable, takeInterview, useTestStack } from '../../helpers/local-stack';

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
const email = () => `cand-${randomUUID().slice(0, 8)}@candidates.example.com`;

describe('Orders placed from inside the ATS, end to end on the local stack', () => {
  // A failed message comes back within seconds (SQS's visibility timeout), as a retry after a refusal does.
  const held = useTestStack('orders', { visibilityTimeoutSeconds: 3 });
  /** The report's link: its file on the interview service's own origin (the sandbox's, on one machine). */
  const reportLink = () => expect.stringContaining(`${held.stack.interview.url}/files/reports/`);

  it('Greenhouse: Send Test → one e-mail → the report → the PATCH → test_status complete with the score', async () => {
    const { stack } = held;
    const gh = stack.greenhouse;
    const address = email();
    const application = gh.addCandidate({ firstName: 'Ana', lastName: 'Ruiz', email: address, jobId: '3301' });
    expect(await gh.assessments.listTests()).toEqual([
      { partner_test_id: 'backend-screen', partner_test_name: 'AI interview: backend engineer' },
    ]);
    // The recruiter clicks "Send Test" twice: one order, one e-mail.
    const sent = await gh.assessments.sendTest({ application_id: application.id, partner_test_id: 'backend-screen' });
    const again = await gh.assessments.sendTest({ application_id: application.id, partner_test_id: 'backend-screen' });
    expect(again.partner_interview_id).toBe(sent.partner_interview_id);
    const interviewId = await invitedInterviewId(stack, address);
    await stack.waitForQuiet(20_000);
    expect(await emailsTo(stack, address)).toHaveLength(1);
    takeInterview(stack, interviewId, { name: 'Ana Ruiz', email: address }, { ai_match_score: 81 });
    await waitFor(() => sent.status === 'complete', 20_000);
    expect(sent).toMatchObject({
      status: 'complete',
      partner_score: 81,
      partner_profile_url: reportLink(),
      refusedPatches: 0,
      responseErrors: [],
    });
    expect(sent.patches).toBeGreaterThanOrEqual(1);
  }, 90_000);

  it('Greenhouse: a PATCH refused 403 (sent with the inbound key) is retried once the secret is right', async () => {
    const { stack } = held;
    const gh = stack.greenhouse;
    const secretsFile = JSON.parse(readFileSync(stack.stackFile, 'utf8')).files.secrets as string;
    const original = readFileSync(secretsFile, 'utf8');
    const secrets = JSON.parse(original) as Record<string, Record<string, string>>;
    const own = secrets['connector/demo-greenhouse'] as Record<string, string>;
    // The operator put the inbound key where Greenhouse's completion credential belongs.
    writeFileSync(
      secretsFile,
      JSON.stringify({
        ...secrets,
        'connector/demo-greenhouse': { ...own, greenhouseCompletionKey: own.greenhousePartnerKey },
      }),
    );
    try {
      const address = email();
      const application = gh.addCandidate({ firstName: 'Rui', lastName: 'Costa', email: address, jobId: '3301' });
      const sent = await gh.assessments.sendTest({ application_id: application.id, partner_test_id: 'backend-screen' });
      const interviewId = await invitedInterviewId(stack, address);
      takeInterview(stack, interviewId, { name: 'Rui Costa', email: address }, { ai_match_score: 77 });
      await waitFor(() => sent.refusedPatches > 0, 20_000, 'a refused PATCH');
      expect(sent.status).toBe('sent');
    } finally {
      writeFileSync(secretsFile, original);
    }
    // The secret put right: the message's next attempt sends the PATCH with Greenhouse's credential.
    const test = gh.assessments.tests.at(-1) as (typeof gh.assessments.tests)[number];
    await waitFor(() => test.status === 'complete', 30_000, 'the completion after the fix');
    expect(test).toMatchObject({ partner_score: 77, partner_profile_url: reportLink() });
  });

  it('Greenhouse: a new take-home test (a new url) is a new order, one more e-mail; the first untouched', async () => {
    const { stack } = held;
    const gh = stack.greenhouse;
    const address = email();
    const application = gh.addCandidate({ firstName: 'Lia', lastName: 'Moss', email: address, jobId: '3301' });
    const first = await gh.assessments.sendTest({ application_id: application.id, partner_test_id: 'backend-screen' });
    const firstId = first.partner_interview_id;
    await invitedInterviewId(stack, address);
    await stack.waitForQuiet();
    const firstOrder = (await scanTable(stack, stack.tables.orders)).find((o) => o.orderId === firstId);
    // The same test again (a second click): the same order, no e-mail.
    const again = await gh.assessments.sendTest({ application_id: application.id, partner_test_id: 'backend-screen' });
    expect(again.partner_interview_id).toBe(firstId);
    const second = await gh.assessments.sendTest({
      application_id: application.id,
      partner_test_id: 'backend-screen',
      newTest: true,
    });
    expect(second.partner_interview_id).not.toBe(firstId);
    await waitFor(async () => (await emailsTo(stack, address)).length === 2, 20_000, 'the second invitation');
    await stack.waitForQuiet();
    expect(await emailsTo(stack, address)).toHaveLength(2);
    const orders = await scanTable(stack, stack.tables.orders);
    expect(orders.find((o) => o.orderId === firstId)).toEqual(firstOrder);
    expect(orders.find((o) => o.orderId === second.partner_interview_id)?.state).toBe('invited');
  });

  it('Greenhouse: an unknown key gets 401, a malformed send_test 400 naming the field', async () => {
    const { stack } = held;
    const url = `${stack.gatewayUrl}/orders/greenhouse/send_test`;
    const unknown = await fetch(url, { method: 'POST', headers: { authorization: basic('demo-greenhouse.nope') } });
    expect(unknown.status).toBe(401);
    const key = stack.secrets['connector/demo-greenhouse']?.greenhousePartnerKey as string;
    const malformed = await fetch(url, {
      method: 'POST',
      headers: { authorization: basic(key), 'content-type': 'application/json' },
      body: JSON.stringify({ partner_test_id: 'backend-screen', candidate: { email: 'not-an-email' }, url: 'x' }),
    });
    expect(malformed.status).toBe(400);
    expect(JSON.stringify(await malformed.json())).toMatch(/candidate\.email/);
  });

  it('Ashby: Start Assessment → a UUID → the same id once invited → assessment.update with the result', async () => {
    const { stack } = held;
    const ashby = stack.ashby;
    const address = email();
    const application = ashby.addCandidate({ firstName: 'Kemi', lastName: 'Adeyemi', email: address });
    expect((await ashby.assessments.list()).map((a) => a.assessment_type_id)).toEqual(['backend-screen']);
    const started = await ashby.assessments.start({
      applicationId: application.id,
      assessmentTypeId: 'backend-screen',
    });
    expect(started.status).toBe(200);
    expect(started.assessment_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const unknownType = await ashby.assessments.start({ applicationId: application.id, assessmentTypeId: 'nope' });
    expect(unknownType).toMatchObject({ status: 422, message: expect.stringContaining('no longer offered') });
    const interviewId = await invitedInterviewId(stack, address);
    // The invitation went out: a start repeated (Ashby's retry after an answer it lost) learns the same id.
    const repeated = await ashby.assessments.start({
      applicationId: application.id,
      assessmentTypeId: 'backend-screen',
    });
    expect(repeated).toMatchObject({ status: 200, assessment_id: started.assessment_id });
    takeInterview(stack, interviewId, { name: 'Kemi Adeyemi', email: address }, { ai_match_score: 64 });
    const activity = () => ashby.assessments.assessments.find((a) => a.assessment_id === started.assessment_id);
    await waitFor(() => activity()?.status === 'Completed', 20_000);
    expect(activity()).toMatchObject({
      result: { identifier: 'ai_match_score', type: 'numeric_score', value: 64 },
      profileUrl: reportLink(),
    });
    expect(await emailsTo(stack, address)).toHaveLength(1);
  });

  it('Kombo: a forged body 401; two deliveries and the reconciler’s fetch → one order, e-mail and PUT', async () => {
    const { stack } = held;
    const kombo = stack.kombo;
    const address = email();
    const order = await kombo.placeOrder({
      integrationId: 'teamtailor:globex-demo',
      packageId: 'backend-screen',
      email: address,
      deliver: false,
    });
    // Re-serialised (the signature was of the bytes Kombo sent) and forged: refused before parsing, nothing kept.
    expect(await kombo.deliver(order, { body: (raw) => JSON.stringify(JSON.parse(raw), null, 1) })).toBe(401);
    expect(await kombo.deliver(order, { body: (raw) => raw.replace(address, `x${address}`) })).toBe(401);
    expect(order.status).toBe('OPEN');
    // Delivered twice, and fetched by the reconciler while still OPEN: one order.
    expect(await Promise.all([kombo.deliver(order), kombo.deliver(order)])).toEqual([200, 200]);
    await stack.reconcileNow();
    const interviewId = await invitedInterviewId(stack, address);
    await stack.waitForQuiet(20_000);
    await stack.reconcileNow();
    await stack.waitForQuiet(20_000);
    expect(await emailsTo(stack, address)).toHaveLength(1);
    takeInterview(stack, interviewId, { name: 'Lea Novak', email: address }, { ai_match_score: 88 });
    await waitFor(() => order.status === 'COMPLETED', 20_000, 'the result PUT');
    expect(order.result).toMatchObject({
      status: 'COMPLETED',
      score: 88,
      max_score: 100,
      result_url: reportLink(),
      completed_at: expect.any(String),
    });
    await stack.reconcileNow();
    await stack.waitForQuiet(20_000);
    expect(order.resultPuts + order.refusedPuts).toBe(1);
    expect(kombo.undocumented).toEqual([]);
    // Three reconciler runs and the report's write-back, each waited for until the queues are quiet, and the report
    // queue gathers a batch for 5 s (WORKER_TIMING): about 15 s alone, and past 30 s once beside the suite's other
    // files on two cores.
  }, 60_000);

  it('Kombo: an unknown package is rejected with 422 and a message the ATS shows; nothing recorded', async () => {
    const { stack } = held;
    const order = await stack.kombo.placeOrder({
      integrationId: 'smartrecruiters:initech-demo',
      packageId: 'not-offered',
      email: email(),
    });
    expect(order.deliveries).toEqual([422]);
    expect(order).toMatchObject({ status: 'REJECTED', rejectedMessage: expect.stringContaining('no longer offered') });
  });
});
