import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { FunctionName } from '../aws/functions';

/**
 * One AWS call a function made, as IAM sees it: the action and the resource it is authorized on. The emulators
 * check no permission, so the local runner records every call and `checkAwsCalls` (infra/local/iam-conformance.ts)
 * holds each against the function's synthesized policy.
 */
export interface AwsCall {
  fn: FunctionName;
  /** IAM action, e.g. `dynamodb:ConditionCheckItem` (one per item of a transaction). */
  action: string;
  /**
   * What the action is on, in the local stack's names: `table:<name>`, `table:<name>/index/<index>`,
   * `queue:<url>`, `identity:<domain>`, `secret:<name>`.
   */
  resource: string;
}

const current = new AsyncLocalStorage<FunctionName>();

/** Runs `work` as `fn`: the AWS calls it makes are recorded as that function's. */
export function runAs<T>(fn: FunctionName, work: () => T): T {
  return current.run(fn, work);
}

type Input = Record<string, unknown>;
type Next = (args: { input: Input }) => Promise<unknown>;
/** The part of an SDK client the recorder touches: its middleware stack, and `send` on its prototype. */
interface MiddlewareStack {
  add(
    middleware: (next: Next, context: { commandName?: string }) => Next,
    options: { step: 'initialize'; name: string; override: boolean },
  ): void;
}
type Patchable = { prototype: { send: (this: { middlewareStack: MiddlewareStack }, ...args: unknown[]) => unknown } };

/** The IAM action(s) and resource(s) of one SDK command (the Service Authorization Reference's mapping). */
function authorizations(service: string, command: string, input: Input): { action: string; resource: string }[] {
  const action = command.replace(/Command$/, '');
  if (service === 'dynamodb') {
    const table = (name: string, index?: string) => `table:${name}${index ? `/index/${index}` : ''}`;
    if (action === 'TransactWriteItems')
      return (input.TransactItems as Input[]).flatMap((item) => {
        const [kind, body] = Object.entries(item)[0] as [string, Input];
        const tableName = String(body.TableName);
        const names: Record<string, string> = {
          Put: 'PutItem',
          Update: 'UpdateItem',
          Delete: 'DeleteItem',
          ConditionCheck: 'ConditionCheckItem',
        };
        return [{ action: `dynamodb:${names[kind] ?? kind}`, resource: table(tableName) }];
      });
    if (action === 'TransactGetItems')
      return (input.TransactItems as Input[]).map((item) => ({
        action: 'dynamodb:GetItem',
        resource: table(String((item.Get as Input).TableName)),
      }));
    // Authorized as itself, on each table it writes (DynamoDB's service authorization reference).
    if (action === 'BatchWriteItem')
      return Object.keys(input.RequestItems as Input).map((name) => ({
        action: 'dynamodb:BatchWriteItem',
        resource: table(name),
      }));
    if (action === 'BatchGetItem')
      return Object.keys(input.RequestItems as Input).map((name) => ({
        action: 'dynamodb:BatchGetItem',
        resource: table(name),
      }));
    const index = input.IndexName === undefined ? undefined : String(input.IndexName);
    return [{ action: `dynamodb:${action}`, resource: table(String(input.TableName), index) }];
  }
  if (service === 'sqs') {
    // A batch send is authorized as SendMessage (SQS API reference, SendMessageBatch).
    const iamAction = action === 'SendMessageBatch' ? 'SendMessage' : action;
    // A message move task names its queues by ARN: it is authorized on its source (SQS's redrive permissions).
    const queue = input.QueueUrl ?? input.SourceArn;
    return [{ action: `sqs:${iamAction}`, resource: `queue:${String(queue)}` }];
  }
  if (service === 'ses') {
    const from = String(input.FromEmailAddress ?? '');
    return [{ action: `ses:${action}`, resource: `identity:${from.slice(from.lastIndexOf('@') + 1)}` }];
  }
  if (service === 'secretsmanager')
    return [{ action: `secretsmanager:${action}`, resource: `secret:${String(input.SecretId)}` }];
  return [{ action: `${service}:${action}`, resource: 'unknown' }];
}

let installed: AwsCall[] | undefined;

/**
 * Adds a middleware to every DynamoDB, SQS, SES and Secrets Manager client (on its first send) that records
 * the call under the function running it. Calls made outside a function (the local runner's own set-up, the
 * event source's receives and deletes, which Lambda makes with the function's role and the CDK grants) are not
 * recorded. Returns the list the calls go to (or hands each to `onCall`); installing twice returns the same list.
 */
export function recordAwsCalls(onCall?: (call: AwsCall) => void): AwsCall[] {
  if (installed) return installed;
  const calls: AwsCall[] = [];
  installed = calls;
  // An execution environment hands each call to the runner's thread instead of keeping it.
  const record = onCall ?? ((call: AwsCall) => calls.push(call));
  const clients = [
    ['dynamodb', DynamoDBClient],
    ['sqs', SQSClient],
    ['ses', SESv2Client],
    ['secretsmanager', SecretsManagerClient],
  ] as unknown as [string, Patchable][];
  const withMiddleware = new WeakSet<object>();
  for (const [service, client] of clients) {
    const send = client.prototype.send;
    client.prototype.send = function (this: { middlewareStack: MiddlewareStack }, ...args: unknown[]) {
      if (!withMiddleware.has(this)) {
        withMiddleware.add(this);
        this.middlewareStack.add(
          (next, context) => async (args) => {
            const fn = current.getStore();
            if (fn && context.commandName)
              for (const auth of authorizations(service, context.commandName, args.input)) record({ fn, ...auth });
            return next(args);
          },
          { step: 'initialize', name: 'connectorIamRecorder', override: true },
        );
      }
      return send.apply(this, args);
    };
  }
  return calls;
}
