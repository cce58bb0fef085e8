import { createHmac, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import type { LocalStack } from '../../infra/local/local-stack';
import { invitedInterviewId, startTestStack, takeInterview } from './local-stack';

export const CONNECTION = 'demo-greenhouse';

/** Signs the way Greenhouse documents it, computed here and not with the adapter's code. */
export function greenhouseSignature(secret: string, body: string): string {
  return `sha256 ${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** A signed-body stage change of application `id` (candidate `id + 1`) into `stage`, of job 3301. */
export const stageChange = (id: number, stage: { id: number; name: string }) =>
  JSON.stringify({
    action: 'candidate_stage_change',
    payload: { application: { id, candidate: { id: id + 1 }, jobs: [{ id: 3301 }], current_stage: stage } },
  });

/**
 * The local stack for one test file (`name` its work folder), through the Greenhouse demo connection: started before
 * the file's tests, stopped after; what they post to it and read of it.
 */
export function useGreenhouseStack(name: string) {
  const dir = `.local/test-${name}-${process.pid}`;
  const held = { stack: undefined as unknown as LocalStack, secret: '', interviewToken: '' };
  beforeAll(async () => {
    held.stack = await startTestStack(dir, { reportDelayMs: 100 });
    const secrets = Object.values(held.stack.secrets)[0];
    held.secret = String(secrets?.atsWebhookSecret);
    held.interviewToken = String(secrets?.interviewWebhookToken);
  });
  afterAll(async () => {
    await held.stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${held.stack.gatewayUrl}${path}`, {
      ...{ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body },
    });
  /** A candidate of `jobId` moved into "AI Interview", invited, with the interview id from their e-mail. */
  const invitedCandidate = async (jobId = '3301') => {
    const { stack } = held;
    const email = `cand-${randomUUID().slice(0, 8)}@candidates.example.com`;
    const application = stack.greenhouse.addCandidate({ firstName: 'Test', lastName: 'Candidate', email, jobId });
    await stack.greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    return { email, application, interviewId: await invitedInterviewId(stack, email) };
  };
  return {
    held,
    invitedCandidate,
    postAts: (body: string, headers: Record<string, string>, connection = CONNECTION) =>
      post(`/webhooks/ats/${connection}`, body, headers),
    postReport: (data: Record<string, unknown>) =>
      post(
        `/webhooks/interview/${CONNECTION}/${held.interviewToken}`,
        JSON.stringify({ event: 'interview_report.created', data }),
      ),
    interviewsCreated: () => held.stack.interview.state.requests['POST /custom/interview'] ?? 0,
    stageRecords: () => held.stack.sources.invite.stats.records,
    /** An invited candidate who took the interview, its report webhook dropped (the service never sent it). */
    completedWithoutWebhook: async (score: number) => {
      const { stack } = held;
      const { email, application, interviewId } = await invitedCandidate();
      stack.interview.setFaults({ dropWebhookRate: 1 });
      const report = { ai_match_score: score, proctoring_violations: 0 };
      const { report_id: reportId } = takeInterview(stack, interviewId, { name: 'Test Candidate', email }, report);
      await stack.interview.whenIdle();
      stack.interview.setFaults({ dropWebhookRate: 0 });
      return { application, interviewId, reportId };
    },
  };
}
