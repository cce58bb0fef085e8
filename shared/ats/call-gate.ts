/**
 * The seam between an ATS client and its pacing (shared/pacing/gate.ts), as the AWS SDK's `getSendToken` /
 * `updateClientSendingRate`: asked before each call is sent, told of each answer. The client knows nothing else of it.
 */
export interface CallGate {
  /** Resolves when the call may be sent; throws a rate-limited AtsError (nothing sent) when it must wait longer. */
  beforeCall(where: string, signal?: AbortSignal): Promise<void>;
  /** The ATS's answer: its status and headers (the window it announces, a 429's reset). */
  afterAnswer(status: number, headers: Headers): void;
}
