import { useState } from 'preact/hooks';
import { ApiError, type Identity, saveToken, whoAmI } from '../api.ts';

/** The token stays in this tab's sessionStorage only, and is sent as a bearer token. */
export function SignIn({ onSignedIn }: { onSignedIn(identity: Identity): void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: SubmitEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const identity = await whoAmI(token.trim());
      saveToken(token.trim());
      onSignedIn(identity);
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401 ? 'That token is not valid.' : `Cannot sign in: ${err}`,
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in">
      <h1>Sluice</h1>
      <p>Sign in with the admin token (every tenant) or a tenant's API key (its own destinations).</p>
      <form onSubmit={submit}>
        <label for="token">Token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          required
          autofocus
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          aria-describedby={error ? 'sign-in-error' : 'token-hint'}
        />
        <p id="token-hint" class="hint">
          On a single box the admin token is in <code>data/admin-token</code>.
        </p>
        {error && (
          <p id="sign-in-error" class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
