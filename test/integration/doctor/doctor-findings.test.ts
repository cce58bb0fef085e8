import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDoctor, sectionOf, withSecrets } from '../../helpers/doctor';
import { useTestStack } from '../../helpers/local-stack';

/** The doctor naming what is wrong and what to do: a permission, a stage, a key, a secret's field, a webhook. */
describe('npm run doctor on the local stack: what it finds wrong', () => {
  const held = useTestStack('doctor-findings');
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
