import type { LocalStack } from './local-stack';

export interface DemoSummary {
  interviewsCreated: number;
  invitesSent: number;
  reportsWrittenBack: number;
  stageMoves: number;
  flaggedForReview: number;
  dlqDepth: number;
}

export const DEMO_CANDIDATES = [
  { first_name: 'Ana', last_name: 'Ruiz', email: 'ana.ruiz@candidates.example.com', ai_match_score: 88, proctoring_violations: 0 },
  { first_name: 'Bram', last_name: 'de Vries', email: 'bram.devries@candidates.example.com', ai_match_score: 92, proctoring_violations: 0 },
  { first_name: 'Chen', last_name: 'Wang', email: 'chen.wang@candidates.example.com', ai_match_score: 61, proctoring_violations: 0 },
  { first_name: 'Dara', last_name: 'Okafor', email: 'dara.okafor@candidates.example.com', ai_match_score: 79, proctoring_violations: 1 },
  { first_name: 'Elif', last_name: 'Yilmaz', email: 'elif.yilmaz@candidates.example.com', ai_match_score: 45, proctoring_violations: 0 },
] as const;

const DEMO_JOB_ID = 3301;
const HIRING_MANAGER_STAGE_ID = 9002;

export class DemoStepError extends Error {
  public constructor(
    public readonly step: string,
    message: string,
  ) {
    super(`${step}: ${message}`);
    this.name = 'DemoStepError';
  }
}

async function until<T>(step: string, read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs: number, progress?: (value: T) => void): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    progress?.(value);
    if (done(value)) return value;
    if (Date.now() > deadline) throw new DemoStepError(step, `not done after ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface SesStore {
  emails: { destination: { to: string[] }; body: { text?: string } }[];
}

/**
 * Five candidates of one job are moved to "AI Interview" in the Greenhouse sandbox; each takes the interview
 * from the link in their e-mail; the results land back on their applications.
 */
export async function runDemo(stack: LocalStack, log: (line: string) => void = console.log, timeoutMs = 60_000): Promise<DemoSummary> {
  const { greenhouse, interview } = stack;
  const applications = DEMO_CANDIDATES.map((c) => greenhouse.addCandidate({ first_name: c.first_name, last_name: c.last_name, email: c.email, job_id: DEMO_JOB_ID }));
  log(`1/4 moving ${applications.length} candidates of job ${DEMO_JOB_ID} to "AI Interview"`);
  for (const application of applications) {
    const [delivery] = await greenhouse.moveCandidate({ application_id: application.id, stage_name: 'AI Interview' });
    if (delivery?.status !== 200) throw new DemoStepError('stage-change webhook', `the connector answered ${delivery?.status ?? delivery?.error}`);
  }
  const emails = DEMO_CANDIDATES.map((c) => c.email);
  const store = await until(
    'invites',
    async () => (await (await fetch(`${stack.emulators.endpoints.ses}/store`)).json()) as SesStore,
    (s) => emails.every((e) => s.emails.some((m) => m.destination.to.includes(e))),
    timeoutMs,
  );
  log(`2/4 ${emails.length} invitations e-mailed; each candidate opens the link and takes the interview`);
  for (const candidate of DEMO_CANDIDATES) {
    const mail = store.emails.find((m) => m.destination.to.includes(candidate.email));
    const interviewId = /\/invite\/([\w-]+)/.exec(mail?.body.text ?? '')?.[1];
    if (!interviewId) throw new DemoStepError('invites', `no interview link in the e-mail to candidate ${candidate.first_name}`);
    interview.completeInterview({ interview_id: interviewId, candidate_name: `${candidate.first_name} ${candidate.last_name}`, candidate_email: candidate.email, ai_match_score: candidate.ai_match_score, proctoring_violations: candidate.proctoring_violations, delay_ms: 300 });
  }
  const candidateIds = new Set(applications.map((a) => a.candidate_id));
  const reportNotes = () => greenhouse.state.notes.filter((n) => candidateIds.has(n.candidate_id) && n.body.includes('ai-interview-report:'));
  await until('write-back', () => reportNotes().length, (n) => n >= applications.length, timeoutMs);
  log(`3/4 ${applications.length} reports written back to Greenhouse`);
  const expectedMoves = DEMO_CANDIDATES.filter((c) => c.ai_match_score >= 75 && c.proctoring_violations === 0).length;
  const movesOf = () => greenhouse.state.moves.filter((m) => m.to_stage_id === HIRING_MANAGER_STAGE_ID && applications.some((a) => a.id === m.application_id)).length;
  await until('stage moves', movesOf, (n) => n >= expectedMoves, timeoutMs);
  await stack.waitForQuiet(timeoutMs);
  const dlq = await stack.dlqDepths();
  const summary: DemoSummary = {
    interviewsCreated: stack.interview.state.requests['POST /custom/interview'] ?? 0,
    invitesSent: store.emails.filter((m) => emails.some((e) => m.destination.to.includes(e))).length,
    reportsWrittenBack: reportNotes().length,
    stageMoves: movesOf(),
    flaggedForReview: reportNotes().filter((n) => n.body.includes('Flagged for review')).length,
    dlqDepth: dlq.stage + dlq.report,
  };
  log('4/4 done');
  return summary;
}

export function formatSummary(summary: DemoSummary): string {
  const rows: [string, number][] = [
    ['interviews created', summary.interviewsCreated],
    ['invites sent', summary.invitesSent],
    ['reports written back', summary.reportsWrittenBack],
    ['stage moves (advanced)', summary.stageMoves],
    ['flagged for review', summary.flaggedForReview],
    ['messages in the DLQs', summary.dlqDepth],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const line = `+-${'-'.repeat(width)}-+-------+`;
  return [line, ...rows.map(([label, value]) => `| ${label.padEnd(width)} | ${String(value).padStart(5)} |`), line].join('\n');
}

/** What `npm start -- --once` requires of the demo; the first miss names the step. */
export function checkSummary(summary: DemoSummary, candidates = DEMO_CANDIDATES.length): string | undefined {
  if (summary.interviewsCreated !== 1) return `interview creation: expected 1 interview, got ${summary.interviewsCreated}`;
  if (summary.invitesSent !== candidates) return `invites: expected ${candidates}, got ${summary.invitesSent}`;
  if (summary.reportsWrittenBack !== candidates) return `write-back: expected ${candidates} notes, got ${summary.reportsWrittenBack}`;
  if (summary.dlqDepth !== 0) return `dead-letter queues: ${summary.dlqDepth} messages`;
  return undefined;
}
