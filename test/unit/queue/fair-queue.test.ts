import type { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { QueuePublisher } from '../../../shared/queue';
import type { QueueMessage } from '../../../shared/queue';

const message = (connectionId: string) =>
  ({ kind: 'report-created', connectionId, reportId: 'r1' }) as unknown as QueueMessage;

describe('QueuePublisher', () => {
  it("names each message's connection as its fair-queue tenant (MessageGroupId), alone and in batches", async () => {
    const sent: { input: Record<string, unknown> }[] = [];
    const client = {
      send: async (command: { input: Record<string, unknown> }) => {
        sent.push(command);
        return {};
      },
    } as unknown as SQSClient;
    const publisher = new QueuePublisher({ client });
    await publisher.publish('q', message('acme'), { delaySeconds: 5 });
    await publisher.publishAll('q', [message('acme'), message('globex')]);
    expect(sent[0]?.input).toMatchObject({ MessageGroupId: 'acme', DelaySeconds: 5 });
    const entries = (sent[1]?.input.Entries ?? []) as { MessageGroupId: string }[];
    expect(entries.map((e) => e.MessageGroupId)).toEqual(['acme', 'globex']);
  });
});
