import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { waitFor } from '../../helpers/local-http';
import { invitedInterviewId, reportNotes, startTestStack, takeInterview } from '../../helpers/local-stack';

type Line = Record<string, unknown>;

describe('log lines and metrics of a real run', () => {
  let stack: LocalStack;
  let workDir: string;
  const captured: string[] = [];
  let restore: () => void;

  beforeAll(async () => {
    // Everything the handlers write (INFO to stdout, WARN and ERROR to stderr), as Lambda ships it to CloudWatch.
    const spies = [process.stdout, process.stderr].map((stream) =>
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
        captured.push(String(chunk));
        return true;
      }),
    );
    restore = () => {
      for (const spy of spies) spy.mockRestore();
    };
    workDir = mkdtempSync(join(tmpdir(), 'observability-'));
    stack = await startTestStack(workDir, { logLevel: 'INFO', metrics: true });
  }, 120_000);
  afterAll(async () => {
    restore?.();
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  const lines = (): Line[] =>
    captured
      .join('')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Line];
        } catch {
          return [];
        }
      });

  it('carries one correlation id per delivery, webhook to worker, and the request id on every line', async () => {
    const email = 'lina.park@candidates.example.com';
    const application = stack.greenhouse.addCandidate({ firstName: 'Lina', lastName: 'Park', email, jobId: '3301' });
    await stack.greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    const interviewId = await invitedInterviewId(stack, email);
    const { report_id: reportId } = takeInterview(stack, interviewId, { name: 'Lina Park', email });
    await waitFor(() => reportNotes(stack, reportId).length > 0, 20_000, 'the report note');
    await stack.waitForQuiet();
    // A worker thread's lines reach this process's output a moment after its work is done.
    await waitFor(
      () => lines().some((l) => l.message === 'report handled' && l.reportId === reportId),
      10_000,
      "the write-back's last line",
    );

    const logged = lines().filter((l) => typeof l.level === 'string');
    expect(logged.length).toBeGreaterThan(3);
    for (const line of logged) {
      expect(line.function_request_id, JSON.stringify(line)).toMatch(/^[\w-]{8,}$/);
      expect(line.correlation_id, JSON.stringify(line)).toMatch(/^[\w.:-]+$/);
      expect(typeof line.cold_start).toBe('boolean');
    }
    const enqueued = logged.find((l) => l.message === 'ats webhook: enqueued' && l.connectionId === 'demo-greenhouse');
    const handled = logged.filter((l) => l.message === 'stage-entered handled' && l.outcome === 'invited');
    expect(enqueued?.function_name).toBe('AtsWebhook');
    expect(handled).toHaveLength(1);
    expect(handled[0]?.correlation_id).toBe(enqueued?.correlation_id);
    expect(handled[0]?.function_request_id).not.toBe(enqueued?.function_request_id);
    // The report's delivery: the interview webhook's id reaches the write-back worker's last line.
    const reportIn = logged.find((l) => l.message === 'interview webhook: report enqueued' && l.reportId === reportId);
    const reportOut = logged.filter((l) => l.message === 'report handled' && l.reportId === reportId);
    expect(reportIn?.correlation_id).toBeDefined();
    expect(reportOut.at(-1)?.correlation_id).toBe(reportIn?.correlation_id);
    expect(captured.join('')).not.toContain(email);
  }, 90_000);

  it('writes the business metrics as embedded-metric-format lines, the connection as metadata', () => {
    const emf = lines().filter((l) => (l._aws as { CloudWatchMetrics?: unknown[] } | undefined)?.CloudWatchMetrics);
    const named = (metric: string) => emf.filter((l) => l[metric] === 1 && l.connectionId === 'demo-greenhouse');
    expect(named('Invited')).toHaveLength(1);
    expect(named('WrittenBack')).toHaveLength(1);
    const [first] = named('Invited');
    const aws = first?._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] } | undefined;
    const directive = aws?.CloudWatchMetrics[0];
    expect(directive?.Namespace).toBe('AtsInterviewConnector');
    // One dimension (the service): the connection is not one, so a thousand customers add no metrics.
    expect(directive?.Dimensions).toEqual([['service']]);
    expect(first?.service).toBe('ats-interview-connector');
  });
});
