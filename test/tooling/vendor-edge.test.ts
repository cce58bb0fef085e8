import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const tracked = (...paths: string[]) =>
  execFileSync('git', ['ls-files', ...paths], { encoding: 'utf8' })
    .split('\n')
    .filter((file) => file.endsWith('.ts'));
/** Lines as `wc -l` counts them. */
const linesOf = (file: string) => readFileSync(file, 'utf8').split('\n').length - 1;
const sum = (files: string[]) => files.reduce((total, file) => total + linesOf(file), 0);

/** Functions written inside another function: the handlers a sandbox's route tables hold, and their helpers. */
function nestedFunctions(files: string[]): { where: string; lines: number }[] {
  const found: { where: string; lines: number }[] = [];
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node, inside: boolean): void => {
      const isFunction = ts.isFunctionLike(node) && 'body' in node && Boolean(node.body);
      if (isFunction && inside) {
        const [start, end] = [node.getStart(source), node.getEnd()].map((at) =>
          source.getLineAndCharacterOfPosition(at),
        );
        found.push({ where: `${file}:${(start?.line ?? 0) + 1}`, lines: (end?.line ?? 0) - (start?.line ?? 0) + 1 });
      }
      ts.forEachChild(node, (child) => visit(child, inside || isFunction));
    };
    visit(source, false);
  }
  return found;
}

/** The bars of the vendor-edge redesign that the code's shape can show (docs/architecture.md, "Pacing"). */
describe('Tooling: the vendor edge keeps the shape of its redesign', () => {
  it('keeps the pacing within 300 lines and its schedule within 90: no pacer left, no AsyncLocalStorage', () => {
    expect(sum(tracked('shared/pacing'))).toBeLessThanOrEqual(300);
    expect(linesOf('shared/mapping/rate-schedule.ts')).toBeLessThanOrEqual(90);
    for (const gone of ['shared/ats/pacer.ts', 'shared/pipeline/report-turn.ts', 'shared/pipeline/pacing.ts'])
      expect(existsSync(gone), gone).toBe(false);
    // The pacing state travels with the message and the call, never in an async context.
    const stored = tracked('shared/pacing', 'shared/ats', 'shared/pipeline').filter((file) =>
      readFileSync(file, 'utf8').includes('AsyncLocalStorage'),
    );
    expect(stored).toEqual([]);
  });

  it('keeps every file of a vendor within 300 lines, and at most one file of shared/ over 400', () => {
    const vendorFiles = tracked('shared/ats').filter((file) => file.split('/').length === 4);
    expect(vendorFiles.length).toBeGreaterThan(20);
    expect(vendorFiles.filter((file) => linesOf(file) > 300)).toEqual([]);
    expect(tracked('shared').filter((file) => linesOf(file) > 400).length).toBeLessThanOrEqual(1);
  });

  it("names rate-limit headers only in the vendors' profiles", () => {
    const named = tracked('shared', 'functions', 'infra').filter(
      (file) => !file.endsWith('/profile.ts') && /x-rate-?limit-/i.test(readFileSync(file, 'utf8')),
    );
    expect(named).toEqual([]);
  });

  it('keeps every handler of the ATS sandboxes within 20 lines (the route tables that hold them aside)', () => {
    const handlers = nestedFunctions(tracked('infra/local/sandbox/ats'));
    expect(handlers.length).toBeGreaterThan(100);
    expect(handlers.filter((handler) => handler.lines > 20)).toEqual([]);
  });

  it('says how calls are paced in at most 40 lines of docs/architecture.md', () => {
    const page = readFileSync('docs/architecture.md', 'utf8');
    const section = page.slice(page.indexOf('### Pacing'), page.indexOf('\n### ', page.indexOf('### Pacing') + 1));
    expect(section).toContain('shared/pacing/');
    expect(section.trimEnd().split('\n').length).toBeLessThanOrEqual(40);
  });
});
