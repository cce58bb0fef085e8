import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DirectAtsKind } from '../../../shared/config';
import { waitFor } from '../../helpers/local-http';
import { invitedInterviewId, scanTable, takeInterview, useTestStack } from '../../helpers/local-stack';

// The report as a file on the candidate's record, on each ATS's sandbox: the service's PDF, attached once, however
// the upload's answer is lost; no file, an over-size file or a refusal leave the note's link and a line saying why.
const KINDS = ['greenhouse', 'ashby', 'lever', 'workable'] as const satisfies readonly DirectAtsKind[];
/** The upload route on each sandbox whose answer the test loses (Workable: the note's comment, then the file's). */
const UPLOAD: Record<DirectAtsKind, [route: string, lost: number]> = {
  greenhouse: ['POST /v3/attachments', 1],
  ashby: ['POST /candidate.uploadFile', 1],
  lever: ['POST /v1/opportunities/:id/files', 1],
  workable: ['POST /spi/v3/candidates/:id/comments', 2],
};

describe('Pipeline: the report file on the candidate record, every ATS', () => {
  // A short timeout and a visibility timeout of 3 × it (AWS's is 6 ×), so a message whose answer was lost comes back
  // in 12 s: the same retry, sooner.
  const held = useTestStack('report-file', {
    reportDelayMs: 50,
    functionTimeoutMs: 4_000,
    visibilityTimeoutSeconds: 12,
  });

  /** A candidate moved into the stage and invited, then through the interview with `report` (sandbox fields). */
  async function interviewed(kind: DirectAtsKind, report: object = {}, beforeReport: () => unknown = () => undefined) {
    const { stack } = held;
    const ats = stack.ats[kind];
    const email = `file-${randomUUID().slice(0, 8)}+${kind}@candidates.example.com`;
    const application = ats.addCandidate({ firstName: 'Noor', lastName: 'Haddad', email });
    await ats.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const interviewId = await invitedInterviewId(stack, email, 30_000);
    // The invitation's note is posted after its e-mail: the faults set next are for the write-back alone.
    const inviteNoted = () => ats.notesOf(application.id).some((n) => n.includes('ai-interview-invite:'));
    await waitFor(inviteNoted, 30_000, `${kind} invite note`);
    await beforeReport();
    const { report_id: reportId } = takeInterview(stack, interviewId, { name: 'Noor Haddad', email }, report);
    const noted = () => ats.notesOf(application.id).some((n) => n.includes(`ai-interview-report:${reportId}`));
    await waitFor(noted, 40_000, `${kind} report note`);
    const record = async () => {
      const items = await scanTable(stack, stack.tables.applications);
      return items.find((i) => i.atsApplicationId === application.id) as
        | { state: string; steps?: { reportFile?: { value?: string } } }
        | undefined;
    };
    await waitFor(async () => (await record())?.state === 'written_back', 90_000, `${kind} write-back`);
    return { ats, application, reportId, step: (await record())?.steps?.reportFile?.value };
  }

  it.concurrent.for(KINDS)(
    '%s: one file, the service PDF, when the upload answer is lost and retried',
    { timeout: 120_000 },
    async (kind) => {
      const { stack } = held;
      const [route, lost] = UPLOAD[kind];
      const lose = () => stack.ats[kind].setFaults({ loseAnswers: { [route]: lost } });
      const { ats, application, reportId, step } = await interviewed(kind, { ai_match_score: 93 }, lose);
      const files = ats.filesOf(application.id);
      expect(files.map((f) => f.name)).toEqual([`AI interview report ${reportId}.pdf`]);
      const attached = Buffer.from(await (await fetch(files[0]!.url)).arrayBuffer());
      const served = Buffer.from(
        await (await fetch(`${stack.interview.url}/files/reports/${reportId}.pdf`)).arrayBuffer(),
      );
      expect(attached.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(attached.equals(served)).toBe(true);
      expect(ats.requests()[route]).toBeGreaterThanOrEqual(lost);
      expect(step).toBeDefined();
      expect(step).not.toMatch(/^not-attached/);
    },
  );

  it.concurrent.for([
    ['greenhouse', 'oversize', 'over the 10 MB'],
    ['ashby', 'missing', 'no file link'],
    ['workable', 'html', 'not a PDF (text/html)'],
  ] as const)(
    '%s: a report file %s leaves the link in the note and says why, once',
    { timeout: 120_000 },
    async ([kind, file, why]) => {
      const { ats, application, reportId, step } = await interviewed(kind, { report_file: { file } });
      expect(ats.filesOf(application.id)).toEqual([]);
      expect(step).toContain(why);
      const notes = ats.notesOf(application.id);
      const whyNotes = notes.filter((n) => n.includes(`ai-interview-report-file:${reportId}`));
      expect(whyNotes).toHaveLength(1);
      expect(whyNotes[0]).toContain(why);
      if (file !== 'missing')
        expect(notes.find((n) => n.includes(`ai-interview-report:${reportId}`))).toContain('/files/reports/');
    },
  );

  it('lever: a file the ATS refuses is recorded with the refusal, not retried forever', {
    timeout: 120_000,
  }, async () => {
    const { stack } = held;
    const refuse = () =>
      fetch(`${stack.ats.lever.url}/_sandbox/refuse-uploads`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ count: 1 }),
      });
    const { ats, application, step } = await interviewed('lever', {}, refuse);
    expect(ats.filesOf(application.id)).toEqual([]);
    expect(step).toMatch(/^not-attached:the ATS refused it/);
    expect(await stack.dlqDepths()).toEqual({ stage: 0, report: 0 });
  });
});
