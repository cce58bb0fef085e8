/** SendMessage takes a DelaySeconds of 900 at most (Amazon SQS API Reference, SendMessage). */
export const SQS_MAX_DELAY_SECONDS = 900;
