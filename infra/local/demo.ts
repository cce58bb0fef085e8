import type { AtsKind } from '../../shared/config';
import type { LocalStack } from './local-stack';

export interface AtsDemoSummary {
  interviewsCreated: number;
  invitesSent: number;
  reportsWrittenBack: number;
  stageMoves: number;
  flaggedForReview: number;
}

export interface DemoSummary {
  byAts: Partial<Record<AtsKind, AtsDemoSummary>>;
  dlqDepth: number;
}

export const DEMO_CANDIDATES = [
  { firstName: 'Ana', lastName: 'Ruiz', ai_match_score: 88, proctoring_violations: 0 },
  { firstName: 'Bram', lastName: 'de Vries', ai_match_score: 92, proctoring_violations: 0 },
  { firstName: 'Chen', lastName: 'Wang', ai_match_score: 61, proctoring_violations: 0 },
  { firstName: 'Dara', lastName: 'Okafor', ai_match_score: 79, proctoring_violations: 1 },
  { firstName: 'Elif', lastName: 'Yilmaz', ai_match_score: 45, proctoring_violations: 0 },
] as const;

const ADVANCE_STAGE = 'Hiring Manager Review';

export class DemoStepError extends Error {
  public constructor(
    public readonly step: string,
    message: string,
  ) {
    super(`${step}: ${message}`);
    this.name = 'DemoStepError';
  }
}

async function until<T>(
  step: string,
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new DemoStepError(step, `not done after ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface SesStore {
  emails: { destination: { to: string[] }; body: { text?: string } }[];
}

const emailOf = (kind: AtsKind, firstName: string, lastName: string) =>
  `${firstName}.${lastName}+${kind}@candidates.example.com`.toLowerCase().replace(/\s+/g, '');

/** Five candidates of one job move to "AI Interview" in one ATS; each takes the interview from their e-mail. */
async function runOnAts(
  stack: LocalStack,
  kind: AtsKind,
  connectionId: string,
  log: (line: string) => void,
  timeoutMs: number,
): Promise<AtsDemoSummary> {
  const ats = stack.ats[kind];
  const applications = DEMO_CANDIDATES.map((c) =>
    ats.addCandidate({ firstName: c.firstName, lastName: c.lastName, email: emailOf(kind, c.firstName, c.lastName) }),
  );
  for (const application of applications) {
    const deliveries = await ats.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const refused = deliveries.find((d) => d.status !== 200);
    if (refused)
      throw new DemoStepError(
        `${kind} stage-change webhook`,
        `the connector answered ${refused.status ?? refused.error}`,
      );
  }
  const emails = DEMO_CANDIDATES.map((c) => emailOf(kind, c.firstName, c.lastName));
  const sesStore = async () => (await (await fetch(`${stack.emulators.endpoints.ses}/store`)).json()) as SesStore;
  const store = await until(
    `${kind} invites`,
    sesStore,
    (s) => emails.every((e) => s.emails.some((m) => m.destination.to.includes(e))),
    timeoutMs,
  );
  log(`  ${kind}: ${emails.length} invitations e-mailed; the candidates take their interviews`);
  DEMO_CANDIDATES.forEach((candidate, i) => {
    const mail = store.emails.find((m) => m.destination.to.includes(emails[i] as string));
    const interviewId = /\/invite\/([\w-]+)/.exec(mail?.body.text ?? '')?.[1];
    if (!interviewId)
      throw new DemoStepError(`${kind} invites`, `no interview link in the e-mail to ${candidate.firstName}`);
    stack.interview.completeInterview({
      interview_id: interviewId,
      candidate_name: `${candidate.firstName} ${candidate.lastName}`,
      candidate_email: emails[i] as string,
      ai_match_score: candidate.ai_match_score,
      proctoring_violations: candidate.proctoring_violations,
      delay_ms: 300,
    });
  });
  const reportNotes = () =>
    applications.flatMap((a) => ats.notesOf(a.id).filter((n) => n.includes('ai-interview-report:')));
  await until(`${kind} write-back`, reportNotes, (notes) => notes.length >= applications.length, timeoutMs);
  const expectedMoves = DEMO_CANDIDATES.filter((c) => c.ai_match_score >= 75 && c.proctoring_violations === 0).length;
  const moved = () => applications.filter((a) => ats.stageNameOf(a.id) === ADVANCE_STAGE).length;
  await until(`${kind} stage moves`, moved, (n) => n >= expectedMoves, timeoutMs);
  log(`  ${kind}: ${applications.length} reports written back, ${moved()} advanced`);
  const finalStore = await sesStore();
  return {
    interviewsCreated: stack.interview.state.interviews.filter((i) =>
      i.interview_name.includes(`(ref ${connectionId}/`),
    ).length,
    invitesSent: finalStore.emails.filter((m) => emails.some((e) => m.destination.to.includes(e))).length,
    reportsWrittenBack: reportNotes().length,
    stageMoves: moved(),
    flaggedForReview: reportNotes().filter((n) => n.includes('Flagged for review')).length,
  };
}

/** The demo on every connection of the local config, all ATSs at once. */
export async function runDemo(
  stack: LocalStack,
  log: (line: string) => void = console.log,
  timeoutMs = 90_000,
): Promise<DemoSummary> {
  const atsNames = stack.connections.map((c) => c.ats).join(', ');
  log(`Moving ${DEMO_CANDIDATES.length} candidates to "AI Interview" in ${atsNames}…`);
  const results = await Promise.all(
    stack.connections.map(async (c) => [c.ats, await runOnAts(stack, c.ats, c.id, log, timeoutMs)] as const),
  );
  await stack.waitForQuiet(timeoutMs);
  const dlq = await stack.dlqDepths();
  return { byAts: Object.fromEntries(results), dlqDepth: dlq.stage + dlq.report };
}

export function formatSummary(summary: DemoSummary): string {
  const kinds = Object.keys(summary.byAts) as AtsKind[];
  const rows: [string, keyof AtsDemoSummary][] = [
    ['interviews created', 'interviewsCreated'],
    ['invites sent', 'invitesSent'],
    ['reports written back', 'reportsWrittenBack'],
    ['stage moves (advanced)', 'stageMoves'],
    ['flagged for review', 'flaggedForReview'],
  ];
  const width = 22;
  const cell = (text: string | number) => String(text).padStart(11);
  const line = `+-${'-'.repeat(width)}-${kinds.map(() => '+-------------').join('')}+`;
  const header = `| ${''.padEnd(width)} ${kinds.map((k) => `| ${cell(k)} `).join('')}|`;
  const body = rows.map(
    ([label, key]) =>
      `| ${label.padEnd(width)} ${kinds.map((k) => `| ${cell(summary.byAts[k]?.[key] ?? 0)} `).join('')}|`,
  );
  return [line, header, line, ...body, line, `messages in the DLQs: ${summary.dlqDepth}`].join('\n');
}

/** What `npm start -- --once` requires on every ATS; the first miss names the ATS and the step. */
export function checkSummary(summary: DemoSummary, candidates = DEMO_CANDIDATES.length): string | undefined {
  for (const [kind, result] of Object.entries(summary.byAts)) {
    if (result.interviewsCreated !== 1)
      return `${kind} interview creation: expected 1 interview, got ${result.interviewsCreated}`;
    if (result.invitesSent !== candidates) return `${kind} invites: expected ${candidates}, got ${result.invitesSent}`;
    if (result.reportsWrittenBack !== candidates)
      return `${kind} write-back: expected ${candidates} notes, got ${result.reportsWrittenBack}`;
  }
  if (summary.dlqDepth !== 0) return `dead-letter queues: ${summary.dlqDepth} messages`;
  return undefined;
}
