import { describe, expect, it, vi } from 'vitest';
import { createLogger, scrub } from '../../../shared/observability/logger';
import { decideAdvance } from '../../../shared/pipeline';
import { reportFactory } from '../../helpers/pipeline-fakes';

describe('Function: scrub', () => {
  it.each([
    [{ candidateEmail: 'ana@example.com' }, { candidateEmail: '[redacted]' }],
    [{ candidate: { name: 'Ana Ruiz', phone: '+34 600' } }, { candidate: { name: '[redacted]', phone: '[redacted]' } }],
    [
      { apiKey: 'sk-1', interviewWebhookToken: 'tok', authorization: 'Bearer x' },
      { apiKey: '[redacted]', interviewWebhookToken: '[redacted]', authorization: '[redacted]' },
    ],
    [{ detail: 'mail bounced for ana.ruiz+jobs@example.co.uk today' }, { detail: 'mail bounced for [email] today' }],
    [
      { connectionId: 'acme', reportId: 'r1', code: 'ats-forbidden' },
      { connectionId: 'acme', reportId: 'r1', code: 'ats-forbidden' },
    ],
  ])('scrubs %j', (input, expected) => {
    expect(scrub(input)).toEqual(expected);
  });

  it('writes JSON lines with no personal data', () => {
    const lines: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const info = vi
      .spyOn(console, 'info')
      .mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    try {
      createLogger('test').info('invite sent to ana@example.com', { candidateName: 'Ana Ruiz', connectionId: 'acme' });
    } finally {
      spy.mockRestore();
      info.mockRestore();
    }
    const text = lines.join('\n');
    expect(text).toContain('acme');
    expect(text).not.toContain('ana@example.com');
    expect(text).not.toContain('Ana Ruiz');
  });
});

describe('Function: decideAdvance', () => {
  const rule = { minAiMatchScore: 75, maxProctoringViolations: 0, toStage: { name: 'Next' } };
  it.each([
    [{ ai_match_score: 75 }, true, 'Advanced automatically'],
    [{ ai_match_score: 74.9 }, false, 'AI match score 74.9 is below 75'],
    [
      { ai_match_score: 90, proctoring_violations: [{ type: 'tab_switch', value: '1', description: '' }] },
      false,
      '1 proctoring violation (at most 0 allowed)',
    ],
    [{ ai_match_score: null }, false, 'the report has no AI match score'],
  ])('%j → advance %s', (report, advance, explanation) => {
    const decision = decideAdvance(rule, reportFactory(report as never));
    expect(decision.advance).toBe(advance);
    expect(decision.explanation).toContain(explanation);
  });

  it('never advances without a rule, and says a recruiter decides', () => {
    expect(decideAdvance(undefined, reportFactory())).toEqual({
      advance: false,
      explanation: 'No automatic stage move is configured; a recruiter decides.',
    });
  });
});
