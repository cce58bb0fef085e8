import * as v from 'valibot';

export interface IssueDescription {
  /** The dotted path of the first issue, under `prefix`, or `fallbackField` when it has none. */
  field: string;
  /** `field: message`, the form every 400 and every refusal of the connector uses. */
  message: string;
}

/**
 * The first of valibot's issues as the field it names and a message that starts with that field, so an error says
 * which field to fix (`data.report_id: Invalid length`). Only the path and valibot's message are used, never the
 * value: the value may be personal data or a secret.
 */
export function describeFirstIssue(
  issues: readonly v.BaseIssue<unknown>[],
  options: { prefix?: string; fallbackField?: string } = {},
): IssueDescription {
  const fallbackField = options.fallbackField ?? '(root)';
  const first = issues[0];
  const path = first ? v.getDotPath(first) : null;
  const field = [options.prefix, path].filter(Boolean).join('.') || options.prefix || fallbackField;
  return { field, message: `${field}: ${first ? issueMessage(first) : 'invalid value'}` };
}

/**
 * Valibot's message, with a missing or empty field said plainly: `is required` for its `Invalid key: Expected "stage"
 * but received undefined`, `must not be empty` for an empty text. Never the value (see describeFirstIssue).
 */
export function issueMessage(issue: v.BaseIssue<unknown>): string {
  if (issue.kind === 'schema' && issue.type === 'object' && issue.input === undefined && issue.path?.length)
    return 'is required';
  // Valibot's own for an empty text: `Invalid length: Expected !0 but received 0`.
  if (issue.type === 'non_empty' && issue.message.startsWith('Invalid length')) return 'must not be empty';
  // Valibot's own for a value outside a list (`Invalid type: Expected ("a" | "b")`): a wrong choice, said as one.
  if (issue.type === 'picklist' && issue.message.startsWith('Invalid type') && issue.input !== undefined)
    return `must be one of ${issue.expected
      ?.replace(/^\(|\)$/g, '')
      .split(' | ')
      .join(', ')}`;
  // Valibot's own messages end with what was received: the value itself for a text, a number or a format (an e-mail,
  // a key), kept only where it is a count (a length, a size).
  if (COUNTED.test(issue.type) || TYPE_WORDS.has(issue.received)) return issue.message;
  return issue.message.replace(/(:| but) received [\s\S]*$/i, '');
}

/** What valibot says it received when that is a kind of value, not the value: `… but received null`. */
const TYPE_WORDS = new Set(['null', 'undefined', 'Array', 'Object', 'Function', 'NaN']);

/** Issues whose `received` is a count, not the value: `Invalid length: Expected <=200 but received 250`. */
const COUNTED = /length|size|bytes|entries|graphemes|words/;
