import { MOVES } from '../pipeline/application-states';
import { ConditionalCheckFailedException, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { begunStep, stepsBefore, type StepBegin, type StepData, type StepWrite } from '../pipeline/ports';
import type { ApplicationKey, ApplicationRecord, StepName, StepRecord } from '../pipeline/records';
import { errorMessage, errorName } from '../errors';
import { LeaseLostError } from './errors';
import { buildUpdate, moveUpdate, type UpdateParts, withNames } from './expressions';
import { OLD_BEGIN_CONDITIONS, oldFieldsOf } from './legacy-steps';

import { DynamoTables, applicationKey } from './dynamo-tables';

/** An update of the steps map, in either form: into the map, or (an item that has none yet) the whole map. */
type StepsUpdate = (form: 'path' | 'map') => { update: UpdateParts; condition: string };

/**
 * The application's steps: each side effect under its name in one map on the item (`steps.<name>`), recorded by
 * one write (`recordStep`), or begun by the one caller a condition lets in (`beginStep`); and the expiry.
 */
export class DynamoSteps extends DynamoTables {
  public async recordStep(key: ApplicationKey, write: StepWrite): Promise<void> {
    const { step, owner, finish, round } = write;
    const before = stepsBefore(write.before);
    const written = await this.updateSteps(key, (form) => {
      const stepSet = {
        ...Object.fromEntries(before.map((done) => [done.name, done.record])),
        ...(step?.record ? { [step.name]: step.record } : {}),
      };
      const update = withNames(
        buildUpdate({
          set: {
            ...dataFields(write.data),
            ...(form === 'map' ? { steps: stepSet } : prefixed(stepSet)),
            ...(finish ? { state: finish } : {}),
            updatedAt: Date.now(),
          },
          remove: [
            ...before.flatMap((done) => oldFieldsOf(done.name)),
            ...(step ? oldFieldsOf(step.name) : []),
            ...(step && !step.record && form === 'path' ? [`steps.${step.name}`] : []),
            ...(finish ? ['leaseOwner', 'leaseUntil'] : []),
          ],
          extraValues: { ...(owner ? { ':owner': owner } : {}), ...(round === undefined ? {} : { ':round': round }) },
        }),
        ...(owner ? ['leaseOwner'] : []),
        ...(round === undefined ? [] : ['reinvitations']),
      );
      const held = owner ? '#leaseOwner = :owner' : 'attribute_exists(pk)';
      return { update, condition: round === undefined ? held : `${held} AND ${roundCondition(round)}` };
    });
    // A step with no holder is recorded while the application exists: after a purge there is nothing to record.
    if (!written && owner) throw new LeaseLostError(`application ${key.atsApplicationId}`);
  }

  public beginStep(key: ApplicationKey, name: StepName, begin: StepBegin): Promise<boolean> {
    return this.updateSteps(key, (form) => {
      const step = begunStep(begin);
      const { condition, names, values } = beginCondition(name, begin, form);
      const update = withNames(
        buildUpdate({
          set: form === 'map' ? { steps: { [name]: step } } : prefixed({ [name]: step }),
          extraValues: values,
        }),
        ...names,
      );
      return { update, condition };
    });
  }

  public async forgetStep(key: ApplicationKey, name: StepName, value: string): Promise<boolean> {
    const update = buildUpdate({
      set: { updatedAt: Date.now() },
      remove: [`steps.${name}`],
      extraValues: { ':v': value },
    });
    const forgot = await this.updateApplicationWhen(key, withNames(update, 'value'), `#steps.#${name}.#value = :v`);
    return 'updated' in forgot;
  }

  public async expireApplication(
    key: ApplicationKey,
    now: number,
    unless: readonly StepName[] = [],
  ): Promise<ApplicationRecord | undefined> {
    const names = unless.length > 0 ? ['steps', ...unless] : [];
    const { update, condition } = moveUpdate('expire', { set: { expiredAt: now, updatedAt: now } }, ...names);
    // Only an invitation with no report (nor a step `unless` names) expires; one already expired keeps its first time.
    const expired = await this.updateApplicationWhen(key, update, [`(${condition})`, ...noneOf(unless)].join(' AND '));
    if ('updated' in expired) return expired.updated;
    return expired.refused?.state === MOVES.expire.to ? expired.refused : undefined;
  }

  /**
   * Makes a steps update: into the map, or, on an item written before the map existed (DynamoDB refuses a path
   * into a map that is not there), as the whole map while it is still missing. True when made; false when its
   * condition did not hold.
   */
  private async updateSteps(key: ApplicationKey, build: StepsUpdate): Promise<boolean> {
    const attempt = async (form: 'path' | 'map'): Promise<boolean | 'no-map'> => {
      const { update, condition } = build(form);
      try {
        await this.send(
          new UpdateItemCommand({
            TableName: this.tables.applications,
            Key: applicationKey(key),
            ...(form === 'map' ? withNames(update, 'steps') : update),
            ConditionExpression: form === 'map' ? `(${condition}) AND attribute_not_exists(#steps)` : condition,
          }),
        );
        return true;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return false;
        if (errorName(error) === 'ValidationException' && /document path/i.test(errorMessage(error))) return 'no-map';
        throw error;
      }
    };
    const intoMap = await attempt('path');
    if (intoMap !== 'no-map') return intoMap;
    if (await attempt('map')) return true;
    // Refused: another writer may have made the map meanwhile (then the path form answers), or the condition failed.
    return (await attempt('path')) === true;
  }
}

/** `{ name: step }` as paths into the map (`steps.name`). */
const prefixed = (steps: Record<string, StepRecord>) =>
  Object.fromEntries(Object.entries(steps).map(([name, step]) => [`steps.${name}`, step]));

/** What a step gives the application's own fields; the service's candidate id also keys its index. */
function dataFields(data: StepData | undefined): Record<string, unknown> {
  if (!data) return {};
  const indexed = data.serviceCandidateId && data.interviewId;
  return {
    ...data,
    ...(indexed ? { serviceCandidateKey: `${data.interviewId}#${data.serviceCandidateId}` } : {}),
  };
}

/** The conditions that the application has none of `steps` (their names `#steps` and `#<step>`). */
const noneOf = (steps: readonly StepName[]): string[] => steps.map((step) => `attribute_not_exists(#steps.#${step})`);

/** The invitation a begin holds in: its `reinvitations`, an item without them being the first (0). */
const roundCondition = (round: number): string =>
  round === 0 ? '(attribute_not_exists(#reinvitations) OR #reinvitations = :round)' : '#reinvitations = :round';

/**
 * Who may begin a step, one rule per kind of begin: a reminder once while invited, the expiry's note by one holder
 * at a time until done, a status never below the one begun. On an item with no map yet only the application's
 * state and its old fields can refuse (`legacy-steps.ts`).
 */
function beginCondition(
  name: StepName,
  begin: StepBegin,
  form: 'path' | 'map',
): { condition: string; names: string[]; values: Record<string, unknown> } {
  const step = `#steps.#${name}`;
  const path = (rule: string) => (form === 'path' ? [rule] : []);
  if (begin.kind === 'once') {
    // The reminder's number from 0, as the old fields count the reminders begun.
    const n = Number(name.replace(/^reminder/, '')) - 1;
    // Where the item has no steps map yet, it has none of the steps `unless` names either.
    const unless = form === 'path' ? (begin.unless ?? []) : [];
    return {
      condition: [
        '#state = :state',
        ...path(`attribute_not_exists(${step})`),
        ...noneOf(unless),
        OLD_BEGIN_CONDITIONS.once,
      ].join(' AND '),
      names: ['state', ...unless],
      values: { ':state': begin.state, ':n': n },
    };
  }
  // A begin with a `round` holds only in that invitation (its `reinvitations`, none counting as 0).
  const round = begin.round === undefined ? [] : [roundCondition(begin.round)];
  const roundValues = begin.round === undefined ? {} : { ':round': begin.round };
  if (begin.kind === 'lease') return leaseCondition(name, begin, form, { round, roundValues });
  const state = begin.whileState === undefined ? [] : ['#state = :whileState'];
  return {
    condition: [
      'attribute_exists(pk)',
      ...round,
      ...state,
      ...path(`(attribute_not_exists(${step}) OR ${step}.#rank <= :rank)`),
      OLD_BEGIN_CONDITIONS.rank,
    ].join(' AND '),
    names: [
      ...(form === 'path' ? ['rank'] : []),
      ...(round.length ? ['reinvitations'] : []),
      ...(state.length ? ['state'] : []),
    ],
    values: {
      ':rank': begin.rank,
      ...roundValues,
      ...(begin.whileState === undefined ? {} : { ':whileState': begin.whileState }),
    },
  };
}

/** A note's begin by one holder at a time until done (`beginCondition`'s `lease`), in its round where one is given. */
function leaseCondition(
  name: StepName,
  begin: Extract<StepBegin, { kind: 'lease' }>,
  form: 'path' | 'map',
  rounds: { round: string[]; roundValues: Record<string, number | undefined> },
): { condition: string; names: string[]; values: Record<string, unknown> } {
  const step = `#steps.#${name}`;
  const { round, roundValues } = rounds;
  // A holder gives its own lease back (or keeps it) by naming it: the lease it `holds` is still the one in place.
  const own = begin.holds === undefined || form === 'map' ? '' : ` OR ${step}.#leaseUntil = :holds`;
  const unheld = `(attribute_not_exists(${step}.#leaseUntil) OR ${step}.#leaseUntil < :now${own})`;
  const free = `attribute_not_exists(${step}.#doneAt) AND ${unheld}`;
  return {
    condition: [
      '#state = :state',
      ...round,
      ...(form === 'path' ? [`(attribute_not_exists(${step}) OR (${free}))`] : []),
      // The old fields held only the expiry's note: another step's begin is not refused by them.
      ...(name === 'expiryNote' ? [OLD_BEGIN_CONDITIONS.lease] : []),
    ].join(' AND '),
    names: ['state', ...(form === 'path' ? ['doneAt', 'leaseUntil'] : []), ...(round.length ? ['reinvitations'] : [])],
    values: {
      ':state': begin.state,
      // Read by the map's lease, or by the old fields' (expiryNote): an item with neither names no time.
      ...(form === 'path' || name === 'expiryNote' ? { ':now': begin.now } : {}),
      ...roundValues,
      ...(own ? { ':holds': begin.holds } : {}),
    },
  };
}
