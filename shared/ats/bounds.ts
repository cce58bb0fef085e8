import { deliveryIdOf, singleLine, TEXT_LIMITS } from '../validation';
import type { StageEnteredEvent } from './port';

/** The longest e-mail address a mailbox can have (RFC 5321); anything longer is not one. */
const MAX_EMAIL_LENGTH = 254;

const line = (text: string | undefined) => (text === undefined ? undefined : singleLine(text, TEXT_LIMITS.name));

/**
 * A parsed stage change as the connector keeps it: the delivery id a safe key (hashed when the sender's is too
 * long or odd), names on one bounded line, an e-mail address no longer than one can be. A queued message built
 * from it stays far below SQS's 256 KiB and every key below DynamoDB's limits, whatever the body carried.
 */
export function boundStageEnteredEvent<E extends StageEnteredEvent>(event: E, rawBody: Buffer = Buffer.alloc(0)): E {
  const email = event.candidate.email?.trim();
  return {
    ...event,
    deliveryId: deliveryIdOf(event.deliveryId, rawBody),
    jobName: line(event.jobName),
    stage: { id: event.stage.id, name: line(event.stage.name) },
    candidate: {
      name: line(event.candidate.name),
      email: email && email.length <= MAX_EMAIL_LENGTH ? email : undefined,
    },
  };
}
