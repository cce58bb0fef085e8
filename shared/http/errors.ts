/**
 * Transport failures: the request may or may not have reached the server. Status-code errors are not raised
 * here; each API client maps statuses to its own typed errors.
 */
export class HttpTransportError extends Error {
  public readonly code: 'timeout' | 'network' | 'aborted';
  public readonly retryable: boolean;

  public constructor(code: 'timeout' | 'network' | 'aborted', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HttpTransportError';
    this.code = code;
    // The caller's own signal (Lambda deadline) ends the work; a timeout or a reset socket may pass.
    this.retryable = code !== 'aborted';
  }
}
