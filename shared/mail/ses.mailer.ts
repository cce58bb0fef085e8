import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import type { InviteEmail, Mailer } from '../pipeline/ports';
import { inviteTemplateFor } from './invite-templates';
import { singleLine, TEXT_LIMITS } from '../validation';
import { SES_CLIENT_CONFIG } from '../aws/client-config';
import { currentDeadline } from '../aws/deadline';
import { connectionNeverOpened, errorName, httpStatus, OutwardCallError } from '../errors';

export interface SesMailerOptions {
  /** The verified sender used when a trigger names none. */
  defaultFrom: string;
  client?: SESv2Client;
}

/**
 * SES's definite refusals (SES v2 API reference, SendEmail errors): the message will not be sent however often it
 * is tried, until an operator acts (a sandbox account's unverified recipient is `MessageRejected`; an identity not
 * verified, a paused or suspended account, a missing permission). Throttling, 5xx and no answer are not refusals.
 */
export const SES_REFUSALS = new Set([
  'MessageRejected',
  'MailFromDomainNotVerifiedException',
  'AccountSuspendedException',
  'SendingPausedException',
  'NotFoundException',
  'BadRequestException',
  'AccessDeniedException',
]);

/**
 * SES's throttling of the account's sending rate (SES v2 SendEmail, `TooManyRequestsException`, a 429): the e-mail
 * waits as a rate limit does (the worker defers its message), not as a failure counted toward the DLQ.
 */
const SES_THROTTLES = new Set(['TooManyRequestsException']);

/** SES did not take the invitation e-mail: `reason` is SES's exception name. */
export class MailerError extends OutwardCallError {
  /** SES refused this message for good: the e-mail channel has failed, the invitation has not. */
  public readonly refused: boolean;

  public constructor(
    public readonly reason: string,
    definitelyNotSent: boolean,
    cause: unknown,
  ) {
    const refused = definitelyNotSent && SES_REFUSALS.has(reason);
    const throttled = SES_THROTTLES.has(reason);
    // Retryable unless SES refused for good; a throttle is a rate limit, waited out with its message deferred.
    super(throttled ? 'rate-limited' : 'mail-failed', `the invitation e-mail failed: ${reason}`, {
      retryable: !refused,
      definitelyNotSent,
      rateLimited: throttled,
      cause,
    });
    this.name = 'MailerError';
    this.refused = refused;
  }
}

/** Invitations through SES v2 SendEmail. */
export class SesMailer implements Mailer {
  private readonly client: SESv2Client;
  private readonly defaultFrom: string;

  public constructor(options: SesMailerOptions) {
    this.client = options.client ?? new SESv2Client(SES_CLIENT_CONFIG);
    this.defaultFrom = options.defaultFrom;
  }

  public async sendInvite(email: InviteEmail): Promise<{ messageId: string }> {
    const template = inviteTemplateFor(email.language, email.reminder === true);
    // Names reach a subject line and a body: one line, no control characters (no header or line injection).
    const jobName = singleLine(email.jobName, TEXT_LIMITS.name);
    const candidateName = singleLine(email.candidateName, TEXT_LIMITS.name);
    const result = await this.client
      .send(
        new SendEmailCommand({
          FromEmailAddress: email.from ?? this.defaultFrom,
          Destination: { ToAddresses: [email.to] },
          Content: {
            Simple: {
              Subject: { Data: template.subject(jobName), Charset: 'UTF-8' },
              Body: {
                Text: {
                  Data: template.body(candidateName, jobName, email.inviteUrl),
                  Charset: 'UTF-8',
                },
              },
            },
          },
        }),
        { abortSignal: currentDeadline() },
      )
      .catch((error: unknown) => {
        // A 4xx from SES (throttling, a refused address) means nothing was sent, and so does a connection that never
        // opened (a busy machine can miss the 1-s connection timeout); a 5xx or a lost answer means it may have been:
        // the step then stays started and is recorded as uncertain, never sent again.
        const status = httpStatus(error);
        const refusedBeforeSending = typeof status === 'number' && status >= 400 && status < 500;
        throw new MailerError(errorName(error), refusedBeforeSending || connectionNeverOpened(error), error);
      });
    return { messageId: result.MessageId ?? '' };
  }
}
