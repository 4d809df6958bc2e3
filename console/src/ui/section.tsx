import type { ReactNode } from 'react';

/** A titled part of a page (a region named by its heading), with optional actions beside the title. */
export function Section({
  title,
  actions,
  children,
  id,
  card = true,
}: {
  title: string;
  actions?: ReactNode;
  children: ReactNode;
  /** The heading's id stem; defaults to the title in kebab-case. */
  id?: string;
  /** A bordered card (the default), or a plain band of the page. */
  card?: boolean;
}) {
  const headingId = `${id ?? title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-heading`;
  return (
    <section className={card ? 'section card' : 'section section-plain'} aria-labelledby={headingId}>
      <div className="section-head">
        <h2 id={headingId}>{title}</h2>
        {actions ? <div className="row">{actions}</div> : null}
      </div>
      {children}
    </section>
  );
}
