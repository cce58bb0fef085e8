import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const pages = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const scripts = Object.keys((JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: object }).scripts);

/** Each `code span` of a page, with where it is. */
function codeSpans(page: string): { where: string; text: string }[] {
  return readFileSync(page, 'utf8')
    .split('\n')
    .flatMap((line, index) =>
      [...line.matchAll(/`([^`]+)`/g)].map((match) => ({ where: `${page}:${index + 1}`, text: match[1] as string })),
    );
}

/** A repository path a page names: a file with an extension or a folder, under a top-level folder of the project. */
const ROOTS = /^(shared|functions|infra|test|config|docs|console|\.ci)\//;
/** Files a user makes (untracked), which a page tells them to make. */
const MADE_BY_THE_USER = new Set(['config/connections.json']);

describe('Tooling: the README and docs/ name only what exists', () => {
  it('the README is a map of at most 200 lines, and links every page of docs/', () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
    for (const page of pages.filter((p) => p.startsWith('docs/'))) expect(readme).toContain(`](${page})`);
  });

  it('every npm script a page names is in package.json', () => {
    const named = pages.flatMap((page) =>
      [...readFileSync(page, 'utf8').matchAll(/npm run ([\w-]+(?::[\w-]+)*)/g)].map((m) => ({
        page,
        script: m[1] as string,
      })),
    );
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((n) => !scripts.includes(n.script))).toEqual([]);
  });

  it('every file and folder of the project a page names exists', () => {
    const named = pages
      .flatMap(codeSpans)
      .map(({ where, text }) => ({ where, path: text.split(/[\s:(]/)[0] as string }))
      .filter(({ path }) => ROOTS.test(path) && !/[<>*{}…]/.test(path) && !MADE_BY_THE_USER.has(path));
    expect(named.length).toBeGreaterThan(50);
    expect(named.filter(({ path }) => !existsSync(path))).toEqual([]);
  });
});
