import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureStack, QUOTAS } from '../helpers/stack-quotas';

describe("Stack: one deployment for a vendor's whole customer base", () => {
  let outdir: string;
  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), 'connector-scale-'));
  });
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  // Each stack synthesized once (10,000 connections are validated and written as the deploy's file).
  const measured = new Map<number, ReturnType<typeof measureStack>>();
  const figuresFor = (count: number) => {
    if (!measured.has(count)) measured.set(count, measureStack(count, join(outdir, String(count))));
    return measured.get(count) as ReturnType<typeof measureStack>;
  };

  it.each([1, 10_000])('stays within every CloudFormation and IAM quota with %i connections', (count) => {
    const figures = figuresFor(count);
    expect(figures.outputs).toBeLessThanOrEqual(QUOTAS.outputs);
    expect(figures.resources).toBeLessThanOrEqual(QUOTAS.resources);
    expect(figures.templateBytes).toBeLessThanOrEqual(QUOTAS.templateBytes);
    expect(figures.largestRoleInlinePolicyChars).toBeLessThanOrEqual(QUOTAS.roleInlinePolicyChars);
    expect(figures.largestManagedPolicyChars).toBeLessThanOrEqual(QUOTAS.managedPolicyChars);
  });

  it('grows by nothing per connection: the template for 10,000 is the template for 1', () => {
    const small = figuresFor(1);
    const large = figuresFor(10_000);
    expect(large.resources).toBe(small.resources);
    expect(large.outputs).toBe(small.outputs);
    // The connections live in the table: the imported file's hash is what differs, once the stacks' names (Scale1,
    // Scale10000, in the distribution's origin ids and the sign-in domain among others) are set aside.
    expect(Math.abs(large.templateBytesWithoutName - small.templateBytesWithoutName)).toBeLessThan(100);
    expect(large.largestRoleInlinePolicyChars).toBe(small.largestRoleInlinePolicyChars);
  });
});
