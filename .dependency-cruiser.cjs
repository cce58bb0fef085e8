/**
 * The boundaries of the design (docs/architecture.md): `functions/` are entry points, `shared/` is shared by
 * them and imports nothing above it, the pipeline decides without knowing AWS or a concrete ATS; inside `infra/`,
 * the AWS app (`aws/`), the one-machine runtime (`local/`) and the operator CLIs (`cli/`).
 */
module.exports = {
  forbidden: [
    {
      name: 'shared-not-to-functions-or-infra',
      comment: 'shared/ is imported by functions/ and infra/, never the other way round.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^(functions|infra)/' },
    },
    {
      name: 'pipeline-without-aws-sdk',
      comment: 'Use cases speak to ports; only shared/mapping and shared/queue (and the SES mailer) speak AWS.',
      severity: 'error',
      from: { path: '^shared/pipeline/' },
      to: { path: '@aws-sdk/' },
    },
    {
      name: 'pipeline-without-concrete-ats',
      comment: 'Use cases see the AtsAdapter port, not Greenhouse or Ashby.',
      severity: 'error',
      from: { path: '^shared/pipeline/' },
      to: { path: '^shared/ats/(greenhouse|ashby|lever|workable)/' },
    },
    {
      name: 'functions-not-to-infra',
      comment: 'Lambda bundles must not pull in the CDK or the local emulators.',
      severity: 'error',
      from: { path: '^functions/' },
      to: { path: '^infra/' },
    },
    {
      name: 'adapters-not-to-pipeline',
      comment: 'The ATS adapters and the interview-service client serve the pipeline; they never import it.',
      severity: 'error',
      from: { path: '^shared/(ats|interview-service)/' },
      to: { path: '^shared/pipeline/' },
    },
    {
      name: 'pipeline-ports-import-ports',
      comment: "The pipeline's ports name domain types and the other ports only, never an implementation.",
      severity: 'error',
      from: { path: '^shared/pipeline/ports\\.ts$' },
      to: { pathNot: '^shared/(config/|pipeline/records\\.ts$|ats/port\\.ts$|interview-service/port\\.ts$)' },
    },
    {
      name: 'aws-app-not-to-local-or-cli',
      comment: 'infra/aws/ is what cdk deploy runs: it never imports the one-machine runtime, a sandbox or a CLI.',
      severity: 'error',
      from: { path: '^infra/aws/' },
      to: { path: '^infra/(local|cli)/' },
    },
    {
      name: 'cli-not-to-local',
      comment: 'The operator CLIs run against AWS as well as the local stack: they never import the local runtime.',
      severity: 'error',
      from: { path: '^infra/cli/' },
      to: { path: '^infra/local/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '(^|/)(node_modules|cdk\\.out|coverage)/' },
  },
};
