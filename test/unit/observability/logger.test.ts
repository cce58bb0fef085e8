import { describe, expect, it, vi } from 'vitest';
import { createLogger, scrub } from '../../../shared/observability/logger';
import { withLogContext } from '../../../shared/observability/log-context';
import { decideAdvance } from '../../../shared/pipeline';
import { reportFactory } from '../../helpers/pipeline-records';

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
      { greenhouseCompletionKey: 'k', partnerKey: 'p', candidateInviteUrl: 'https://i/1', jobKey: 'acme#1#t' },
      {
        greenhouseCompletionKey: '[redacted]',
        partnerKey: '[redacted]',
        candidateInviteUrl: '[redacted]',
        jobKey: 'acme#1#t',
      },
    ],
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

/** Both streams, in the order written (Powertools writes INFO to stdout, WARN and ERROR to stderr). */
function captureOutput(lines: string[]): () => void {
  const spies = [process.stdout, process.stderr].map((stream) =>
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }),
  );
  return () => {
    for (const spy of spies) spy.mockRestore();
  };
}

describe('Function: createLogger and the level', () => {
  /** What one logger writes at each level, with POWERTOOLS_LOG_LEVEL set to `level` (undefined: unset). */
  function written(level: string | undefined): string[] {
    const previous = process.env.POWERTOOLS_LOG_LEVEL;
    if (level === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
    else process.env.POWERTOOLS_LOG_LEVEL = level;
    const lines: string[] = [];
    const restore = captureOutput(lines);
    try {
      const logger = createLogger('level-test');
      logger.info('an info line');
      logger.warn('a warn line');
      logger.error('an error line');
    } finally {
      restore();
      if (previous === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
      else process.env.POWERTOOLS_LOG_LEVEL = previous;
    }
    return lines.map((l) => String((JSON.parse(l) as { level: string }).level));
  }

  it.each([
    ['ERROR', ['ERROR']],
    ['WARN', ['WARN', 'ERROR']],
    ['INFO', ['INFO', 'WARN', 'ERROR']],
    ['DEBUG', ['INFO', 'WARN', 'ERROR']],
  ])('POWERTOOLS_LOG_LEVEL=%s writes %j, with no change to the code', (level, expected) => {
    expect(written(level)).toEqual(expected);
  });

  it('adds the invocation and delivery keys of its context to every line', () => {
    const lines: string[] = [];
    const restore = captureOutput(lines);
    try {
      const logger = createLogger('context-test');
      withLogContext({ function_request_id: 'req-1', correlation_id: 'delivery-1' }, () =>
        logger.warn('inside', { connectionId: 'acme' }),
      );
      logger.warn('outside');
    } finally {
      restore();
    }
    const [inside, outside] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(inside).toMatchObject({ function_request_id: 'req-1', correlation_id: 'delivery-1', connectionId: 'acme' });
    expect(inside?.component).toBe('context-test');
    expect(outside?.correlation_id).toBeUndefined();
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
