import { useQuery } from '@tanstack/react-query';
import { get } from '../../api.ts';
import { useAuth } from '../../auth.tsx';

interface Named {
  id: string;
  name: string;
  slug?: string;
}
interface NamedList {
  data: Named[];
}

/** The largest page the list APIs answer: one fetch names every key or workspace of a usual organisation. */
const ONE_PAGE = 1000;

/**
 * Names of API keys and workspaces, for pages that get ids from the API (analytics groups, log
 * details): one list fetch each, cached by react-query and shared by every page that names them.
 * Without the scope to list them, an id stays an id.
 */
export function useNames() {
  const { can, identity } = useAuth();
  const keys = useQuery({
    queryKey: ['api-keys', 'names'],
    queryFn: ({ signal }) => get<NamedList>('/v2/api-keys', { page_size: ONE_PAGE }, signal),
    enabled: can('api_keys.list'),
    staleTime: 60_000,
  });
  const workspaces = useQuery({
    queryKey: ['workspaces', 'names'],
    queryFn: ({ signal }) => get<NamedList>('/v2/workspaces', { page_size: ONE_PAGE }, signal),
    enabled: can('workspaces.list'),
    staleTime: 60_000,
  });
  const keyNames = new Map((keys.data?.data ?? []).map((k) => [k.id, k.name]));
  const workspaceNames = new Map((workspaces.data?.data ?? []).map((w) => [w.id, w.name || w.slug || w.id]));
  const own = identity.workspace;
  if (own && !workspaceNames.has(own.id) && own.slug) workspaceNames.set(own.id, own.slug);
  return {
    /** The key's name, or null when it is not known (not listed, or deleted). */
    keyName: (id: string | null | undefined) => (id ? (keyNames.get(id) ?? null) : null),
    workspaceName: (id: string | null | undefined) => (id ? (workspaceNames.get(id) ?? null) : null),
    keys: keys.data?.data,
  };
}

/** A name with its id beside it (for copying), or the id alone when no name is known. */
export function NamedId({ name, id }: { name: string | null; id: string }) {
  if (!name) return <code>{id}</code>;
  return (
    <span className="named-id">
      {name} <code className="muted">{id}</code>
    </span>
  );
}
