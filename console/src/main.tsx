import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, onSignedOut, session } from './api';
import { Field, Status } from './ui';
import { ConnectionsPage } from './pages/connections';
import { ConnectionPage } from './pages/connection';
import { NewConnectionPage } from './pages/new-connection';
import { CandidatePage } from './pages/candidate';
import { FailuresPage } from './pages/failures';
import { ConnectPage } from './pages/connect';

/** How the console signs in: the operator's key on one machine, Cognito's hosted sign-in (with PKCE) on AWS. */
type Config =
  | { mode: 'local' }
  | { mode: 'cognito'; domain: string; clientId: string; redirectUri: string; region?: string; userPoolId?: string };

const route = (): string[] => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);

function useRoute(): string[] {
  const [parts, setParts] = useState(route());
  useEffect(() => {
    const changed = () => setParts(route());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return parts;
}

function App(props: { config: Config }) {
  const parts = useRoute();
  const [signedIn, setSignedIn] = useState(Boolean(session.token()));
  onSignedOut.handler = () => {
    session.clear();
    setSignedIn(false);
  };
  // A customer's connect link needs no sign-in: its token is its credential, and it reaches one connection.
  // Keyed by the link: another link opened in the same tab starts from nothing of the one before.
  if (parts[0] === 'connect' && parts[1]) return <ConnectPage key={parts[1]} token={parts[1]} />;
  if (!signedIn) return <SignIn config={props.config} onSignedIn={() => setSignedIn(true)} />;
  return (
    <>
      <header>
        <nav aria-label="Console">
          <strong>Connector console</strong>
          <a href="#/" aria-current={parts.length === 0 ? 'page' : undefined}>
            Connections
          </a>
          <a href="#/failures" aria-current={parts[0] === 'failures' ? 'page' : undefined}>
            Failures
          </a>
          <button type="button" class="link" onClick={() => onSignedOut.handler?.()}>
            Sign out
          </button>
        </nav>
      </header>
      <main>{page(parts)}</main>
    </>
  );
}

function page(parts: string[]) {
  const [area, a, b] = parts;
  if (area === 'new') return <NewConnectionPage />;
  if (area === 'connections' && a) return <ConnectionPage id={a} key={a} />;
  if (area === 'candidates' && a && b) return <CandidatePage connectionId={a} applicationId={b} key={`${a}/${b}`} />;
  if (area === 'failures') return <FailuresPage />;
  return <ConnectionsPage />;
}

function SignIn(props: { config: Config; onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  if (props.config.mode === 'cognito') {
    const config = props.config;
    return (
      <main class="narrow">
        <h1>Connector console</h1>
        <p>Operators sign in with their account (multi-factor).</p>
        <button type="button" onClick={() => void cognitoSignIn(config)}>
          Sign in
        </button>
      </main>
    );
  }
  const submit = async (event: Event) => {
    event.preventDefault();
    session.set(key.trim());
    const answer = await api('GET', '/overview?limit=1');
    if (answer.status === 200) return props.onSignedIn();
    session.clear();
    setError(answer.status === 403 ? 'That key is not the operator key: npm start printed it' : answer.body.error);
  };
  return (
    <main class="narrow">
      <h1>Connector console</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <Field id="key" label="Operator key" error={error} hint="npm start prints it; it is in .local/stack.json">
          <input
            id="key"
            type="password"
            autocomplete="current-password"
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
            aria-invalid={Boolean(error)}
            aria-describedby="key-hint"
            required
          />
        </Field>
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}

const base64url = (bytes: ArrayBuffer | Uint8Array): string =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');

/** Cognito's hosted sign-in, authorization code with PKCE: the code comes back to this page, exchanged below. */
async function cognitoSignIn(config: Extract<Config, { mode: 'cognito' }>): Promise<void> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  sessionStorage.setItem('console.pkce', verifier);
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: config.clientId,
    redirect_uri: config.redirectUri,
    scope: 'openid email profile',
    code_challenge_method: 'S256',
    code_challenge: challenge,
  });
  location.assign(`${config.domain}/oauth2/authorize?${query}`);
}

async function finishCognitoSignIn(config: Extract<Config, { mode: 'cognito' }>): Promise<void> {
  const code = new URLSearchParams(location.search).get('code');
  const verifier = sessionStorage.getItem('console.pkce');
  if (!code || !verifier) return;
  sessionStorage.removeItem('console.pkce');
  const response = await fetch(`${config.domain}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: config.clientId,
      code,
      redirect_uri: config.redirectUri,
      code_verifier: verifier,
    }),
  });
  const tokens = (await response.json().catch(() => ({}))) as { access_token?: string };
  if (tokens.access_token) session.set(tokens.access_token);
  history.replaceState(null, '', location.pathname + location.hash);
}

async function start(): Promise<void> {
  const root = document.getElementById('app') as HTMLElement;
  let config: Config = { mode: 'local' };
  try {
    config = (await (await fetch('config.json')).json()) as Config;
  } catch {
    render(<Status text="The console's settings could not be read: reload the page" kind="error" />, root);
    return;
  }
  if (config.mode === 'cognito') await finishCognitoSignIn(config);
  render(<App config={config} />, root);
}

void start();
