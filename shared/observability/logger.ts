import { Logger } from '@aws-lambda-powertools/logger';
import type { PipelineLogger } from '../pipeline/ports';
import { logContext } from './log-context';

/** Attribute names that may hold personal data or secrets: their values never reach a log line. */
const SENSITIVE_KEYS =
  /(email|e-mail|name|phone|secret|token|password|apikey|api_key|authorization|signature|key|url|credential)/i;
/**
 * Every quantifier is bounded (a local part is at most 64 characters, a domain 253, a top-level domain 24), so a
 * scan does a bounded amount of work per position: linear in the text, where `[…]+@` was quadratic on a long run
 * of letters without an `@`.
 */
const EMAIL_PATTERN = /[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,24}/g;
/** Longer strings are cut before they are scrubbed: a log line carries ids and reasons, never documents. */
export const MAX_LOGGED_STRING = 2_000;
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

/** A string as it may be logged: cut to `MAX_LOGGED_STRING` characters, then every e-mail address masked. */
export function scrubText(text: string): string {
  const cut =
    text.length > MAX_LOGGED_STRING
      ? `${text.slice(0, MAX_LOGGED_STRING)}…[${text.length - MAX_LOGGED_STRING} more characters]`
      : text;
  return maskEmails(cut);
}

/** Every e-mail address in the text as `[email]`; linear in the text's length. */
export function maskEmails(text: string): string {
  return text.replace(EMAIL_PATTERN, '[email]');
}

/** Removes personal data from log attributes: by key, and any e-mail address left inside a string. */
export function scrub(value: unknown, key = '', depth = 0): unknown {
  if (depth > 6) return '[deep]';
  if (key && !KEEP_KEYS.has(key) && SENSITIVE_KEYS.test(key)) return '[redacted]';
  if (typeof value === 'string') return scrubText(value);
  if (Array.isArray(value)) return value.slice(0, 50).map((item) => scrub(item, '', depth + 1));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, scrub(v, k, depth + 1)]),
    );
  }
  return value;
}

/**
 * JSON log lines through Powertools Logger, as its docs intend: the level from `POWERTOOLS_LOG_LEVEL` (or Lambda's
 * own `AWS_LAMBDA_LOG_LEVEL`), never set in code; the service from `POWERTOOLS_SERVICE_NAME` (each function's),
 * `component` naming the module. Every attribute is scrubbed first; the invocation's and the delivery's keys
 * (./log-context.ts) are added after, being ids the connector made.
 */
export function createLogger(component: string): PipelineLogger & { powertools: Logger } {
  const powertools = new Logger({
    ...(process.env.POWERTOOLS_SERVICE_NAME ? {} : { serviceName: 'ats-interview-connector' }),
    persistentKeys: { component },
  });
  const write =
    (level: 'info' | 'warn' | 'error') =>
    (message: string, attributes: Record<string, unknown> = {}) => {
      // Scrubbing costs time; a line the level filter drops is not scrubbed at all.
      if (!isEnabled(powertools, level)) return;
      powertools[level](scrubText(message), { ...(scrub(attributes) as Record<string, unknown>), ...logContext() });
    };
  return { powertools, info: write('info'), warn: write('warn'), error: write('error') };
}

const LEVEL_ORDER = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;

function isEnabled(logger: Logger, level: 'info' | 'warn' | 'error'): boolean {
  const threshold = LEVEL_ORDER.indexOf(logger.getLevelName() as (typeof LEVEL_ORDER)[number]);
  return LEVEL_ORDER.indexOf(level.toUpperCase() as (typeof LEVEL_ORDER)[number]) >= threshold;
}
