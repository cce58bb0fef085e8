import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { MOVES, type Move, stateCondition } from '../pipeline/application-states';

export interface UpdateParts {
  UpdateExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, AttributeValue>;
}

/**
 * Builds `SET a = :a, b = if_not_exists(b, :b) REMOVE c` from plain fields; undefined fields are skipped. A field
 * may be a path into a map (`steps.inviteEmail`: `#steps.#inviteEmail = :steps_inviteEmail`). `extraValues` carry
 * the placeholders a condition expression uses.
 */
export function buildUpdate(options: {
  set?: Record<string, unknown>;
  setIfMissing?: Record<string, unknown>;
  increment?: string[];
  remove?: string[];
  extraValues?: Record<string, unknown>;
}): UpdateParts {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ...options.extraValues };
  const sets: string[] = [];
  const name = (field: string): string =>
    field
      .split('.')
      .map((segment) => {
        names[`#${segment}`] = segment;
        return `#${segment}`;
      })
      .join('.');
  const value = (field: string, given: unknown): string => {
    const placeholder = `:${field.replaceAll('.', '_')}`;
    values[placeholder] = given;
    return placeholder;
  };
  for (const [field, given] of Object.entries(options.set ?? {})) {
    if (given === undefined) continue;
    sets.push(`${name(field)} = ${value(field, given)}`);
  }
  for (const [field, given] of Object.entries(options.setIfMissing ?? {})) {
    if (given === undefined) continue;
    sets.push(`${name(field)} = if_not_exists(${name(field)}, ${value(field, given)})`);
  }
  for (const field of options.increment ?? []) {
    values[':zero'] = 0;
    values[':one'] = 1;
    sets.push(`${name(field)} = if_not_exists(${name(field)}, :zero) + :one`);
  }
  const removes = (options.remove ?? []).map(name);
  const expression = [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : '']
    .filter(Boolean)
    .join(' ');
  return {
    UpdateExpression: expression,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: marshall(values, { removeUndefinedValues: true }),
  };
}

/** Adds the names a condition uses (`#state`) to an update's names. */
export function withNames(parts: UpdateParts, ...fields: string[]): UpdateParts {
  for (const field of fields) parts.ExpressionAttributeNames[`#${field}`] = field;
  return parts;
}

/**
 * The update that makes `move` (application-states.ts): `#state` set to where the move goes, before the update's own
 * fields, and the condition that the application is in a state the move starts from. `names`: the other fields a
 * condition names.
 */
export function moveUpdate(
  move: Move,
  update: Parameters<typeof buildUpdate>[0],
  ...names: string[]
): { update: UpdateParts; condition: string } {
  const from = stateCondition(move);
  const parts = buildUpdate({
    ...update,
    set: { state: MOVES[move].to, ...update.set },
    extraValues: { ...from.values, ...update.extraValues },
  });
  return { update: withNames(parts, 'state', ...names), condition: from.condition };
}
