import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const testRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

/** A fresh copy of a JSON fixture under test/, so a test may mutate it freely. */
export function loadFixture<T = Record<string, unknown>>(path: string): T {
  return JSON.parse(readFileSync(join(testRoot, path), 'utf8')) as T;
}

export function loadRawFixture(path: string): Buffer {
  return readFileSync(join(testRoot, path));
}
