import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/local-http';
import { invitedInterviewId, scanTable, takeInterview, useTestStack } from '../../helpers/local-stack';

// A candidate takes the interview and the service refuses the connector's read of the report (a key without the
// permission): the recruiter reads so in the ATS once, the follow-ups stop, and once the key is fixed the same message
// writes the report back. Through the real local stack: the service's webhook, SQS, the worker, DynamoDB, the ATS.
describe('Pipeline: a report the interview service will not give', () => {
  // A short timeout and a visibility timeout of 3 × it, so the refused message comes back in 12 s.
  const held = useTestStack('report-unreadable', {
    reportDelayMs: 50,
    functionTimeoutMs: 4_000,
    visibilityTimeoutSeconds: 12,
  });

  it('tells the recruiter once, keeps the message, and writes the report back once the key may read it', async () => {
    const { stack } = held;
    const ats = stack.ats.greenhouse;
    const email = `unread-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = ats.addCandidate({ firstName: 'Iris', lastName: 'Okafor', email });
    await ats.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const interviewId = await invitedInterviewId(stack, email, 30_000);
    await waitFor(() => ats.notesOf(application.id).some((n) => n.includes('ai-interview-invite:')), 30_000, 'invite');

    const secretsPath = JSON.parse(readFileSync(stack.stackFile, 'utf8')).files.secrets as string;
    const original = readFileSync(secretsPath, 'utf8');
    const ref = stack.connections.find((c) => c.id === 'demo-greenhouse')?.secretRef as string;
    const limited = JSON.parse(original) as Record<string, Record<string, unknown>>;
    (limited[ref] as Record<string, unknown>).interviewApiKey = stack.interview.limitedApiKey;
    writeFileSync(secretsPath, JSON.stringify(limited));
    let reportId: string;
    try {
      ({ report_id: reportId } = takeInterview(stack, interviewId, { name: 'Iris Okafor', email }));
      const told = () => ats.notesOf(application.id).filter((n) => n.includes('its report is not here yet'));
      await waitFor(() => told().length > 0, 30_000, 'the note saying the report is not here');
      expect(told()[0]).toContain('(forbidden)');
      expect(told()[0]).toContain('no reminder or expiry follows');
      // Tried again on the next receive while the key is still refused: still one note, no report written.
      const reads = reportReads();
      await waitFor(() => reportReads() > reads, 30_000, 'a second try');
      expect(told()).toHaveLength(1);
      expect(ats.notesOf(application.id).some((n) => n.includes(`ai-interview-report:${reportId}`))).toBe(false);
      const record = await recordOf(application.id);
      expect(record?.state).toBe('invited');
      expect(record?.steps?.failureNoteReportUnreadable?.doneAt).toEqual(expect.any(Number));
    } finally {
      writeFileSync(secretsPath, original);
    }
    await waitFor(async () => (await recordOf(application.id))?.state === 'written_back', 60_000, 'the write-back');
    expect(ats.notesOf(application.id).filter((n) => n.includes(`ai-interview-report:${reportId}`))).toHaveLength(1);
    expect(ats.notesOf(application.id).filter((n) => n.includes('its report is not here yet'))).toHaveLength(1);
    expect(await stack.dlqDepths()).toEqual({ stage: 0, report: 0 });
  }, 150_000);

  /** The application's record as DynamoDB holds it. */
  async function recordOf(atsApplicationId: string) {
    const items = await scanTable(held.stack, held.stack.tables.applications);
    return items.find((i) => i.atsApplicationId === atsApplicationId) as
      | { state: string; steps?: Record<string, { doneAt?: number }> }
      | undefined;
  }

  /** How many times the service was asked for reports, refused or not. */
  const reportReads = () => held.stack.interview.state.requests['GET /interview/reports'] ?? 0;
});
