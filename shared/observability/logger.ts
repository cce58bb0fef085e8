import { Logger } from '@aws-lambda-powertools/logger';
import type { PipelineLogger } from '../pipeline/ports';

/** Attribute names that may hold personal data or secrets: their values never reach a log line. */
const SENSITIVE_KEYS = /(email|e-mail|name|phone|secret|token|password|apikey|api_key|authorization|signature)/i;
const EMAIL_PATTERN = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
const KEEP_KEYS = new Set([
  'connectionId',
  'interviewId',
  'reportId',
  'triggerId',
  'atsApplicationId',
  'deliveryId',
  'jobKey',
  'messageId',
  'code',
  'outcome',
  'source',
  'kind',
]);

/** Removes personal data from log attributes: by key, and any e-mail address left inside a string. */
export function scrub(value: unknown, key = '', depth = 0): unknown {
  if (depth > 6) return '[deep]';
  if (key && !KEEP_KEYS.has(key) && SENSITIVE_KEYS.test(key)) return '[redacted]';
  if (typeof value === 'string') return value.replace(EMAIL_PATTERN, '[email]');
  if (Array.isArray(value)) return value.slice(0, 50).map((item) => scrub(item, '', depth + 1));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, scrub(v, k, depth + 1)]),
    );
  }
  return value;
}

/** JSON log lines through Powertools Logger, with every attribute scrubbed first. */
export function createLogger(
  serviceName: string,
  options: { correlationId?: string } = {},
): PipelineLogger & { powertools: Logger } {
  const powertools = new Logger({ serviceName, logLevel: (process.env.LOG_LEVEL as 'INFO' | undefined) ?? 'INFO' });
  if (options.correlationId) powertools.appendKeys({ correlationId: options.correlationId });
  const write =
    (level: 'info' | 'warn' | 'error') =>
    (message: string, attributes: Record<string, unknown> = {}) => {
      powertools[level](scrub(message) as string, scrub(attributes) as Record<string, unknown>);
    };
  return { powertools, info: write('info'), warn: write('warn'), error: write('error') };
}
