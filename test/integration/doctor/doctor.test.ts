import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { runDoctor, sectionOf } from '../../helpers/doctor';
import { useTestStack } from '../../helpers/local-stack';

const SECRET_FIELDS = /[0-9a-f]{48}|sandbox-key|sandbox-token|sandbox-secret/;

/** Writes `change(secrets)` into the stack's secrets file for the length of `work`, then puts the file back. */
async function withSecrets<T>(
  stack: LocalStack,
  change: (s: Record<string, Record<string, unknown>>) => void,
  work: () => Promise<T>,
) {
  const path = JSON.parse(readFileSync(stack.stackFile, 'utf8')).files.secrets as string;
  const original = readFileSync(path, 'utf8');
  const edited = JSON.parse(original) as Record<string, Record<string, unknown>>;
  change(edited);
  writeFileSync(path, JSON.stringify(edited));
  try {
    return await work();
  } finally {
    writeFileSync(path, original);
  }
}

describe('npm run doctor on the local stack', () => {
  const held = useTestStack('doctor');
  /** The doctor on one connection while its secret is `edit`ed; the secret's name and the run. */
  const doctorWithSecret = async (connectionId: string, edit: (secret: Record<string, unknown>) => void) => {
    const ref = held.stack.connections.find((c) => c.id === connectionId)?.secretRef as string;
    const run = await withSecrets(
      held.stack,
      (s) => edit(s[ref] as Record<string, unknown>),
      () => runDoctor(['--stack', held.stack.stackFile, '--connection', connectionId]),
    );
    return { ref, run };
  };

  it('passes every check for the four demo connections, printing no secret', async () => {
    const run = await runDoctor(['--stack', held.stack.stackFile]);
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
      id: 3500 + i,
      name: `Opened ${i}`,
      stages: i === 5 ? [{ id: 9950, name: 'Hired' }] : [{ id: 9940 + i, name: 'AI Interview' }],
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

  it('names a missing permission and the feature it stops, and lists those no read can show', async () => {
    const rendered = JSON.parse(readFileSync(join(held.workDir, 'connections.json'), 'utf8'));
    rendered.connections[0].writeBack = { ...rendered.connections[0].writeBack, status: 'tags' };
    const file = join(held.workDir, 'tags.json');
    writeFileSync(file, JSON.stringify(rendered));
    const args = ['--stack', held.stack.stackFile, '--connections', file, '--connection', 'demo-greenhouse'];
    const granted = await runDoctor(args);
    expect(granted.output).toContain('✓ permission harvest:candidate_tags:list (status tags)');
    expect(granted.output).toMatch(/not checkable by a read; make sure these are granted: .*harvest:notes:create/);
    expect(granted.code).toBe(0);
    // The customer left the tag list out of the credential's scopes: Greenhouse refuses it with 403.
    held.stack.ats.greenhouse.setFaults({ forbiddenRoutes: ['GET /v3/candidate_tags'] });
    try {
      const run = await runDoctor(args);
      expect(run.output).toContain('✗ permission harvest:candidate_tags:list is missing: status tags would be refused');
      expect(run.output).toContain("→ grant harvest:candidate_tags:list to the connection's greenhouse credentials");
      expect(run.code).toBe(1);
    } finally {
      held.stack.ats.greenhouse.setFaults({ forbiddenRoutes: [] });
    }
  }, 120_000);

  it('names the closest stage when a trigger names one the ATS does not have', async () => {
    const rendered = JSON.parse(readFileSync(join(held.workDir, 'connections.json'), 'utf8'));
    rendered.connections[0].triggers[0].stage = { name: 'AI Intervew' };
    const file = join(held.workDir, 'misspelt.json');
    writeFileSync(file, JSON.stringify(rendered));
    const run = await runDoctor([
      '--stack',
      held.stack.stackFile,
      '--connections',
      file,
      '--connection',
      'demo-greenhouse',
    ]);
    expect(run.output).toContain('✗ trigger ai-screen: stage "AI Intervew": job 3301 has no stage named');
    expect(run.output).toContain('→ the closest names there: "AI Interview"');
    expect(run.code).toBe(1);
  }, 60_000);

  it('says when the interview-service key may not read reports', async () => {
    const { run } = await doctorWithSecret('demo-ashby', (secret) => {
      secret.interviewApiKey = held.stack.interview.limitedApiKey;
    });
    expect(run.output).toContain('✓ interview service: the key works');
    expect(run.output).toMatch(/✗ interview service: reports: .*403/);
    expect(run.output).toContain('→ ask the interview service for a key with permission for reports');
    expect(run.code).toBe(1);
  }, 60_000);

  it('names the missing field of a secret', async () => {
    const { ref, run } = await doctorWithSecret('demo-lever', (secret) => void delete secret.atsApiKey);
    expect(run.output).toContain(`✗ secret ${ref} lacks atsApiKey`);
    expect(run.output).toContain('→ add atsApiKey to the secret');
    expect(run.code).toBe(1);
  }, 60_000);

  it('says when the ATS webhook is disabled', async () => {
    held.stack.ats.workable.setWebhooksEnabled(false);
    held.stack.ats.ashby.setWebhooksEnabled(false);
    try {
      const run = await runDoctor(['--stack', held.stack.stackFile]);
      expect(sectionOf(run.output, 'demo-workable')).toContain(
        "✗ workable's candidate_moved webhook to this connection is disabled",
      );
      expect(sectionOf(run.output, 'demo-ashby')).toContain(
        "✗ ashby's candidateStageChange webhook to this connection is disabled",
      );
      expect(run.output).toContain("→ enable it in workable's webhook settings");
      expect(run.code).toBe(1);
    } finally {
      held.stack.ats.workable.setWebhooksEnabled(true);
      held.stack.ats.ashby.setWebhooksEnabled(true);
    }
  }, 60_000);
});
