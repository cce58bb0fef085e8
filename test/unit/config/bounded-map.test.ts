import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../../../shared/config/bounded-map';

describe('Class: BoundedMap (per-connection caches of one environment)', () => {
  it('keeps at most its bound, dropping the one least recently set or read', () => {
    const cache = new BoundedMap<string, number>(3);
    for (const [i, id] of ['a', 'b', 'c'].entries()) cache.set(id, i);
    expect(cache.get('a')).toBe(0);
    cache.set('d', 3);
    expect([...cache.keys()]).toEqual(['c', 'a', 'd']);
    cache.set('c', 9);
    cache.set('e', 4);
    expect([...cache.keys()]).toEqual(['d', 'c', 'e']);
    expect(cache.size).toBe(3);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.has('a')).toBe(false);
  });

  it('keeps an entry whose value is undefined as one (a connection with no pacing)', () => {
    const cache = new BoundedMap<string, number | undefined>(2);
    cache.set('none', undefined);
    expect(cache.has('none')).toBe(true);
    expect(cache.get('none')).toBeUndefined();
    cache.set('x', 1);
    cache.get('none');
    cache.set('y', 2);
    expect([...cache.keys()]).toEqual(['none', 'y']);
  });
});
