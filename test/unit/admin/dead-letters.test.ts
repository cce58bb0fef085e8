import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { DeadLetters, deadLetterOf } from '../../../shared/admin/dead-letters';
import { NOW } from '../../helpers/pipeline-records';

const QUEUES = {
  stage: { url: 'https://sqs.local/1/stage', dlqUrl: 'https://sqs.local/1/stage-dlq' },
  report: { url: 'https://sqs.local/1/report', dlqUrl: 'https://sqs.local/1/report-dlq' },
};

type Sent = { command: string; input: Record<string, unknown> };

/**
 * SQS as the DeadLetters class speaks to it: each command answered by its name and input. Queue ARNs are answered
 * from their URLs; the DLQ's receives come from `pages`, one a receive (empty once they run out).
 */
function fakeSqs(options: { count?: string; pages?: Message[][]; tasks?: unknown[] } = {}) {
  const sent: Sent[] = [];
  const pages = [...(options.pages ?? [])];
  const answer = (command: string, input: Record<string, unknown>): unknown => {
    switch (command) {
      case 'GetQueueAttributesCommand':
        return (input.AttributeNames as string[]).includes('QueueArn')
          ? { Attributes: { QueueArn: `arn:${input.QueueUrl}` } }
          : { Attributes: options.count === undefined ? {} : { ApproximateNumberOfMessages: options.count } };
      case 'ReceiveMessageCommand':
        return { Messages: pages.shift() ?? [] };
      case 'ListMessageMoveTasksCommand':
        return { Results: options.tasks ?? [] };
      default:
        return {};
    }
  };
  const sqs = {
    send: async (command: { input: Record<string, unknown> }) => {
      const name = command.constructor.name;
      sent.push({ command: name, input: command.input });
      return answer(name, command.input);
    },
  } as unknown as SQSClient;
  return { sqs, sent, named: (command: string) => sent.filter((s) => s.command === command) };
}

/** `n` DLQ messages from `from` on, each a stage message of its own application. */
const messages = (from: number, n: number): Message[] =>
  Array.from({ length: n }, (_, i) => ({
    MessageId: `m-${from + i}`,
    ReceiptHandle: `rh-${from + i}`,
    Body: JSON.stringify({ kind: 'stage-entered', connectionId: 'acme', event: { atsApplicationId: `${from + i}` } }),
    Attributes: { ApproximateReceiveCount: '5', SentTimestamp: String(NOW) },
  }));

describe('Adapter: the dead-letter queues for the console', () => {
  it("counts the messages waiting in the queue's DLQ", async () => {
    const sqs = fakeSqs({ count: '7' });
    expect(await new DeadLetters(sqs.sqs, QUEUES).count('report')).toBe(7);
    expect(sqs.sent).toEqual([
      {
        command: 'GetQueueAttributesCommand',
        input: { QueueUrl: QUEUES.report.dlqUrl, AttributeNames: ['ApproximateNumberOfMessages'] },
      },
    ]);
    expect(await new DeadLetters(fakeSqs().sqs, QUEUES).count('stage')).toBe(0);
  });

  it('peeks page by page until a short page, each message once, hiding them for a second only', async () => {
    const sqs = fakeSqs({ pages: [messages(0, 10), messages(5, 10), messages(15, 3), messages(18, 10)] });
    const peeked = await new DeadLetters(sqs.sqs, QUEUES).peek('stage');
    expect(peeked.map((m) => m.messageId)).toEqual(Array.from({ length: 18 }, (_, i) => `m-${i}`));
    const receives = sqs.named('ReceiveMessageCommand');
    expect(receives).toHaveLength(3);
    for (const { input } of receives)
      expect(input).toMatchObject({ QueueUrl: QUEUES.stage.dlqUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 1 });
  });

  it('peeks at most five pages of a queue that keeps answering full ones', async () => {
    const pages = Array.from({ length: 8 }, (_, i) => messages(i * 10, 10));
    const sqs = fakeSqs({ pages });
    expect(await new DeadLetters(sqs.sqs, QUEUES).peek('stage')).toHaveLength(50);
    expect(sqs.named('ReceiveMessageCommand')).toHaveLength(5);
  });

  it('starts no move task when the DLQ holds other than the count the operator saw', async () => {
    const sqs = fakeSqs({ count: '4' });
    expect(await new DeadLetters(sqs.sqs, QUEUES).redrive('stage', 3)).toEqual({ started: false, count: 4 });
    expect(sqs.named('StartMessageMoveTaskCommand')).toEqual([]);
  });

  it('moves the DLQ back to its own queue when the count is the one seen', async () => {
    const sqs = fakeSqs({ count: '3' });
    expect(await new DeadLetters(sqs.sqs, QUEUES).redrive('report', 3)).toEqual({ started: true, count: 3 });
    expect(sqs.named('StartMessageMoveTaskCommand').map((s) => s.input)).toEqual([
      { SourceArn: `arn:${QUEUES.report.dlqUrl}`, DestinationArn: `arn:${QUEUES.report.url}` },
    ]);
  });

  it('answers the latest redrive of the DLQ, or none', async () => {
    const running = fakeSqs({ tasks: [{ Status: 'RUNNING', ApproximateNumberOfMessagesMoved: 12 }] });
    expect(await new DeadLetters(running.sqs, QUEUES).redriveStatus('stage')).toEqual({ status: 'RUNNING', moved: 12 });
    expect(running.named('ListMessageMoveTasksCommand')[0]?.input).toEqual({
      SourceArn: `arn:${QUEUES.stage.dlqUrl}`,
      MaxResults: 1,
    });
    expect(await new DeadLetters(fakeSqs().sqs, QUEUES).redriveStatus('stage')).toBeUndefined();
  });

  it('retries one message: sends its body to its queue, then deletes it from the DLQ by receipt handle', async () => {
    const [target] = messages(42, 1) as [Message];
    const sqs = fakeSqs({ pages: [messages(0, 10), [...messages(10, 9), target]] });
    expect(await new DeadLetters(sqs.sqs, QUEUES).retry('stage', 'm-42')).toBe(true);
    expect(sqs.sent.slice(-2)).toEqual([
      { command: 'SendMessageCommand', input: { QueueUrl: QUEUES.stage.url, MessageBody: target.Body } },
      { command: 'DeleteMessageCommand', input: { QueueUrl: QUEUES.stage.dlqUrl, ReceiptHandle: 'rh-42' } },
    ]);
    expect(sqs.named('ReceiveMessageCommand')).toHaveLength(2);
  });

  it('answers false, sending nothing, when the message is not in a short page', async () => {
    const sqs = fakeSqs({ pages: [messages(0, 4)] });
    expect(await new DeadLetters(sqs.sqs, QUEUES).retry('stage', 'm-42')).toBe(false);
    expect(sqs.sent.map((s) => s.command)).toEqual(['ReceiveMessageCommand']);
  });

  it('gives up after ten full pages without the message', async () => {
    const sqs = fakeSqs({ pages: Array.from({ length: 15 }, (_, i) => messages(i * 10 + 1000, 10)) });
    expect(await new DeadLetters(sqs.sqs, QUEUES).retry('report', 'm-42')).toBe(false);
    expect(sqs.named('ReceiveMessageCommand')).toHaveLength(10);
    expect(sqs.named('SendMessageCommand')).toEqual([]);
    expect(sqs.named('DeleteMessageCommand')).toEqual([]);
  });
});

describe('Function: deadLetterOf', () => {
  const attributes = { ApproximateReceiveCount: '4', SentTimestamp: String(NOW) };

  it.each([
    [
      { kind: 'stage-entered', connectionId: 'acme', event: { atsApplicationId: '4401' } },
      'stage-entered',
      'acme',
      '4401',
    ],
    [{ kind: 'report-created', connectionId: 'acme', atsApplicationId: '4402' }, 'report-created', 'acme', '4402'],
    [
      { kind: 'stage-entered', connectionId: 'acme', event: { atsApplicationId: 4401 } },
      'stage-entered',
      'acme',
      undefined,
    ],
  ])('reads %j as kind %s of connection %s, application %s', (body, kind, connectionId, atsApplicationId) => {
    const letter = deadLetterOf({ MessageId: 'm-1', Body: JSON.stringify(body), Attributes: attributes });
    expect(letter).toEqual({ messageId: 'm-1', kind, connectionId, atsApplicationId, receives: 4, sentAt: NOW });
  });

  it.each([
    ['not json {'],
    ['null'],
    ['42'],
    ['"text"'],
    ['[1,2]'],
    ['{"kind":5,"connectionId":{},"event":null}'],
    [undefined],
  ])('reads the body %s leniently, as no message of the connector', (Body) => {
    expect(deadLetterOf({ MessageId: 'm-2', Body })).toEqual({
      messageId: 'm-2',
      kind: 'not a message of the connector',
      connectionId: '(none)',
      atsApplicationId: undefined,
      receives: 0,
      sentAt: 0,
    });
  });
});
