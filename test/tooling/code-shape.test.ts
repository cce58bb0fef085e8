import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { functionShapes } from './function-shape';

const tracked = (...paths: string[]) =>
  execFileSync('git', ['ls-files', ...paths], { encoding: 'utf8' })
    .split('\n')
    .filter((file) => file.endsWith('.ts'));

describe('Tooling: the code keeps the shape the design asks for', () => {
  it('has no function over 60 lines or 4 parameters in shared/ and functions/', () => {
    const shapes = functionShapes(tracked('shared', 'functions'));
    expect(shapes.length).toBeGreaterThan(300);
    const over = shapes
      .filter((s) => s.lines > 60 || s.parameters > 4)
      .map((s) => `${s.file}:${s.line} ${s.name} (${s.lines} lines, ${s.parameters} parameters)`);
    expect(over).toEqual([]);
  });

  it('keeps every repository of the mapping tables under 300 lines', () => {
    const repositories = tracked('shared/mapping').filter((file) => !file.endsWith('index.ts'));
    expect(repositories.length).toBeGreaterThan(8);
    const long = repositories
      .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter((r) => r.lines > 300);
    expect(long).toEqual([]);
  });

  it('reads errors only through the guards of shared/errors.ts, never by a cast', () => {
    const cast = /\(\s*\w+\s+as\s+(Error|\w*Error|\{[^}]*\b(code|message|name|retryable|status|mayHaveSucceeded)\b)/;
    const casts = tracked('shared', 'functions', 'infra')
      .filter((file) => file !== 'shared/errors.ts')
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line, index) => ({ where: `${file}:${index + 1}`, line }))
          .filter(({ line }) => cast.test(line)),
      )
      .map(({ where, line }) => `${where} ${line.trim()}`);
    expect(casts).toEqual([]);
  });
});
