/** The seven functions and how they are bundled; the stack and the benchmark both read this. */
export const FUNCTION_ENTRIES = {
  AtsWebhook: 'functions/ats-webhook/ats-webhook.handler.ts',
  InterviewWebhook: 'functions/interview-webhook/interview-webhook.handler.ts',
  InviteWorker: 'functions/invite-worker/invite-worker.handler.ts',
  WritebackWorker: 'functions/writeback-worker/writeback-worker.handler.ts',
  Reconciler: 'functions/reconciler/reconciler.handler.ts',
  OrderApi: 'functions/order-api/order-api.handler.ts',
  /** An operator's changes to one connection, IAM-authorized (shared/admin/connection-admin.ts). */
  AdminApi: 'functions/admin-api/admin-api.handler.ts',
} as const;

export type FunctionName = keyof typeof FUNCTION_ENTRIES;

/**
 * Execution environments per function, the same in the stack and on one machine: each worker's SQS event source
 * runs at most this many (its maximum concurrency), each webhook function is reserved this many.
 */
export const FUNCTION_CONCURRENCY = { worker: 5, webhook: 10 } as const;

/**
 * What a function's environment holds of its own, beside the stack's tables and queues: the same in the stack and on
 * one machine. Powertools reads the service from it, so every log line names its function.
 */
export const FUNCTION_ENVIRONMENT: Partial<Record<FunctionName, Record<string, string>>> = Object.fromEntries(
  Object.keys(FUNCTION_ENTRIES).map((name) => [name, { POWERTOOLS_SERVICE_NAME: name }]),
);

/**
 * Modules the Lambda Node.js 24 runtime provides. Leaving the SDK clients out keeps bundles under 100 KB and
 * cold init under 200 ms (npm run bench); bundled, they weigh 385-505 KB.
 */
export const LAMBDA_RUNTIME_MODULES = ['@aws-sdk/client-*'];

/** ESM needs `require` for the CommonJS dependencies esbuild inlines. */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);";

export const BUNDLE_SETTINGS = {
  minify: true,
  target: 'node24',
  mainFields: ['module', 'main'],
} as const;
