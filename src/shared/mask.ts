/** Masks a secret for display: enough to recognize it, never enough to use it. */
export function maskSecret(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length <= 12) return '****';
  return `${value.slice(0, 4)}...${value.slice(-4)}`;
}

/**
 * Replaces every occurrence of a credential value in `text` by its mask. Upstream error messages sometimes
 * echo the key they refused; such text must not be stored or shown whole.
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 8 && out.includes(s)) out = out.split(s).join(maskSecret(s)!);
  return out;
}
