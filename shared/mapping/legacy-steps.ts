import {
  reminderStep,
  type ApplicationRecord,
  type ApplicationSteps,
  type StepName,
  type StepRecord,
} from '../pipeline/records';

/**
 * Applications recorded before the steps map kept each step in fields of their own (`inviteEmailAt`,
 * `remindersStarted`, `statusRank`...). An item is read as one record with every step in its map, those fields
 * turned into steps; a step written again takes its old fields away; a step only one caller may begin is refused
 * when its old fields say it was begun. Items written since hold the map only. This module can go once the last
 * such item has expired (the applications' retention, `retention.applicationDays`).
 */
const OLD_FIELDS: Partial<Record<StepName, readonly string[]>> = {
  serviceInvite: ['serviceInviteStartedAt', 'serviceInviteAt'],
  inviteEmail: ['inviteEmailStartedAt', 'inviteEmailAt', 'inviteEmailUncertain', 'inviteEmailRefused'],
  inviteNote: ['inviteNoteAt'],
  reportLink: ['reportLinkAt'],
  reportNote: ['reportNoteId', 'reportNoteAt'],
  stageMove: ['movedToStageId', 'movedAt'],
  expiryNote: ['expiryNoteAt', 'expiryLeaseUntil'],
};
/** Fields shared by several steps (every reminder) or read by a begin's condition (the status): never taken away. */
const KEPT_OLD_FIELDS = ['remindersStarted', 'remindersSent', 'lastReminderAt', 'statusTag', 'statusRank'];
const ALL_OLD_FIELDS = new Set([...Object.values(OLD_FIELDS).flat(), ...KEPT_OLD_FIELDS]);

/** Every old step field: taken away when an invitation begins afresh (a re-invitation). */
export const LEGACY_STEP_FIELDS: readonly string[] = [...ALL_OLD_FIELDS].filter((f): f is string => f !== undefined);
/** The old fields of the status: taken away when its claim starts again (an undone exit, an extension). */
export const LEGACY_STATUS_FIELDS: readonly string[] = ['statusTag', 'statusRank'];

/** The old fields a write of `name` takes away, so the map alone says where that step stands. */
export const oldFieldsOf = (name: StepName): readonly string[] => OLD_FIELDS[name] ?? [];

/** What a begin's condition adds for an item with old fields: a reminder begun, a status ranked, a note held. */
export const OLD_BEGIN_CONDITIONS = {
  once: '(attribute_not_exists(remindersStarted) OR remindersStarted <= :n)',
  lease: 'attribute_not_exists(expiryNoteAt) AND (attribute_not_exists(expiryLeaseUntil) OR expiryLeaseUntil < :now)',
  rank: '(attribute_not_exists(statusRank) OR statusRank <= :rank)',
} as const;

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The steps an item's old fields record. */
function oldSteps(item: Record<string, unknown>): ApplicationSteps {
  const steps: ApplicationSteps = {};
  const put = (name: StepName, step: StepRecord) => {
    const defined = Object.entries(step).filter(([, value]) => value !== undefined);
    if (defined.length) steps[name] = Object.fromEntries(defined);
  };
  const refused = str(item.inviteEmailRefused);
  put('serviceInvite', { startedAt: num(item.serviceInviteStartedAt), doneAt: num(item.serviceInviteAt) });
  put('inviteEmail', {
    startedAt: num(item.inviteEmailStartedAt),
    doneAt: num(item.inviteEmailAt) ?? (refused ? num(item.updatedAt) : undefined),
    outcome: refused ? 'refused' : item.inviteEmailUncertain === true ? 'uncertain' : undefined,
    value: refused,
  });
  put('inviteNote', { doneAt: num(item.inviteNoteAt) });
  put('reportLink', { doneAt: num(item.reportLinkAt) });
  put('reportNote', { doneAt: num(item.reportNoteAt), value: str(item.reportNoteId) });
  put('stageMove', { doneAt: num(item.movedAt), value: str(item.movedToStageId) });
  put('status', { value: str(item.statusTag), rank: num(item.statusRank) });
  put('expiryNote', { doneAt: num(item.expiryNoteAt), leaseUntil: num(item.expiryLeaseUntil) });
  const sent = num(item.remindersSent) ?? 0;
  const at = num(item.lastReminderAt) ?? num(item.updatedAt);
  for (let n = 0; n < (num(item.remindersStarted) ?? 0); n++)
    put(reminderStep(n), { startedAt: at, doneAt: n < sent ? at : undefined });
  return steps;
}

/** An application item as the use cases read it: every step in the map, old fields turned into steps. */
export function toApplication(item: Record<string, unknown>): ApplicationRecord {
  const fields = Object.entries(item).filter(([field]) => !ALL_OLD_FIELDS.has(field));
  const mapped = (item.steps ?? {}) as ApplicationSteps;
  return { ...Object.fromEntries(fields), steps: { ...oldSteps(item), ...mapped } } as ApplicationRecord;
}
