import type { LocalStack } from '../../infra/local/local-stack';
import type { TakeHomeTest } from '../../infra/local/sandbox/ats/greenhouse/assessments';
import type { KomboSandboxOrder } from '../../infra/local/sandbox/kombo/server';

/** A candidate whose assessment a recruiter ordered from inside the ATS. */
export interface OrderCandidate {
  source: 'greenhouse' | 'ashby' | 'kombo';
  applicationId: string;
  email: string;
  name: string;
  /** Greenhouse's take-home test row; Ashby's assessment id. */
  test?: TakeHomeTest | undefined;
  assessmentId?: string | undefined;
  /** Kombo's order, as Kombo keeps it. */
  kombo?: KomboSandboxOrder | undefined;
  /** Ids the ATS got back from its repeated orders of this one candidate and test. */
  answeredIds: string[];
  noShow: boolean;
}

type Check = (name: string, items: unknown[], bad: (item: any) => string | undefined) => void;

const TEST_ID = 'backend-screen';

/**
 * `count` orders, a third each from Greenhouse (Send Test clicked two or three times at once), Ashby (Start
 * Assessment twice at once) and Kombo (the webhook delivered two or three times at once; a fifth while the webhook
 * is down, for the reconciler to fetch), placed 10 at a time while the stage flow's candidates move.
 */
export async function placeOrders(
  s: LocalStack,
  count: number,
  random: () => number,
  noShowRate: number,
): Promise<OrderCandidate[]> {
  const placed: OrderCandidate[] = [];
  for (let i = 0; i < count; i++) {
    const source = (['greenhouse', 'ashby', 'kombo'] as const)[i % 3] as OrderCandidate['source'];
    const email = `order-${i}+${source}@candidates.example.com`;
    const name = `Order${i} Candidate${i}`;
    const applicationId =
      source === 'greenhouse'
        ? String(
            s.greenhouse.addCandidate({ firstName: `Order${i}`, lastName: `Candidate${i}`, email, jobId: '3301' }).id,
          )
        : source === 'ashby'
          ? s.ashby.addCandidate({ firstName: `Order${i}`, lastName: `Candidate${i}`, email }).id
          : '';
    placed.push({ source, applicationId, email, name, answeredIds: [], noShow: random() < noShowRate });
  }
  for (let i = 0; i < placed.length; i += 10)
    await Promise.all(placed.slice(i, i + 10).map((c) => order(s, c, 2 + Math.floor(random() * 2), random)));
  return placed;
}

/** The recruiter's clicks, sent at once; clicked again (at most three rounds) while the ATS got no answer. */
async function order(s: LocalStack, c: OrderCandidate, times: number, random: () => number): Promise<void> {
  if (c.source === 'kombo') return komboOrder(s, c, times, random);
  for (let round = 0; round < 3 && c.answeredIds.length === 0; round++) {
    if (c.source === 'greenhouse') {
      const sent = await Promise.allSettled(
        Array.from({ length: times }, () =>
          s.greenhouse.assessments.sendTest({ application_id: Number(c.applicationId), partner_test_id: TEST_ID }),
        ),
      );
      for (const result of sent)
        if (result.status === 'fulfilled') {
          c.test = result.value;
          c.answeredIds.push(result.value.partner_interview_id ?? '');
        }
      continue;
    }
    const started = await Promise.allSettled(
      Array.from({ length: 2 }, () =>
        s.ashby.assessments.start({ applicationId: c.applicationId, assessmentTypeId: TEST_ID }),
      ),
    );
    for (const result of started)
      if (result.status === 'fulfilled' && 'assessment_id' in result.value)
        c.answeredIds.push(result.value.assessment_id as string);
    c.assessmentId = c.answeredIds[0];
  }
}

/** Kombo's order for the candidate, its webhook delivered `times` at once, or (a fifth) not while it is down. */
async function komboOrder(s: LocalStack, c: OrderCandidate, times: number, random: () => number): Promise<void> {
  const integrations = s.connections.find((x) => x.orders?.kombo)?.orders?.kombo?.integrations ?? [];
  const integrationId = integrations[Math.floor(random() * integrations.length)] as string;
  const down = random() < 0.2;
  const [first, last] = c.name.split(' ');
  c.kombo = await s.kombo.placeOrder({
    integrationId,
    packageId: TEST_ID,
    email: c.email,
    firstName: first ?? null,
    lastName: last ?? null,
    deliver: false,
  });
  c.answeredIds.push(c.kombo.id);
  if (!down) await Promise.all(Array.from({ length: times }, () => s.kombo.deliver(c.kombo as KomboSandboxOrder)));
}

/** The orders' records, by candidate e-mail. */
export async function orderRecords(
  scan: (table: string) => Promise<Record<string, any>[]>,
  s: LocalStack,
): Promise<Map<string, Record<string, any>[]>> {
  const byEmail = new Map<string, Record<string, any>[]>();
  for (const record of await scan(s.tables.orders))
    byEmail.set(record.candidateEmail, [...(byEmail.get(record.candidateEmail) ?? []), record]);
  return byEmail;
}

/** Every candidate who shows up takes the interview their invitation links to. */
export async function takeOrderedInterviews(
  s: LocalStack,
  placed: OrderCandidate[],
  records: Map<string, Record<string, any>[]>,
  random: () => number,
): Promise<number> {
  let taken = 0;
  for (const c of placed) {
    const interviewId = records.get(c.email)?.[0]?.interviewId;
    if (c.noShow || !interviewId) continue;
    s.interview.completeInterview({
      interview_id: interviewId,
      candidate_name: c.name,
      candidate_email: c.email,
      ai_match_score: Math.round(40 + random() * 60),
      proctoring_violations: 0,
      delay_ms: 0,
    });
    taken++;
  }
  return taken;
}

/** The order's end as its ATS shows it: complete with a score, or (for a no-show) expired or cancelled. */
function shownInAts(s: LocalStack, c: OrderCandidate): string {
  if (c.source === 'greenhouse') return c.test?.status === 'complete' ? 'complete' : (c.test?.partner_status ?? 'none');
  if (c.source === 'kombo') return c.kombo?.status ?? 'none';
  const activity = s.ashby.assessments.assessments.find((a) => a.assessment_id === c.assessmentId);
  return activity?.status ?? 'none';
}

/**
 * A Kombo order taken after its expiry was told: Kombo keeps an order's end (a result only while OPEN), so it stays
 * CANCELLED, told before the completion. Counted among the residuals, never a second PUT.
 */
export function keptCancelled(c: OrderCandidate, record: Record<string, any> | undefined): boolean {
  const cancelledAt = c.kombo?.result?.status === 'CANCELLED' ? Date.parse(c.kombo.result.completed_at ?? '') : NaN;
  return record?.state === 'completed' && cancelledAt < (record.endedAt ?? 0);
}

/** The invariants of orders placed from inside the ATS. */
export function checkOrders(
  check: Check,
  s: LocalStack,
  placed: OrderCandidate[],
  records: Map<string, Record<string, any>[]>,
  emailsTo: (address: string) => number,
): void {
  check('orders: exactly one order per candidate and test, one id answered', placed, (c: OrderCandidate) => {
    const count = records.get(c.email)?.length ?? 0;
    const ids = new Set(c.answeredIds);
    return count === 1 && ids.size === 1 ? undefined : `${c.source} ${c.email}: ${count} orders, ids ${[...ids]}`;
  });
  // As the stage flow's: a worker stopped between recording the e-mail started and sending it leaves it uncertain,
  // never sent twice (SES cannot be asked); the residuals count those.
  check('orders: at most one invitation e-mail per order', placed, (c: OrderCandidate) => {
    const count = emailsTo(c.email);
    return count <= 1 ? undefined : `${c.source} ${c.email}: ${count} e-mails`;
  });
  check(
    'orders: exactly one interview per connection × ordered test',
    s.connections.filter((c) => c.orders),
    (c) => {
      const count = s.interview.state.interviews.filter((i) =>
        i.interview_name.endsWith(`(ref ${c.id}/orders/order-${TEST_ID})`),
      ).length;
      return count === 1 ? undefined : `${c.id}: ${count} interviews`;
    },
  );
  check('orders: every order ended and told, as its ATS shows it', placed, (c: OrderCandidate) => {
    const record = records.get(c.email)?.[0];
    const want = c.noShow ? 'expired' : 'completed';
    const shown = shownInAts(s, c);
    const expected = {
      greenhouse: c.noShow ? 'expired' : 'complete',
      ashby: c.noShow ? 'Cancelled' : 'Completed',
      kombo: c.noShow ? 'CANCELLED' : 'COMPLETED',
    };
    const told = record?.state === want && record.announced === want;
    return told && (shown === expected[c.source] || keptCancelled(c, record))
      ? undefined
      : `${c.source} ${c.email}: ${record?.state}, told ${record?.announced}, the ATS shows ${shown}` +
          (c.kombo ? ` (deliveries ${c.kombo.deliveries.join(', ') || 'none'})` : '') +
          (c.test ? ` (${c.test.patches} PATCHes; pulls: ${c.test.pulls.join(', ') || 'none'})` : '');
  });
  // Kombo takes one result per order, only while it is OPEN: a second PUT is refused; the connector never sends one.
  check(
    'orders: Kombo result PUT once per order, every call documented',
    [...placed.filter((c) => c.kombo), ...s.kombo.undocumented.map((call) => ({ undocumented: call }))],
    (c: OrderCandidate | { undocumented: string }) => {
      if ('undocumented' in c) return `undocumented call: ${c.undocumented}`;
      const puts = (c.kombo?.resultPuts ?? 0) + (c.kombo?.refusedPuts ?? 0);
      return puts === 1
        ? undefined
        : `kombo ${c.email}: ${c.kombo?.resultPuts} results taken, ${c.kombo?.refusedPuts} refused`;
    },
  );
}
