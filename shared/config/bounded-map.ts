/**
 * A per-connection cache of one environment, kept to at most `max` entries: setting one more drops the one least
 * recently set or read. An environment may serve thousands of connections over its life; a plain Map would keep every
 * one it ever met.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  public constructor(private readonly max: number) {
    super();
  }

  public override get(key: K): V | undefined {
    if (!super.has(key)) return undefined;
    const value = super.get(key) as V;
    // The most recently read goes last: the first in the map is the one to drop.
    super.delete(key);
    super.set(key, value);
    return value;
  }

  public override set(key: K, value: V): this {
    super.delete(key);
    super.set(key, value);
    if (this.size > this.max) this.delete(this.keys().next().value as K);
    return this;
  }
}

/** The workers' built contexts (adapters, clients, a pacing each) one environment keeps at most. */
export const CONTEXTS_KEPT = 1_000;
/** Secrets one environment keeps at most (small values, each read again from Secrets Manager when dropped). */
export const SECRETS_KEPT = 5_000;
