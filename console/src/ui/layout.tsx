import { Suspense, useEffect, useRef, useState } from 'react';
import { NavLink, Outlet, useLocation } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { get } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { pages, type PageEntry } from '../pages/registry.ts';
import { Loading } from './feedback.tsx';

/** The pages the signed-in credential may open: those whose API it holds a scope for. */
export function usePermittedPages(): readonly PageEntry[] {
  const { identity } = useAuth();
  return pages.filter((p) => p.anyOf.some((s) => identity.scopes.has(s)));
}

interface WorkspaceList {
  data: { id: string; slug: string; name: string }[];
}

/** An organisation admin key acts in no workspace of its own: it picks the one workspace pages show. */
function WorkspacePicker() {
  const { identity, workspaceId, setWorkspaceId, can } = useAuth();
  const list = useQuery({
    queryKey: ['workspaces', 'picker'],
    queryFn: () => get<WorkspaceList>('/v2/workspaces', { page_size: 100 }),
    enabled: identity.workspace === null && can('workspaces.list'),
  });
  useEffect(() => {
    if (!workspaceId && list.data?.data[0]) setWorkspaceId(list.data.data[0].id);
  }, [workspaceId, list.data, setWorkspaceId]);
  if (identity.workspace) {
    return (
      <span className="workspace-name">Workspace: {identity.workspace.slug ?? identity.workspace.id}</span>
    );
  }
  if (!list.data) return null;
  return (
    <label className="workspace-picker">
      Workspace{' '}
      <select value={workspaceId ?? ''} onChange={(e) => setWorkspaceId(e.target.value || null)}>
        {list.data.data.map((w) => (
          <option key={w.id} value={w.id}>
            {w.name || w.slug}
          </option>
        ))}
      </select>
    </label>
  );
}

export function Layout() {
  const { identity, signOut } = useAuth();
  const permitted = usePermittedPages();
  const [menuOpen, setMenuOpen] = useState(false);
  const location = useLocation();
  const main = useRef<HTMLElement>(null);
  // A new page: move focus to its heading.
  useEffect(() => {
    requestAnimationFrame(() => main.current?.querySelector<HTMLElement>('h1')?.focus());
  }, [location.pathname]);
  const sections = [...new Set(permitted.map((p) => p.section))];
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <button
          type="button"
          className="menu-button"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen((o) => !o)}
        >
          Menu
        </button>
        <span className="brand">Switchyard</span>
        <WorkspacePicker />
        <span className="identity" title={`organisation ${identity.organisationId}`}>
          {identity.method === 'api_key' ? 'Key' : 'Signed in as'} {identity.label}
        </span>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <nav id="nav" className={`nav${menuOpen ? ' open' : ''}`} aria-label="Console">
        {sections.map((section) => (
          <div key={section} className="nav-section">
            <h2>{section}</h2>
            <ul>
              {permitted
                .filter((p) => p.section === section)
                .map((p) => (
                  <li key={p.path}>
                    <NavLink to={p.path} end={p.path === '/'} onClick={() => setMenuOpen(false)}>
                      {p.title}
                    </NavLink>
                  </li>
                ))}
            </ul>
          </div>
        ))}
      </nav>
      <main id="main" ref={main} className="main">
        <Suspense fallback={<Loading />}>
          <Outlet />
        </Suspense>
      </main>
    </div>
  );
}
