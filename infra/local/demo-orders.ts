import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { LocalStack } from './local-stack';

/** What a recruiter sees of an order placed inside their ATS, once the candidate took the interview. */
export interface OrderDemoLine {
  placed: number;
  emails: number;
  status: string;
  score: number | null;
  profileUrl: boolean;
  /** Kombo: results PUT to the order (taken or refused); exactly one is right. */
  puts?: number;
}

/** By source (`greenhouse`, `ashby`, `kombo <integration id>`). */
export type OrdersDemoSummary = Record<string, OrderDemoLine>;

interface Ses {
  emails: { destination: { to: string[] }; body: { text?: string } }[];
}

type Until = <T>(step: string, read: () => Promise<T> | T, done: (value: T) => boolean) => Promise<T>;

/** The invitation e-mail to `address`, and the interview id in its link. */
async function invitation(stack: LocalStack, address: string, until: Until, step: string) {
  const ses = async () => (await (await fetch(`${stack.emulators.endpoints.ses}/store`)).json()) as Ses;
  const mail = await until(
    step,
    async () => (await ses()).emails.filter((m) => m.destination.to.includes(address)),
    (found) => found.length > 0,
  );
  const interviewId = /\/invite\/([\w-]+)/.exec(mail[0]?.body.text ?? '')?.[1] as string;
  return { interviewId, emails: async () => (await ses()).emails.filter((m) => m.destination.to.includes(address)) };
}

/**
 * Greenhouse: a recruiter clicks "Send Test" (twice: one order, one e-mail); the candidate takes the interview; the
 * connector PATCHes Greenhouse and `test_status` answers complete with the score, shown in the test section.
 */
async function greenhouseOrder(stack: LocalStack, log: (line: string) => void, until: Until) {
  const gh = stack.greenhouse;
  const address = 'hana.sato+greenhouse-order@candidates.example.com';
  const application = gh.addCandidate({ firstName: 'Hana', lastName: 'Sato', email: address, jobId: '3301' });
  const [test] = await gh.assessments.listTests();
  const partnerTestId = test?.partner_test_id as string;
  const sent = await gh.assessments.sendTest({ application_id: application.id, partner_test_id: partnerTestId });
  await gh.assessments.sendTest({ application_id: application.id, partner_test_id: partnerTestId });
  const { interviewId, emails } = await invitation(stack, address, until, 'greenhouse order invitation');
  log(`  greenhouse: "Send Test" (${test?.partner_test_name}) clicked twice; one invitation e-mailed`);
  stack.interview.completeInterview({
    interview_id: interviewId,
    candidate_name: 'Hana Sato',
    candidate_email: address,
    ai_match_score: 84,
    proctoring_violations: 0,
    delay_ms: 300,
  });
  await until(
    'greenhouse order result',
    () => sent.status,
    (status) => status === 'complete',
  );
  log(`  greenhouse: test_status complete, score ${sent.partner_score}, in the candidate's test section`);
  return {
    placed: gh.assessments.tests.filter((t) => String(t.application_id) === application.id).length,
    emails: (await emails()).length,
    status: sent.status,
    score: sent.partner_score,
    profileUrl: Boolean(sent.partner_profile_url),
  };
}

/**
 * Ashby: a candidate enters the stage whose assessment is automated ("Automate on Stage Entry"); a second start
 * answers the same assessment id; the candidate takes the interview; `assessment.update` brings the result under
 * the activity.
 */
async function ashbyOrder(stack: LocalStack, log: (line: string) => void, until: Until) {
  const ashby = stack.ashby;
  const address = 'ivo.petrov+ashby-order@candidates.example.com';
  const [type] = await ashby.assessments.list();
  ashby.assessments.automated.set('Skills Assessment', type?.assessment_type_id as string);
  const application = ashby.addCandidate({ firstName: 'Ivo', lastName: 'Petrov', email: address });
  await ashby.moveCandidate({ applicationId: application.id, stageName: 'Skills Assessment' });
  const again = await ashby.assessments.start({
    applicationId: application.id,
    assessmentTypeId: type?.assessment_type_id as string,
  });
  const { interviewId, emails } = await invitation(stack, address, until, 'ashby order invitation');
  log(`  ashby: the assessment started on stage entry (a second start: ${again.status}); one invitation e-mailed`);
  stack.interview.completeInterview({
    interview_id: interviewId,
    candidate_name: 'Ivo Petrov',
    candidate_email: address,
    ai_match_score: 73,
    proctoring_violations: 0,
    delay_ms: 300,
  });
  const activity = () => ashby.assessments.assessments.find((a) => a.applicationId === application.id);
  await until(
    'ashby order result',
    () => activity()?.status,
    (status) => status === 'Completed',
  );
  const result = activity()?.result;
  log(`  ashby: assessment.update brought the result (${result?.label} ${result?.value}) under the activity`);
  return {
    placed: ashby.assessments.assessments.filter((a) => a.applicationId === application.id).length,
    emails: (await emails()).length,
    status: activity()?.status ?? 'none',
    score: typeof result?.value === 'number' ? result.value : null,
    profileUrl: Boolean(activity()?.profileUrl),
  };
}

/**
 * Kombo: recruiters in two customers' ATSs (two integration ids) order the package. The first order's webhook is
 * delivered twice (one order, one e-mail); the second comes while the webhook is down, and the reconciler fetches
 * it from Kombo's OPEN orders. Both candidates take the interview; one result is PUT to each order.
 */
async function komboOrders(stack: LocalStack, log: (line: string) => void, until: Until) {
  const kombo = stack.kombo;
  const config = stack.connections.find((c) => c.orders?.kombo)?.orders?.kombo;
  const packageId = config?.tests[0]?.id as string;
  const candidates = (config?.integrations ?? []).slice(0, 2).map((integrationId, i) => ({
    integrationId,
    name: ['Lea Novak', 'Omar Haddad'][i] as string,
    address: `${['lea.novak', 'omar.haddad'][i]}+kombo-order@candidates.example.com`,
  }));
  const placed = [];
  for (const [i, c] of candidates.entries()) {
    const [first, last] = c.name.split(' ');
    const order = await kombo.placeOrder({
      integrationId: c.integrationId,
      packageId,
      email: c.address,
      firstName: first ?? null,
      lastName: last ?? null,
      deliver: i === 0,
    });
    if (i === 0) await kombo.deliver(order);
    else await stack.reconcileNow();
    log(
      i === 0
        ? `  kombo (${c.integrationId}): ordered; the webhook delivered twice (${order.deliveries.join(', ')})`
        : `  kombo (${c.integrationId}): ordered while the webhook was down; the reconciler fetched it from Kombo`,
    );
    placed.push({ ...c, order });
  }
  const summary: OrdersDemoSummary = {};
  await Promise.all(
    placed.map(async (c) => {
      const { interviewId, emails } = await invitation(
        stack,
        c.address,
        until,
        `kombo order invitation ${c.integrationId}`,
      );
      stack.interview.completeInterview({
        interview_id: interviewId,
        candidate_name: c.name,
        candidate_email: c.address,
        ai_match_score: 77,
        proctoring_violations: 0,
        delay_ms: 300,
      });
      await until(
        `kombo order result ${c.integrationId}`,
        () => c.order.status,
        (status) => status === 'COMPLETED',
      );
      const puts = c.order.resultPuts + c.order.refusedPuts;
      log(`  kombo (${c.integrationId}): the result PUT ${puts}×, ${c.order.status}, score ${c.order.result?.score}`);
      const scanned = await stack.dynamo.send(new ScanCommand({ TableName: stack.tables.orders }));
      const ours = (scanned.Items ?? []).map((item) => unmarshall(item)).filter((o) => o.atsOrderId === c.order.id);
      summary[`kombo ${c.integrationId}`] = {
        placed: ours.length,
        emails: (await emails()).length,
        status: c.order.status,
        score: c.order.result?.score ?? null,
        profileUrl: /^https?:\/\//.test(c.order.result?.result_url ?? ''),
        puts: c.order.resultPuts + c.order.refusedPuts,
      };
    }),
  );
  return summary;
}

/** An order from inside each ATS whose connection takes them (the local connections file: Greenhouse, Ashby, Kombo). */
export async function runOrders(stack: LocalStack, log: (line: string) => void, until: Until) {
  const sources = new Set(stack.connections.flatMap((c) => Object.keys(c.orders ?? {})));
  const [greenhouse, ashby, kombo] = await Promise.all([
    sources.has('greenhouse') ? greenhouseOrder(stack, log, until) : undefined,
    sources.has('ashby') ? ashbyOrder(stack, log, until) : undefined,
    sources.has('kombo') ? komboOrders(stack, log, until) : undefined,
  ]);
  return { ...(greenhouse ? { greenhouse } : {}), ...(ashby ? { ashby } : {}), ...kombo } satisfies OrdersDemoSummary;
}

/** The orders' lines under the demo's table. */
export function formatOrders(orders: OrdersDemoSummary): string[] {
  return Object.entries(orders).map(
    ([source, o]) =>
      `orders from ${source}: ${o.placed} placed, ${o.emails} e-mail, ${o.status}, score ${o.score ?? 'none'}` +
      (o.profileUrl ? ', report linked' : ', no report link'),
  );
}

/** What `--once` requires of each order: one placed, one e-mail, complete with its score and report link. */
export function checkOrders(orders: OrdersDemoSummary): string | undefined {
  for (const [source, o] of Object.entries(orders)) {
    if (o.placed !== 1) return `${source} order: expected 1 placed, got ${o.placed}`;
    if (o.emails !== 1) return `${source} order: expected 1 invitation e-mail, got ${o.emails}`;
    if (o.puts !== undefined && o.puts !== 1) return `${source} order: expected 1 result PUT, got ${o.puts}`;
    if (!['complete', 'Completed', 'COMPLETED'].includes(o.status) || o.score === null || !o.profileUrl)
      return `${source} order: expected a result with its score and report link, got ${o.status}`;
  }
  return undefined;
}
