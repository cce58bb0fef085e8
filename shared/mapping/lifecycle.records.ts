import { stateCondition } from '../pipeline/application-states';
import type { OperatorRequest } from '../pipeline/ports';
import type { ApplicationExit, ApplicationKey, ApplicationRecord } from '../pipeline/records';
import { buildUpdate, withNames } from './expressions';

import { DynamoTables } from './dynamo-tables';

/**
 * The candidate's place in the hiring process after the invitation: an exit the ATS reported (rejected, withdrawn,
 * hired), its undo, and an operator's request on the invitation (a resend, an extension), each one conditional write.
 */
export class DynamoLifecycle extends DynamoTables {
  public async recordExit(key: ApplicationKey, exit: ApplicationExit): Promise<ApplicationRecord | undefined> {
    const from = stateCondition('leave');
    const leave = withNames(
      buildUpdate({
        set: { state: 'left', exit, updatedAt: exit.at },
        extraValues: from.values,
      }),
      'state',
      'leftFrom',
    );
    // `leftFrom` is the state the invitation was in, copied in the same write.
    leave.UpdateExpression = leave.UpdateExpression.replace('SET ', 'SET #leftFrom = #state, ');
    const left = await this.updateApplicationWhen(key, leave, from.condition);
    if ('updated' in left) return left.updated;
    const record = left.refused;
    if (!record || record.state === 'left' || record.exit) return record;
    // A report came (or is being written back): the exit is kept for its write-back, which then moves no stage.
    const noted = await this.updateApplicationWhen(
      key,
      withNames(buildUpdate({ set: { exit, updatedAt: exit.at } }), 'exit'),
      'attribute_exists(pk) AND attribute_not_exists(#exit)',
    );
    return 'updated' in noted ? noted.updated : noted.refused;
  }

  public async undoExit(key: ApplicationKey, now: number): Promise<ApplicationRecord | undefined> {
    // The status claim is taken off with the exit, so the invitation's own status can be shown again.
    const rejoin = withNames(
      buildUpdate({
        set: { updatedAt: now },
        remove: ['exit', 'leftFrom', 'steps.status'],
        extraValues: { ':left': 'left' },
      }),
      'state',
      'leftFrom',
    );
    rejoin.UpdateExpression = rejoin.UpdateExpression.replace('SET ', 'SET #state = #leftFrom, ');
    const back = await this.updateApplicationWhen(key, rejoin, '#state = :left AND attribute_exists(#leftFrom)');
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
    // A resend goes to an open invitation; an extension opens an expired one again, its status shown anew.
    const from = extend
      ? stateCondition('extend')
      : { condition: '#state = :invited', values: { ':invited': 'invited' } };
    const update = withNames(
      buildUpdate({
        set: { updatedAt: request.now, ...(extend ? { state: 'invited' } : {}) },
        remove: extend ? ['expiredAt', 'steps.status'] : [],
        extraValues: {
          ...from.values,
          ':request': request.id,
          ':requests': [request.id],
          ':none': [],
          ...(extend ? { ':zero': 0, ':days': request.days ?? 0 } : {}),
        },
      }),
      'state',
      'operatorRequests',
      ...(extend ? ['extendedDays'] : []),
    );
    const added = [
      '#operatorRequests = list_append(if_not_exists(#operatorRequests, :none), :requests)',
      ...(extend ? ['#extendedDays = if_not_exists(#extendedDays, :zero) + :days'] : []),
    ];
    update.UpdateExpression = update.UpdateExpression.replace('SET ', `SET ${added.join(', ')}, `);
    const applied = await this.updateApplicationWhen(
      key,
      update,
      `${from.condition} AND (attribute_not_exists(#operatorRequests) OR NOT contains(#operatorRequests, :request))`,
    );
    return 'updated' in applied
      ? { applied: true, record: applied.updated }
      : { applied: false, record: applied.refused };
  }
}
