import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, del, get, storeKey, storedKey } from './api.ts';

/** Who the console is signed in as: an API key, or a browser session (SSO or a JWT). */
export interface Identity {
  method: 'api_key' | 'session';
  /** What the header shows: the key's name, or the session's subject. */
  label: string;
  organisationId: string;
  /** The workspace the credential acts in; null for an organisation admin key. */
  workspace: { id: string; slug: string | null } | null;
  scopes: ReadonlySet<string>;
  expiresAt: string | null;
}

interface KeySelf {
  id: string;
  name: string;
  type: string;
  organisation_id: string;
  workspace: { id: string; slug: string | null } | null;
  scopes: string[];
  expires_at: string | null;
}
interface SessionSelf {
  auth_method: string;
  subject: string;
  organisation_id: string;
  workspace: { id: string | null; slug: string | null };
  scopes: string[];
  expires_at: string | null;
}

/** Asks the gateway who the stored key (or else the session cookie) is; null when neither signs in. */
export async function whoAmI(): Promise<Identity | null> {
  try {
    if (storedKey()) {
      const self = await get<KeySelf>('/v1/auth/key');
      return {
        method: 'api_key',
        label: self.name,
        organisationId: self.organisation_id,
        workspace: self.workspace,
        scopes: new Set(self.scopes),
        expiresAt: self.expires_at,
      };
    }
    const self = await get<SessionSelf>('/v1/auth/self');
    return {
      method: 'session',
      label: self.subject,
      organisationId: self.organisation_id,
      workspace: self.workspace.id ? { id: self.workspace.id, slug: self.workspace.slug } : null,
      scopes: new Set(self.scopes),
      expiresAt: self.expires_at,
    };
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
      if (storedKey()) storeKey(null);
      return null;
    }
    throw err;
  }
}

interface AuthState {
  identity: Identity;
  /** True when the signed-in credential holds every one of these scopes. */
  can: (...scopes: string[]) => boolean;
  signOut: () => Promise<void>;
  /** The workspace pages act in: the credential's own, or the one an organisation admin picked. */
  workspaceId: string | null;
  setWorkspaceId: (id: string | null) => void;
}

const AuthContext = createContext<AuthState | null>(null);
const WORKSPACE_STORAGE = 'switchyard.console.workspace';

export function AuthProvider({ identity, children }: { identity: Identity; children: ReactNode }) {
  const queryClient = useQueryClient();
  const [picked, setPicked] = useState<string | null>(() => sessionStorage.getItem(WORKSPACE_STORAGE));
  const setWorkspaceId = useCallback(
    (id: string | null) => {
      if (id) sessionStorage.setItem(WORKSPACE_STORAGE, id);
      else sessionStorage.removeItem(WORKSPACE_STORAGE);
      setPicked(id);
      void queryClient.invalidateQueries();
    },
    [queryClient],
  );
  const signOut = useCallback(async () => {
    if (identity.method === 'session') await del('/v1/auth/sessions/current').catch(() => undefined);
    storeKey(null);
    sessionStorage.removeItem(WORKSPACE_STORAGE);
    queryClient.clear();
    window.location.assign('/sign-in');
  }, [identity.method, queryClient]);
  const value = useMemo<AuthState>(
    () => ({
      identity,
      can: (...scopes) => scopes.every((s) => identity.scopes.has(s)),
      signOut,
      workspaceId: identity.workspace?.id ?? picked,
      setWorkspaceId,
    }),
    [identity, picked, signOut, setWorkspaceId],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error('useAuth outside AuthProvider');
  return auth;
}

/** Resolves the identity once on load; `refresh` after signing in. */
export function useIdentity() {
  const query = useQuery({ queryKey: ['identity'], queryFn: whoAmI, staleTime: Infinity, retry: false });
  const [, force] = useState(0);
  useEffect(() => {
    const onStorage = () => force((n) => n + 1);
    window.addEventListener('storage', onStorage);
    return () => window.removeEventListener('storage', onStorage);
  }, []);
  return query;
}
