import { forward } from '../../infra/local/counting-proxy';
import { listen, readBody, type RunningServer } from '../../infra/local/sandbox/http-kit';

/**
 * SES as a new account meets it: in front of the local SES, a proxy that refuses (400 `MessageRejected`, as
 * the SES sandbox answers for an unverified recipient) every message to an address `refuse` picks, and passes
 * the rest through.
 */
export async function startRefusingSes(
  target: string,
  refuse: (body: string) => boolean,
): Promise<RunningServer & { stats: { refused: number } }> {
  const upstream = new URL(target);
  const state = { refused: 0 };
  const server = await listen((request, response) => {
    void (async () => {
      const body = await readBody(request);
      if (
        request.method === 'POST' &&
        request.url?.startsWith('/v2/email/outbound-emails') &&
        refuse(body.toString())
      ) {
        state.refused++;
        response.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'MessageRejected' });
        response.end(
          JSON.stringify({ message: 'Email address is not verified. The following identities failed the check.' }),
        );
        return;
      }
      forward(upstream, request, response, body);
    })().catch(() => response.destroy());
  }, 0);
  return Object.assign(server, { stats: state });
}
