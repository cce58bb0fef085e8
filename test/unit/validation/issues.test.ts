import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { describeFirstIssue } from '../../../shared/validation';

/** The message for `input` against `schema`, as every 400 and refusal of the connector says it. */
const messageOf = (schema: v.GenericSchema, input: unknown) => {
  const parsed = v.safeParse(schema, input);
  if (parsed.success) throw new Error('expected a refusal');
  return describeFirstIssue(parsed.issues).message;
};

describe('Function: describeFirstIssue', () => {
  it('never repeats the value it refused: a key, an e-mail, a choice', () => {
    const secret = v.object({ interviewApiKey: v.string() });
    expect(messageOf(secret, { interviewApiKey: 98765432109876 })).toBe(
      'interviewApiKey: Invalid type: Expected string',
    );
    const email = messageOf(v.object({ email: v.pipe(v.string(), v.email()) }), { email: 'ana.ruiz@@example.com' });
    expect(email).toMatch(/^email: Invalid email/);
    expect(email).not.toContain('ana.ruiz');
    expect(messageOf(v.object({ ats: v.picklist(['ashby', 'lever']) }), { ats: 'sk-live-123' })).not.toContain(
      'sk-live',
    );
  });

  it('says a value outside a list is a wrong choice, naming the choices; a missing one is required', () => {
    const schema = v.object({ visibility: v.picklist(['admin_only', 'private', 'public']) });
    expect(messageOf(schema, { visibility: 'secret-ish' })).toBe(
      'visibility: must be one of "admin_only", "private", "public"',
    );
    expect(messageOf(schema, {})).toBe('visibility: is required');
    expect(messageOf(v.object({ q: v.picklist(['a', 'b'], 'must be a or b') }), { q: 'c' })).toBe('q: must be a or b');
  });

  it('keeps what was received where it is a kind of value (null, an array), not the value', () => {
    expect(messageOf(v.object({ name: v.string() }), { name: null })).toBe(
      'name: Invalid type: Expected string but received null',
    );
  });

  it('keeps what was received where it is a count, not the value', () => {
    expect(messageOf(v.object({ id: v.pipe(v.string(), v.maxLength(3)) }), { id: 'abcdef' })).toBe(
      'id: Invalid length: Expected <=3 but received 6',
    );
  });
});
