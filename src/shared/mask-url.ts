/**
 * A connection URL (`postgres://user:secret@host/db`, `redis://:secret@host:6379`) as it may be shown in
 * replies, logs and errors: the password becomes `****`, everything else stays readable. Query parameters
 * that carry a password (`password=`, `sslpassword=`) are masked too. A string that is not a URL is masked
 * whole after its scheme, since it cannot be told which part is secret.
 */
export function maskConnectionUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(raw)?.[0];
    return scheme ? `${scheme}****` : '****';
  }
  if (url.password) url.password = '****';
  for (const name of [...url.searchParams.keys()]) {
    if (/pass(word)?$/i.test(name)) url.searchParams.set(name, '****');
  }
  return url.toString().replace(/%2A%2A%2A%2A/g, '****');
}

/** Masks every connection URL found in a text (an error message quoting the URL it failed to reach). */
export function maskUrlsIn(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>]+/gi, (m) => (/:\/\/[^/@\s]*:[^/@\s]*@/.test(m) ? maskConnectionUrl(m) : m));
}
