import { OutwardCallError } from '../errors';

/**
 * Transport failures: the request may or may not have reached the server. Status-code errors are not raised
 * here; each API client maps statuses to its own typed errors.
 */
export class HttpTransportError extends OutwardCallError {
  declare public readonly code: 'timeout' | 'network' | 'aborted';

  public constructor(code: 'timeout' | 'network' | 'aborted', message: string, options?: { cause?: unknown }) {
    // The caller's own signal (Lambda deadline) ends the work; a timeout or a reset socket may pass.
    super(code, message, { retryable: code !== 'aborted', cause: options?.cause });
    this.name = 'HttpTransportError';
  }
}
