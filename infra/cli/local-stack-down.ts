/** The socket errors that say nothing listens where the stack's file points (a stack stopped, or another run's). */
const DOWN = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH']);

const codeOf = (error: unknown): string | undefined => {
  const { code, cause } = (error ?? {}) as { code?: unknown; cause?: unknown };
  if (typeof code === 'string') return code;
  return cause === undefined ? undefined : codeOf(cause);
};

/**
 * What an operator tool says when the local stack its file names does not answer: `fetch failed` alone says
 * nothing of why. Undefined for any other error.
 */
export function localStackDown(error: unknown, stackFile: string): string | undefined {
  const code = codeOf(error);
  if (!code || !DOWN.has(code)) return undefined;
  return (
    `the local stack ${stackFile} names is not running (${code}): start it with npm start ` +
    '(npm start -- --once stops when its demo ends), or pass --aws for the deployed stack'
  );
}
