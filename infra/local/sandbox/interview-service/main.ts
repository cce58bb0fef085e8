import { SANDBOX_DEFAULTS, startInterviewServiceSandbox } from './server';

/** `npm run sandbox`: the interview-service sandbox alone, until Ctrl-C. */
const port = Number(process.env.INTERVIEW_SANDBOX_PORT ?? SANDBOX_DEFAULTS.port);
const sandbox = await startInterviewServiceSandbox({
  port,
  apiKey: process.env.INTERVIEW_SANDBOX_API_KEY ?? SANDBOX_DEFAULTS.apiKey,
  limitedApiKey: process.env.INTERVIEW_SANDBOX_LIMITED_KEY ?? SANDBOX_DEFAULTS.limitedApiKey,
});

console.log(`Interview-service sandbox listening on ${sandbox.url}`);
console.log(`  full API key:    ${sandbox.apiKey}`);
console.log(`  limited API key: ${sandbox.limitedApiKey} (no permission for reports)`);
console.log(`  try: curl -H 'x-api-key: ${sandbox.apiKey}' ${sandbox.url}/interview/reports`);
console.log(
  `  control: ${sandbox.url}/_sandbox/state, ` +
    'POST /_sandbox/webhooks, /_sandbox/complete-interview, /_sandbox/faults, /_sandbox/reports, ' +
    '/_sandbox/report-file; report PDFs at /files/reports/<report_id>.pdf',
);

const shutdown = (): void => {
  void sandbox.close().then(() => process.exit(0));
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
