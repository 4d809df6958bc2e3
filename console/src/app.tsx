import { Suspense } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { AuthProvider, useIdentity } from './auth.tsx';
import { pages } from './pages/registry.ts';
import SignIn, { returnTo } from './pages/sign-in.tsx';
import { ErrorBanner, Loading } from './ui/feedback.tsx';
import { Layout, usePermittedPages } from './ui/layout.tsx';
import { Page } from './ui/page.tsx';

function Forbidden() {
  return (
    <Page title="Not available">
      <p>The credential you signed in with holds none of the scopes this page needs.</p>
    </Page>
  );
}

function NotFound() {
  return (
    <Page title="Page not found">
      <p>There is no console page at this address.</p>
    </Page>
  );
}

function Guarded({ path }: { path: string }) {
  const permitted = usePermittedPages();
  const entry = permitted.find((p) => p.path === path);
  if (!entry) return <Forbidden />;
  const Component = entry.component;
  return <Component />;
}

export function App() {
  const identity = useIdentity();
  const location = useLocation();
  if (identity.isPending) return <Loading what="Signing in" />;
  if (identity.error) return <ErrorBanner error={identity.error} />;
  if (!identity.data) {
    if (location.pathname === '/sign-in') return <SignIn />;
    const next =
      location.pathname === '/' ? '' : `?next=${encodeURIComponent(location.pathname + location.search)}`;
    return <Navigate to={`/sign-in${next}`} replace />;
  }
  return (
    <AuthProvider identity={identity.data}>
      <Suspense fallback={<Loading />}>
        <Routes>
          <Route path="/sign-in" element={<Navigate to={returnTo()} replace />} />
          <Route element={<Layout />}>
            {pages.map((p) => (
              <Route
                key={p.path}
                path={p.path === '/' ? undefined : `${p.path}/*`}
                index={p.path === '/'}
                element={<Guarded path={p.path} />}
              />
            ))}
            <Route path="*" element={<NotFound />} />
          </Route>
        </Routes>
      </Suspense>
    </AuthProvider>
  );
}
