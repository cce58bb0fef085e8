import { describe, expect, it } from 'vitest';
import { runDoctor, runDoctorAsTyped, SECRET_FIELDS, sectionOf, withSecrets } from '../../helpers/doctor';
import { useTestStack } from '../../helpers/local-stack';

/** The doctor on a healthy stack: each check, the order sources, Kombo's packages, open jobs (./doctor-findings). */
describe('npm run doctor on the local stack', () => {
  const held = useTestStack('doctor');

  it('passes every check for the four demo connections, printing no secret', async () => {
    // As an operator types it, through tsx: every other run here takes the same source bundled.
    const run = await runDoctorAsTyped(['--stack', held.stack.stackFile]);
    expect(run.output).not.toContain('✗');
    expect(run.output).toContain('every check passed for 4 connections');
    expect(run.code).toBe(0);
    for (const id of ['demo-greenhouse', 'demo-ashby', 'demo-lever', 'demo-workable']) {
      const section = sectionOf(run.output, id);
      expect(section).toContain('credentials work');
      expect(section).toContain('interview_report.created webhook points at this connection');
    }
    expect(sectionOf(run.output, 'demo-lever')).toContain('✓ lever sends candidateStageChange to this connection');
    expect(sectionOf(run.output, 'demo-ashby')).toContain('✓ ashby sends candidateDelete to this connection');
    expect(sectionOf(run.output, 'demo-greenhouse')).toContain('Configure → Dev Center → Web Hooks');
    expect(run.output).not.toMatch(SECRET_FIELDS);
    // Each sandbox also lists a closed or archived job without the stage: "all jobs" means the open ones.
    expect(run.output).not.toMatch(/3399|9c2e01aa-closed|ARCH0001/);
  }, 120_000);

  it('checks each order source end to end: the key accepted, the completion credential, candidatesWrite', async () => {
    const { stack } = held;
    const ok = await runDoctor(['--stack', stack.stackFile, '--connection', 'demo-greenhouse']);
    expect(ok.output).toContain("✓ greenhouse orders: the connector accepts the customer's key and lists 1 test(s)");
    expect(ok.output).toContain('✓ greenhouse orders: the completion credential Greenhouse issued is in the secret');
    expect(ok.output).toContain("✓ greenhouse orders: every test's interview template is one the service takes");
    // The completion credential left out, and the Ashby key without candidatesWrite.
    stack.ashby.assessments.candidatesWrite = false;
    try {
      const failed = await withSecrets(
        stack,
        (secrets) => delete secrets['connector/demo-greenhouse']?.greenhouseCompletionKey,
        () => runDoctor(['--stack', stack.stackFile]),
      );
      expect(failed.output).toContain('✗ greenhouse orders: no greenhouseCompletionKey: results cannot be announced');
      expect(failed.output).toContain('✗ ashby orders: the Ashby key may not send assessment.update');
      expect(failed.output).toContain('candidatesWrite permission');
      expect(failed.output).not.toMatch(SECRET_FIELDS);
      expect(failed.code).toBe(1);
    } finally {
      stack.ashby.assessments.candidatesWrite = true;
    }
  }, 120_000);

  it('shows each Kombo integration’s packages against the tests, and the command that publishes them', async () => {
    const { stack } = held;
    const inSync = await runDoctor(['--stack', stack.stackFile, '--connection', 'demo-workable']);
    expect(inSync.output).toContain('✓ kombo orders: teamtailor:globex-demo offers the 1 configured package(s)');
    expect(inSync.output).toContain('✓ kombo orders: smartrecruiters:initech-demo offers the 1 configured package(s)');
    const published = stack.kombo.packages.get('teamtailor:globex-demo') ?? [];
    stack.kombo.packages.set('teamtailor:globex-demo', [
      { id: 'retired-test', type: 'VIDEO_INTERVIEW', name: 'Retired', description: 'Retired', updated_at: '' },
    ]);
    try {
      const differs = await runDoctor(['--stack', stack.stackFile, '--connection', 'demo-workable']);
      expect(differs.output).toContain('✗ kombo orders: teamtailor:globex-demo packages differ: + backend-screen');
      expect(differs.output).toContain('- retired-test (kept: --remove deletes it)');
      expect(differs.output).toContain('npm run ops -- kombo-packages --connection demo-workable --publish');
      expect(differs.output).not.toMatch(SECRET_FIELDS);
      expect(differs.code).toBe(1);
    } finally {
      stack.kombo.packages.set('teamtailor:globex-demo', published);
    }
  }, 120_000);

  it('checks a trigger for all jobs against every open job, naming one opened without the stage', async () => {
    const jobs = held.stack.greenhouse.state.jobs;
    // Six jobs opened since, the last without the AI interview stage; with the demo's two open ones, eight.
    const added = Array.from({ length: 6 }, (_, i) => ({
      id: String(3500 + i),
      name: `Opened ${i}`,
      stages: i === 5 ? [{ id: '9950', name: 'Hired' }] : [{ id: String(9940 + i), name: 'AI Interview' }],
    }));
    jobs.push(...added);
    try {
      const run = await runDoctor(['--stack', held.stack.stackFile, '--connection', 'demo-greenhouse', '--jobs', '8']);
      expect(run.output).toContain('job 3505 has no stage named "AI Interview"');
      expect(run.output).toContain('checked the first 8 open jobs the ATS lists; --jobs N checks more');
      expect(run.output).not.toContain('3399');
      expect(run.code).toBe(1);
    } finally {
      jobs.splice(jobs.length - added.length, added.length);
    }
  }, 120_000);
});
