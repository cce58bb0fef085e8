import { afterEach, expect } from 'vitest';
import { takeUndocumented } from '../helpers/documented-calls';

// Every ATS call a stubbed fetch answered in this test is one the vendor documents (route, query, body fields).
afterEach(() => {
  expect(takeUndocumented(), 'ATS calls no vendor documents').toEqual([]);
});
