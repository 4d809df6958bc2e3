import type { ReactNode } from 'react';

/** A page: its heading (focused on navigation, for screen readers), its actions, its content. */
export function Page({
  title,
  actions,
  children,
}: {
  title: string;
  actions?: ReactNode;
  children: ReactNode;
}) {
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title" tabIndex={-1}>
          {title}
        </h1>
        {actions ? <div className="page-actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

/** A page this console does not have yet. */
export function NotBuilt({ title }: { title: string }) {
  return (
    <Page title={title}>
      <div className="banner" role="status">
        This page is not built yet; the API it would use is documented in /openapi.json.
      </div>
    </Page>
  );
}
