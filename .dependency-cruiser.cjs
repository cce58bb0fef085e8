/**
 * The boundaries of the design (docs/architecture.md): `functions/` are entry points, `shared/` is shared by
 * them and imports nothing above it, the pipeline decides without knowing AWS or a concrete ATS; inside `infra/`,
 * the AWS app (`aws/`), the one-machine runtime (`local/`) and the operator CLIs (`cli/`).
 */
/** A path `from` must never import, with the reason shown when it does. */
const never = (name, from, to, comment) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from },
  to: typeof to === 'string' ? { path: to } : to,
});

module.exports = {
  forbidden: [
    never(
      'shared-not-to-functions-or-infra',
      '^shared/',
      '^(functions|infra)/',
      'shared/ is imported by functions/ and infra/, never the other way round.',
    ),
    never(
      'pipeline-without-aws-sdk',
      '^shared/pipeline/',
      '@aws-sdk/',
      'Use cases speak to ports; only shared/mapping and shared/queue (and the SES mailer) speak AWS.',
    ),
    never(
      'pipeline-without-concrete-ats',
      '^shared/pipeline/',
      '^shared/ats/(greenhouse|ashby|lever|workable)/',
      'Use cases see the AtsAdapter port, not Greenhouse or Ashby.',
    ),
    never(
      'functions-not-to-infra',
      '^functions/',
      '^infra/',
      'Lambda bundles must not pull in the CDK or the local emulators.',
    ),
    never(
      'adapters-not-to-pipeline',
      '^shared/(ats|interview-service)/',
      '^shared/pipeline/',
      'The ATS adapters and the interview-service client serve the pipeline; they never import it.',
    ),
    never(
      'pipeline-ports-import-ports',
      '^shared/pipeline/ports\\.ts$',
      { pathNot: '^shared/(config/|pipeline/(records|claims)\\.ts$|ats/port\\.ts$|interview-service/port\\.ts$)' },
      "The pipeline's ports name domain types and the other ports only, never an implementation.",
    ),
    never(
      'aws-app-not-to-local-or-cli',
      '^infra/aws/',
      '^infra/(local|cli)/',
      'infra/aws/ is what cdk deploy runs: it never imports the one-machine runtime, a sandbox or a CLI.',
    ),
    never(
      'cli-not-to-local',
      '^infra/cli/',
      '^infra/local/',
      'The operator CLIs run against AWS as well as the local stack: they never import the local runtime.',
    ),
    never(
      'steps-without-vendor-edge',
      '^shared/pipeline/steps\\.ts$',
      '^shared/(ats|pacing)/',
      "The pipeline's crash-safety primitive knows nothing of an ATS or of pacing.",
    ),
    {
      name: 'webhooks-without-pacing-or-service-client',
      comment:
        'A webhook authenticates, validates, records and enqueues: it reaches neither the pacing nor the ' +
        "interview service's client, directly or through what it imports.",
      severity: 'error',
      from: { path: '^functions/(ats|interview)-webhook/' },
      to: { path: '^shared/(pacing/|interview-service/client\\.ts$)', reachable: true },
    },
    {
      name: 'pipeline-functions-without-setup',
      comment:
        "The doctor's part of an adapter (<kind>.setup.ts, shared/ats/setup-adapter.ts) serves the doctor, the admin " +
        'API and the console: the functions that run the pipeline never carry it, directly or through what they import.',
      severity: 'error',
      from: { path: '^functions/', pathNot: '^functions/admin-api/' },
      to: { path: '^shared/(ats/setup-adapter\\.ts$|ats/[a-z]+/[a-z]+\\.setup\\.ts$|doctor/)', reachable: true },
    },
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '(^|/)(node_modules|cdk\\.out|coverage)/' },
  },
};
