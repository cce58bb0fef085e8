/**
 * The boundaries of the design (README "Architecture"): `functions/` are entry points, `shared/` is shared by
 * them and imports nothing above it, the pipeline decides without knowing AWS or a concrete ATS.
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
