import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { waitFor } from '../../helpers/local-http';
import { runOps } from '../../helpers/ops-cli';
import { startTestStack, emailsTo, scanTable } from '../../helpers/local-stack';
import { startRefusingSes } from '../../helpers/refusing-ses';

const WORK_DIR = `.local/test-ses-${process.pid}`;

describe('Invites survive e-mail refusal: SES refuses, the ATS note with the link still goes out', () => {
  let stack: LocalStack;
  let ses: Awaited<ReturnType<typeof startRefusingSes>> | undefined;

  beforeAll(async () => {
    stack = await startTestStack(WORK_DIR, {
      wrapEndpoints: async (endpoints) => {
        ses = await startRefusingSes(endpoints.ses, (body) => body.includes('+refused@'));
        return { ...endpoints, ses: ses.url };
      },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await ses?.close();
    rmSync(WORK_DIR, { recursive: true, force: true });
  });

  it('posts the note once, records why the e-mail failed, lists it as failed; the DLQs stay empty', async () => {
    const email = `ses-${randomUUID().slice(0, 8)}+refused@candidates.example.com`;
    const application = stack.ats.greenhouse.addCandidate({ firstName: 'Sam', lastName: 'Sandbox', email });
    await stack.ats.greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview', repeat: 2 });
    const inviteNotes = () =>
      stack.ats.greenhouse.notesOf(application.id).filter((n) => n.includes('ai-interview-invite:'));
    await waitFor(() => inviteNotes().length > 0, 20_000, 'the invite note');
    await stack.waitForQuiet();
    expect(inviteNotes()).toHaveLength(1);
    expect(inviteNotes()[0]).toMatch(/https?:\/\//);
    expect(ses?.stats.refused).toBe(1);
    expect(await emailsTo(stack, email)).toHaveLength(0);
    const [record] = (await scanTable(stack, stack.tables.applications)).filter(
      (r) => r.atsApplicationId === application.id,
    );
    // The e-mail step ended refused, with SES's reason: never sent, and not tried again.
    expect(record).toMatchObject({
      state: 'invited',
      steps: { inviteEmail: { outcome: 'refused', value: 'MessageRejected' }, inviteNote: {} },
    });
    expect(await stack.dlqDepths()).toEqual({ stage: 0, report: 0 });

    const listed = (await runOps(stack, 'failed')).out;
    expect(listed).toContain(`application ${application.id}`);
    expect(listed).toContain('refused by SES (MessageRejected)');
    // The recruiter reads why in the ATS, once: the message came twice.
    const told = stack.ats.greenhouse
      .notesOf(application.id)
      .filter((n) => n.includes('AI interview invitation not sent'));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain('the mail service refused the invitation e-mail (MessageRejected)');
  }, 90_000);

  it('e-mails everyone else as before', async () => {
    const email = `ses-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = stack.ats.greenhouse.addCandidate({ firstName: 'Ona', lastName: 'Fine', email });
    await stack.ats.greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    await waitFor(async () => (await emailsTo(stack, email)).length === 1, 20_000, 'the invite e-mail');
  });
});
