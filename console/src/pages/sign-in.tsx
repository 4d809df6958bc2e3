import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { storeKey } from '../api.ts';
import { whoAmI } from '../auth.tsx';
import { Field, useApiForm } from '../ui/form.tsx';
import { ErrorBanner } from '../ui/feedback.tsx';

/**
 * Sign in with single sign-on (the organisation's OIDC login, ending in a browser session), or
 * with an API key (kept for this tab only), for local and all-in-one use.
 */
export default function SignIn() {
  const queryClient = useQueryClient();
  const [key, setKey] = useState('');
  const [email, setEmail] = useState('');
  const keyForm = useApiForm(async () => {
    const value = key.trim();
    if (!value) throw new Error('Enter an API key.');
    storeKey(value);
    const identity = await whoAmI();
    if (!identity) throw new Error('That key was not accepted: it is unknown, revoked or expired.');
    // Signed in: the app now routes /sign-in on to the page asked for (returnTo).
    queryClient.setQueryData(['identity'], identity);
  });
  const ssoStart = (event: React.FormEvent) => {
    event.preventDefault();
    const query = new URLSearchParams({ email: email.trim(), redirect_to: returnTo() });
    window.location.assign(`/v1/auth/sso/login?${query}`);
  };
  return (
    <main className="sign-in" id="main">
      <h1>Sign in to Switchyard</h1>
      <form onSubmit={ssoStart} aria-labelledby="sso-heading" className="card">
        <h2 id="sso-heading">With single sign-on</h2>
        <Field label="Work email" hint="You are sent to your organisation's identity provider.">
          <input
            type="email"
            required
            autoComplete="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </Field>
        <button type="submit">Continue with SSO</button>
      </form>
      <form onSubmit={(e) => void keyForm.onSubmit(e)} aria-labelledby="key-heading" className="card">
        <h2 id="key-heading">With an API key</h2>
        <Field
          label="API key"
          hint="An organisation admin key or a workspace key. Kept for this browser tab only."
        >
          <input
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={key}
            onChange={(e) => setKey(e.target.value)}
          />
        </Field>
        <ErrorBanner error={keyForm.error} />
        <button type="submit" disabled={keyForm.busy}>
          Sign in with key
        </button>
      </form>
    </main>
  );
}

/** Where to go after signing in: the page the visitor asked for (`?next=`), else the overview. */
export function returnTo(): string {
  const next = new URLSearchParams(window.location.search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}
