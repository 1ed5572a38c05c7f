import { useEffect, useState } from 'react';

/** The pages, in menu order; each is `/dashboard/<id>` (Home is also `/`). */
export const PAGES = [
  ['home', 'Home'],
  ['providers', 'Providers'],
  ['combos', 'Combos'],
  ['keys', 'Keys'],
  ['usage', 'Usage and cost'],
  ['pricing', 'Pricing'],
  ['requests', 'Requests'],
  ['playground', 'Playground'],
  ['memory', 'Memory'],
  ['guardrails', 'Guardrails'],
  ['compression', 'Compression'],
  ['cache', 'Cache'],
  ['webhooks', 'Webhooks'],
  ['resilience', 'Resilience'],
  ['cluster', 'Cluster'],
  ['insights', 'Insights'],
  ['settings', 'Settings'],
] as const;
export type PageId = (typeof PAGES)[number][0];

/** The current page and its sub-path (`/dashboard/requests/<traceId>` -> ['requests', '<traceId>']). */
export function parseLocation(pathname: string): { page: PageId; rest: string } {
  const m = /^\/dashboard\/([a-z-]+)\/?(.*)$/.exec(pathname);
  const page = (PAGES.find(([id]) => id === m?.[1])?.[0] ?? 'home') as PageId;
  return { page, rest: m ? decodeURIComponent(m[2] ?? '') : '' };
}

export function navigate(to: string): void {
  if (to === location.pathname + location.search) return;
  history.pushState(null, '', to);
  window.dispatchEvent(new PopStateEvent('popstate'));
  window.scrollTo(0, 0);
}

export function useLocation(): { page: PageId; rest: string; search: URLSearchParams } {
  const [loc, setLoc] = useState(() => location.pathname + location.search);
  useEffect(() => {
    const on = () => setLoc(location.pathname + location.search);
    window.addEventListener('popstate', on);
    return () => window.removeEventListener('popstate', on);
  }, []);
  const url = new URL(loc, location.origin);
  return { ...parseLocation(url.pathname), search: url.searchParams };
}
