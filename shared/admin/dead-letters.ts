import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';

export type QueueName = 'stage' | 'report';
export const QUEUE_NAMES: readonly QueueName[] = ['stage', 'report'];

export interface WorkerQueueUrls {
  url: string;
  dlqUrl: string;
}

/** One message waiting in a dead-letter queue, as an operator sees it: ids and kinds, never its body's people. */
export interface DeadLetter {
  messageId: string;
  kind: string;
  connectionId: string;
  atsApplicationId?: string | undefined;
  receives: number;
  sentAt: number;
}

/** Peeks take at most this many receives of 10: the console shows the first 50 messages of a queue. */
const PEEK_ROUNDS = 5;
/** A retry of one message looks through at most this many receives of 10 for it. */
const FIND_ROUNDS = 10;

/**
 * The workers' dead-letter queues, for the console: how many wait, the first of them, a redrive of all (SQS's own
 * message move task, after the operator saw the count it will move) and a retry of one (sent back to its queue,
 * then deleted from the DLQ: a retry that stops between the two sends it twice, which the pipeline's claims absorb).
 */
export class DeadLetters {
  public constructor(
    private readonly sqs: SQSClient,
    private readonly queues: Record<QueueName, WorkerQueueUrls>,
  ) {}

  /**
   * Messages waiting in the queue's DLQ: those a message move task moves now. A peek hides the ones it read for a
   * second; the operator's preview comes after it.
   */
  public async count(queue: QueueName): Promise<number> {
    const answer = await this.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.queues[queue].dlqUrl,
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    return Number(answer.Attributes?.ApproximateNumberOfMessages ?? 0);
  }

  /** The first messages of the DLQ, each hidden for a second only: a redrive right after still finds them. */
  public async peek(queue: QueueName): Promise<DeadLetter[]> {
    const seen = new Map<string, DeadLetter>();
    for (let round = 0; round < PEEK_ROUNDS; round++) {
      const messages = await this.receive(queue, 1);
      const fresh = messages.filter((m) => m.MessageId && !seen.has(m.MessageId));
      for (const m of fresh) seen.set(m.MessageId as string, deadLetterOf(m));
      if (messages.length < 10) break;
    }
    return [...seen.values()];
  }

  /** Moves every message of the DLQ back to its queue; refused (the count it holds now) when not `expected`. */
  public async redrive(queue: QueueName, expected: number): Promise<{ started: boolean; count: number }> {
    const count = await this.count(queue);
    if (count !== expected) return { started: false, count };
    const [source, destination] = await Promise.all([
      this.arnOf(this.queues[queue].dlqUrl),
      this.arnOf(this.queues[queue].url),
    ]);
    // The destination is named: a message put in the DLQ by hand has no source queue to go back to.
    await this.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: source, DestinationArn: destination }));
    return { started: true, count };
  }

  /** The latest redrive of the queue's DLQ: its status and how many it moved. */
  public async redriveStatus(queue: QueueName): Promise<{ status: string; moved: number } | undefined> {
    const source = await this.arnOf(this.queues[queue].dlqUrl);
    const tasks = await this.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: source, MaxResults: 1 }));
    const latest = tasks.Results?.[0];
    return latest
      ? { status: latest.Status ?? 'UNKNOWN', moved: latest.ApproximateNumberOfMessagesMoved ?? 0 }
      : undefined;
  }

  /** Sends one message back to its queue and deletes it from the DLQ; false when it is not (or no longer) there. */
  public async retry(queue: QueueName, messageId: string): Promise<boolean> {
    for (let round = 0; round < FIND_ROUNDS; round++) {
      const messages = await this.receive(queue, 2);
      const found = messages.find((m) => m.MessageId === messageId);
      if (found?.Body && found.ReceiptHandle) {
        await this.sqs.send(new SendMessageCommand({ QueueUrl: this.queues[queue].url, MessageBody: found.Body }));
        await this.sqs.send(
          new DeleteMessageCommand({ QueueUrl: this.queues[queue].dlqUrl, ReceiptHandle: found.ReceiptHandle }),
        );
        return true;
      }
      if (messages.length < 10) return false;
    }
    return false;
  }

  private async receive(queue: QueueName, visibilitySeconds: number): Promise<Message[]> {
    const answer = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.queues[queue].dlqUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: visibilitySeconds,
        // Every SQS answers the receive count and sent time through AttributeNames; some only through it.
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
      }),
    );
    return answer.Messages ?? [];
  }

  private async arnOf(url: string): Promise<string> {
    const answer = await this.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
    const arn = answer.Attributes?.QueueArn;
    if (!arn) throw new Error(`the queue ${url} has no ARN`);
    return arn;
  }
}

/** What a DLQ message is about: its kind, connection and application, read leniently from its body. */
export function deadLetterOf(message: Message): DeadLetter {
  let body: {
    kind?: unknown;
    connectionId?: unknown;
    atsApplicationId?: unknown;
    event?: { atsApplicationId?: unknown };
  };
  try {
    body = JSON.parse(message.Body ?? '{}') ?? {};
  } catch {
    body = {};
  }
  const application = body.atsApplicationId ?? body.event?.atsApplicationId;
  return {
    messageId: message.MessageId ?? '',
    kind: typeof body.kind === 'string' ? body.kind : 'not a message of the connector',
    connectionId: typeof body.connectionId === 'string' ? body.connectionId : '(none)',
    atsApplicationId: typeof application === 'string' ? application : undefined,
    receives: Number(message.Attributes?.ApproximateReceiveCount ?? 0),
    sentAt: Number(message.Attributes?.SentTimestamp ?? 0),
  };
}
