import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { UpdateParts } from './expressions';

/** Where a conditional update goes: the table, the item's key, and the condition it is made on. */
export type UpdateTarget = Pick<UpdateItemCommandInput, 'TableName' | 'Key' | 'ConditionExpression'>;

/**
 * An update made only when its condition holds: `updated` is the item as updated; when the condition did not hold,
 * `refused` is the item as it stood (undefined when there was none). Each is read as a record by `read`.
 */
export async function updateWhen<T>(
  send: DynamoDBClient['send'],
  target: UpdateTarget,
  update: UpdateParts,
  read: (item: Record<string, unknown>) => T,
): Promise<{ updated: T } | { refused: T | undefined }> {
  try {
    const result = await send(
      new UpdateItemCommand({
        ...target,
        ...update,
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { updated: read(unmarshall(result.Attributes ?? {})) };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return { refused: error.Item ? read(unmarshall(error.Item)) : undefined };
  }
}
