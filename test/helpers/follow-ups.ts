import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { connectionRate, createAtsAdapter, declaredStepCalls, PROFILES } from '../../shared/ats';
import { CallPacer, Turns } from '../../shared/pacing';
import type { DirectAtsKind } from '../../shared/config';
import { dynamoMappingStore } from '../../shared/mapping';
import { applicationKey } from '../../shared/mapping/dynamo-tables';
import { DynamoRateSchedule } from '../../shared/mapping/rate-schedule';
import { handleFollowUp } from '../../shared/pipeline/follow-up.use-case';
import type { InviteEmail } from '../../shared/pipeline/ports';
import type { ApplicationRecord } from '../../shared/pipeline/records';
import type { FollowUpMessage } from '../../shared/queue';
import type { LocalStack } from '../../infra/local/local-stack';
import { statusOfTag } from '../../shared/pipeline/status';
import { invitedInterviewId, useTestStack } from './local-stack';

/** A candidate of `kind`'s sandbox moved into the trigger's stage, once the connector invited them and went quiet. */
export async function invitedOn(stack: LocalStack, kind: DirectAtsKind, name: string) {
  const email = `${name}.${kind}@candidates.example.com`.toLowerCase();
  const application = stack.ats[kind].addCandidate({ firstName: name, lastName: kind, email });
  await stack.ats[kind].moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
  const interviewId = await invitedInterviewId(stack, email);
  await stack.waitForQuiet();
  return { email, application, interviewId };
}

/**
 * A test stack whose triggers show the status as tags, remind after 48 hours (twice) and expire after 7 days, with
 * its candidates invited and their statuses read on it: the candidate files' shared setting.
 */
export function useLifecycleStack(name: string) {
  const held = useTestStack(name, {
    lifecycle: { status: 'tags', reminders: { afterHours: 48, max: 2 }, expireAfterDays: 7 },
  });
  return {
    stack: () => held.stack,
    invited: (kind: DirectAtsKind, firstName: string) => invitedOn(held.stack, kind, firstName),
    statusesOf: (kind: DirectAtsKind, id: string) => statusTagsOf(held.stack, kind, id),
  };
}

/** The statuses an application's tags show (a tag that is no status as it is). */
export const statusTagsOf = (stack: LocalStack, kind: DirectAtsKind, id: string) =>
  stack.ats[kind].tagsOf(id).map((t) => statusOfTag(t) ?? t);

export const isReminder = (m: { subject?: string }) => (m.subject ?? '').startsWith('Reminder');

/**
 * Makes an invitation `ms` older, as if sent that long ago: its record's creation and the invite steps' times move
 * back, so its reminders and expiry fall due on the real clock, and a stage entry after them is learnt of later.
 */
export async function sentEarlier(stack: LocalStack, record: ApplicationRecord, ms: number): Promise<void> {
  const steps = (['inviteEmail', 'inviteNote', 'serviceInvite'] as const).filter((s) => record.steps[s]?.doneAt);
  const times = ['createdAt', ...steps.map((s) => `steps.${s}.doneAt`)];
  await stack.dynamo.send(
    new UpdateItemCommand({
      TableName: stack.tables.applications,
      Key: applicationKey(record),
      UpdateExpression: `SET ${times.map((p) => `${p} = ${p} - :ms`).join(', ')}`,
      ExpressionAttributeValues: { ':ms': { N: String(ms) } },
    }),
  );
}

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * `call` again while the ATS says its rate-limit window is spent, or its turn on the schedule is later, for 60 s at
 * most, each time after the wait the refusal names (1 to 10 s): as the worker's message would come back for it.
 */
export async function inOpenWindow<T>(call: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      const { code, retryAfterMs } = error as { code?: string; retryAfterMs?: number };
      if (code !== 'ats-rate-limited' || Date.now() > deadline) throw error;
      const waitMs = Math.min(10_000, Math.max(1_000, retryAfterMs ?? 1_000));
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

/**
 * The invite worker's follow-up, on the stack's real tables and real ATS sandbox, with a fake clock and mailer. Its ATS
 * calls take their turns on the connection's shared schedule, as the worker's do, with the stack's own workers.
 */
export function followUps(stack: LocalStack, kind: DirectAtsKind, clock: { now: number }) {
  const connection = stack.connections.find((c) => c.ats === kind);
  if (!connection) throw new Error(`no ${kind} connection in the stack`);
  const secrets = stack.secrets[connection.secretRef];
  if (!secrets) throw new Error(`no secrets for ${connection.id}`);
  const rate = connectionRate(connection);
  const schedule = new DynamoRateSchedule({ table: stack.tables.events, client: stack.dynamo });
  const connectionId = connection.id;
  const gate = rate && new CallPacer({ connectionId, rate, rateHeaders: PROFILES[kind].rateHeaders, schedule });
  const stepCalls = declaredStepCalls(kind, connection.writeBack.status === 'tags');
  const turns = rate && new Turns({ connectionId, rate, schedule, stepCalls });
  const ats = createAtsAdapter(connection, secrets, gate ? { gate } : {});
  const context = { connection, secrets, ats, ...(turns ? { turns } : {}) };
  const sent: InviteEmail[] = [];
  const store = dynamoMappingStore({ tables: stack.tables, client: stack.dynamo });
  const deps = {
    store,
    contextFor: async () => context as never,
    logger: silent,
    now: () => clock.now,
    mailer: {
      sendInvite: async (email: InviteEmail) => {
        sent.push(email);
        return { messageId: `m${sent.length}` };
      },
    },
  };
  type Extra = Pick<FollowUpMessage, 'reminder' | 'requestId' | 'days'>;
  const run = (
    record: ApplicationRecord,
    action: FollowUpMessage['action'],
    extra?: number | Partial<Extra>,
    signal?: AbortSignal,
  ) =>
    handleFollowUp(
      {
        v: 1,
        kind: 'follow-up',
        enqueueId: `e-${Math.random()}`,
        connectionId: connection.id,
        receivedAt: clock.now,
        atsApplicationId: record.atsApplicationId,
        triggerId: record.triggerId,
        action,
        ...(typeof extra === 'number' ? { reminder: extra } : (extra ?? {})),
      } satisfies FollowUpMessage,
      deps,
      signal,
    );
  const record = async (applicationId: string) =>
    (await store.findApplicationsByAtsId(connection.id, applicationId))[0] as ApplicationRecord;
  return { connection, sent, run, record, store };
}
