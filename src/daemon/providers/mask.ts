/** Masks a secret for display: enough to recognize it, never enough to use it. */
export function maskSecret(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length <= 12) return '****';
  return `${value.slice(0, 4)}...${value.slice(-4)}`;
}
