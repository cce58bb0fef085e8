/** The lease on a record passed to another worker: this one must stop without writing further. */
export class LeaseLostError extends Error {
  public readonly code = 'lease-lost';
  public readonly retryable = false;

  public constructor(what: string) {
    super(`${what}: the lease is held by another worker`);
    this.name = 'LeaseLostError';
  }
}
