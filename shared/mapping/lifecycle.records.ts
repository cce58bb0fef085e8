import { ConditionalCheckFailedException, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { stateCondition } from '../pipeline/application-states';
import type { OperatorRequest } from '../pipeline/ports';
import type { ApplicationExit, ApplicationKey, ApplicationRecord } from '../pipeline/records';
import { errorMessage, errorName } from '../errors';
import { buildUpdate, moveUpdate, withNames, type UpdateParts } from './expressions';
import { LEGACY_STATUS_FIELDS } from './legacy-steps';
import { toApplication } from './legacy-steps';

import { DynamoTables, applicationKey } from './dynamo-tables';

/** An update whose steps part is a path into the map, or (an item written before the map) the whole map. */
type StepsForm = 'path' | 'map';

/**
 * The candidate's place in the hiring process after the invitation: an exit the ATS reported (rejected, withdrawn,
 * hired), its undo, and an operator's request on the invitation (a resend, an extension), each one conditional write.
 */
export class DynamoLifecycle extends DynamoTables {
  public async recordExit(key: ApplicationKey, exit: ApplicationExit): Promise<ApplicationRecord | undefined> {
    const { update: leave, condition } = moveUpdate('leave', { set: { exit, updatedAt: exit.at } }, 'leftFrom');
    // `leftFrom` is the state the invitation was in, copied in the same write.
    leave.UpdateExpression = leave.UpdateExpression.replace('SET ', 'SET #leftFrom = #state, ');
    const left = await this.updateApplicationWhen(key, leave, condition);
    if ('updated' in left) return left.updated;
    const record = left.refused;
    if (!record || record.state === 'left' || record.exit) return record;
    // A report came (or is being written back): the exit is kept for its write-back, which then moves no stage.
    // Only there: an invitation being sent or failed is caught by the look before its next contact instead.
    const noted = await this.updateApplicationWhen(
      key,
      withNames(
        buildUpdate({
          set: { exit, updatedAt: exit.at },
          extraValues: { ':completed': 'completed', ':done': 'written_back' },
        }),
        'exit',
        'state',
      ),
      '#state IN (:completed, :done) AND attribute_not_exists(#exit)',
    );
    return 'updated' in noted ? noted.updated : noted.refused;
  }

  public async undoExit(key: ApplicationKey, now: number): Promise<ApplicationRecord | undefined> {
    // The status claim is taken off with the exit, so the invitation's own status can be shown again.
    const back = await this.updateStepsWhen(key, '#state = :left AND attribute_exists(#leftFrom)', (form) => {
      const update = withNames(
        buildUpdate({
          set: { updatedAt: now, returnedAt: now, ...(form === 'map' ? { steps: {} } : {}) },
          remove: ['exit', 'leftFrom', ...LEGACY_STATUS_FIELDS, ...(form === 'path' ? ['steps.status'] : [])],
          extraValues: { ':left': 'left' },
        }),
        'state',
        'leftFrom',
      );
      update.UpdateExpression = update.UpdateExpression.replace('SET ', 'SET #state = #leftFrom, ');
      return update;
    });
    if ('updated' in back) return back.updated;
    if (!back.refused?.exit) return back.refused;
    const cleared = await this.updateApplicationWhen(
      key,
      withNames(buildUpdate({ set: { updatedAt: now }, remove: ['exit'], extraValues: { ':left': 'left' } }), 'state'),
      'attribute_exists(pk) AND #state <> :left',
    );
    return 'updated' in cleared ? cleared.updated : cleared.refused;
  }

  public async applyOperatorRequest(
    key: ApplicationKey,
    request: OperatorRequest,
  ): Promise<{ applied: boolean; record: ApplicationRecord | undefined }> {
    const extend = request.kind === 'extend';
    // A resend goes to an open invitation, begun in the same write (never sent twice, never lost without a trace); an
    // extension opens an expired one again, its status shown anew.
    const from = extend
      ? stateCondition('extend')
      : { condition: '#state = :invited', values: { ':invited': 'invited' } };
    const once = '(attribute_not_exists(#operatorRequests) OR NOT contains(#operatorRequests, :request))';
    const condition = `${from.condition} AND ${once}`;
    const applied = await this.updateStepsWhen(key, condition, (form) => {
      const resend = { startedAt: request.now };
      const update = withNames(
        buildUpdate({
          set: {
            updatedAt: request.now,
            ...(extend ? { state: 'invited', extendedUntil: request.extendedUntil } : {}),
            ...(!extend && form === 'path' ? { 'steps.resend': resend } : {}),
            ...(form === 'map' ? { steps: extend ? {} : { resend } } : {}),
          },
          remove: extend ? ['expiredAt', ...LEGACY_STATUS_FIELDS, ...(form === 'path' ? ['steps.status'] : [])] : [],
          extraValues: { ...from.values, ':request': request.id, ':requests': [request.id], ':none': [] },
        }),
        'state',
        'operatorRequests',
      );
      update.UpdateExpression = update.UpdateExpression.replace(
        'SET ',
        'SET #operatorRequests = list_append(if_not_exists(#operatorRequests, :none), :requests), ',
      );
      return update;
    });
    return 'updated' in applied
      ? { applied: true, record: applied.updated }
      : { applied: false, record: applied.refused };
  }

  /**
   * A conditional update that also writes into the steps map: as a path into it, or, on an item written before the
   * map existed (DynamoDB refuses a path into a map that is not there), with the whole map.
   */
  private async updateStepsWhen(
    key: ApplicationKey,
    condition: string,
    build: (form: StepsForm) => UpdateParts,
  ): Promise<{ updated: ApplicationRecord } | { refused: ApplicationRecord | undefined }> {
    const attempt = async (form: StepsForm) => {
      const update = build(form);
      try {
        const result = await this.send(
          new UpdateItemCommand({
            TableName: this.tables.applications,
            Key: applicationKey(key),
            ...(form === 'map' ? withNames(update, 'steps') : update),
            ConditionExpression: form === 'map' ? `(${condition}) AND attribute_not_exists(#steps)` : condition,
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { updated: toApplication(unmarshall(result.Attributes ?? {})) };
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException)
          return { refused: error.Item ? toApplication(unmarshall(error.Item)) : undefined };
        if (errorName(error) === 'ValidationException' && /document path/i.test(errorMessage(error))) return 'no-map';
        throw error;
      }
    };
    const intoMap = await attempt('path');
    if (intoMap !== 'no-map') return intoMap;
    const whole = await attempt('map');
    if (whole !== 'no-map' && 'updated' in whole) return whole;
    // Refused: another writer may have made the map meanwhile (then the path form answers), or the condition failed.
    const again = await attempt('path');
    return again === 'no-map' ? { refused: undefined } : again;
  }
}
