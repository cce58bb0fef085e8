import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDoctor, sectionOf } from '../../helpers/doctor';
import { invitedInterviewId, useTestStack } from '../../helpers/local-stack';

// A file of its own beside doctor.test.ts: each stack here starts as a new customer's would, and the two files run
// side by side.
describe('npm run doctor -- --dry-run', () => {
  const held = useTestStack('doctor-dry');

  /** Requests by route whose method writes. */
  const writes = (requests: Record<string, number>) =>
    Object.entries(requests).filter(([route]) => !route.startsWith('GET '));

  it('prints what a stage change would do, and writes nothing anywhere', async () => {
    const greenhouse = held.stack.ats.greenhouse;
    const waiting = greenhouse.addCandidate({ firstName: 'Ola', lastName: 'Berg', email: 'ola.berg@example.com' });
    const ready = greenhouse.addCandidate({ firstName: 'Ivo', lastName: 'Raft', email: 'ivo.raft@example.com' });
    // Moved with the webhooks off: the connector hears nothing, as when a delivery is lost.
    greenhouse.setWebhooksEnabled(false);
    await greenhouse.moveCandidate({ applicationId: ready.id, stageName: 'AI Interview' });
    greenhouse.setWebhooksEnabled(true);
    const atsBefore = structuredClone(greenhouse.requests());
    const serviceBefore = structuredClone(held.stack.interview.state.requests);

    const args = ['--stack', held.stack.stackFile, '--dry-run', '--connection', 'demo-greenhouse', '--application'];
    const none = await runDoctor([...args, waiting.id]);
    expect(none.output).toContain('trigger ai-screen: does not match: its stage is "AI Interview"');
    expect(none.output).toContain('a stage change into this stage would do nothing');
    const run = await runDoctor([...args, ready.id]);
    expect(run.code).toBe(0);
    expect(run.output).toContain(
      `application ${ready.id}: job 3301 (Backend Engineer), stage "AI Interview" (id 9001)`,
    );
    expect(run.output).toContain('has e-mail address');
    expect(run.output).toContain('trigger ai-screen: matches');
    expect(run.output).toContain('trigger ai-screen: the connector holds no record of this application yet');
    expect(run.output).toMatch(
      /interview: would create "Backend Engineer – AI interview \(ref demo-greenhouse\/3301\/ai-screen\)"/,
    );
    expect(run.output).toContain(
      "invite: the interview's link; an e-mail from talent@demo.example.com, a note on the application",
    );
    expect(run.output).toContain('AI match score 40: a note; Flagged for review: AI match score 40 is below 75.');
    expect(run.output).toMatch(/AI match score 75: a note; Advanced automatically.* → move to Hiring Manager Review/);
    expect(run.output).toMatch(/AI match score 90: a note; Advanced automatically/);
    expect(run.output).not.toMatch(/ivo\.raft|ola\.berg/);

    // A candidate rejected while in the stage: the pipeline would not contact them, and the dry run says so.
    const left = greenhouse.addCandidate({ firstName: 'Uma', lastName: 'Left', email: 'uma.left@example.com' });
    greenhouse.setWebhooksEnabled(false);
    await greenhouse.moveCandidate({ applicationId: left.id, stageName: 'AI Interview' });
    await greenhouse.changeLifecycle({ applicationId: left.id, action: 'reject' });
    greenhouse.setWebhooksEnabled(true);
    const gone = await runDoctor([...args, left.id]);
    expect(gone.output).toMatch(
      /the candidate has left the process \(rejected[^)]*\): a stage change would invite no one/,
    );
    expect(gone.output).not.toContain('trigger ai-screen');

    expect(writes(greenhouse.requests())).toEqual(writes(atsBefore));
    expect(writes(held.stack.interview.state.requests)).toEqual(writes(serviceBefore));
    expect(greenhouse.notesOf(ready.id)).toEqual([]);
    expect(greenhouse.stageNameOf(ready.id)).toBe('AI Interview');

    // One the connector invited: the dry run says it holds that record, so a stage change would not invite twice.
    const invited = greenhouse.addCandidate({ firstName: 'Eda', lastName: 'Kaya', email: 'eda.kaya@example.com' });
    await greenhouse.moveCandidate({ applicationId: invited.id, stageName: 'AI Interview' });
    await invitedInterviewId(held.stack, 'eda.kaya@example.com', 30_000);
    await held.stack.waitForQuiet();
    const again = await runDoctor([...args, invited.id]);
    expect(again.output).toMatch(
      /trigger ai-screen: the connector already holds this application \(invited, last changed /,
    );
    expect(again.output).toContain('a stage change acts on that record and invites no one twice');
    expect(again.output).toContain(`npm run ops -- status --connection demo-greenhouse --application ${invited.id}`);
  }, 150_000);
});

describe('a new customer: nothing registered yet', () => {
  const held = useTestStack('doctor-new', { registerAtsWebhooks: false, registerInterviewWebhooks: false });

  it('fails on the missing webhooks, registers each ATS webhook once over two runs, then passes', async () => {
    const before = await runDoctor(['--stack', held.stack.stackFile]);
    expect(before.code).toBe(1);
    expect(before.output).toContain(
      '✗ interview service: no interview_report.created webhook points at this connection',
    );
    expect(sectionOf(before.output, 'demo-lever')).toContain('✗ lever has no candidateStageChange webhook');
    expect(sectionOf(before.output, 'demo-workable')).toContain('✗ workable has no candidate_moved webhook');
    expect(sectionOf(before.output, 'demo-ashby')).toContain(
      '→ run npm run doctor -- --connection demo-ashby --register-webhooks',
    );

    const first = await runDoctor(['--stack', held.stack.stackFile, '--register-webhooks']);
    expect(sectionOf(first.output, 'demo-lever')).toContain('✓ candidateStageChange: registered');
    expect(sectionOf(first.output, 'demo-ashby')).toContain('✓ candidateMerge: registered');
    const second = await runDoctor(['--stack', held.stack.stackFile, '--register-webhooks']);
    expect(second.output).not.toContain(': registered (');
    expect(sectionOf(second.output, 'demo-workable')).toContain('✓ candidate_moved: already registered');
    // Created once each: four Lever webhooks, five Ashby ones, one Workable subscription.
    expect(held.stack.ats.lever.requests()['POST /v1/webhooks']).toBe(4);
    expect(held.stack.ats.ashby.requests()['POST /webhook.create']).toBe(5);
    expect(held.stack.ats.workable.requests()['POST /spi/v3/subscriptions']).toBe(1);
    const secrets = JSON.parse(readFileSync(join(held.workDir, 'secrets.json'), 'utf8')) as Record<
      string,
      Record<string, unknown>
    >;
    const lever = secrets[held.stack.connections.find((c) => c.id === 'demo-lever')?.secretRef as string];
    expect(Object.keys(lever?.atsWebhookSecrets as object).sort()).toEqual([
      'candidateArchiveChange',
      'candidateDeleted',
      'candidateHired',
      'candidateStageChange',
    ]);

    // The interview service's webhooks are set in its settings (it has no API for them), as the line says.
    for (const c of held.stack.connections) {
      const s = held.stack.secrets[c.secretRef];
      held.stack.interview.registerWebhook(
        `${held.stack.gatewayUrl}/webhooks/interview/${c.id}/${s?.interviewWebhookToken}`,
        'interview_report.created',
        s?.interviewApiKey,
      );
    }
    const after = await runDoctor(['--stack', held.stack.stackFile]);
    expect(after.output).not.toContain('✗');
    expect(after.code).toBe(0);
  }, 240_000);

  it('verifies a Lever stage change with the token the registration recorded, and invites', async () => {
    const app = held.stack.ats.lever.addCandidate({ firstName: 'Rae', lastName: 'Lin', email: 'rae.lin@example.com' });
    const [delivery] = await held.stack.ats.lever.moveCandidate({ applicationId: app.id, stageName: 'AI Interview' });
    expect(delivery?.status).toBe(200);
    expect(await invitedInterviewId(held.stack, 'rae.lin@example.com')).toMatch(/\w/);
  }, 60_000);
});
