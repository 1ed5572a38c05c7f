/**
 * The served-model check (issue 30 item 6): an upstream reply names the model that answered. A dated
 * snapshot of the model asked for (`gpt-4o` answered by `gpt-4o-2024-08-06`, `claude-sonnet-4-5` by
 * `claude-sonnet-4-5-20250929`) is the same model; anything else is a mismatch worth an event.
 */

// Snapshot and alias suffixes: -2024-08-06, -20250929, @20250929 (Vertex), -0613 / -0125 (OpenAI's MMDD),
// -001 (Gemini's version), -latest. Stripped repeatedly from the end (`-latest` after a date is not a thing,
// but `-2024-08-06` after `-mini` is).
const SUFFIX_RE = /(?:[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|\d{3})|-latest)$/;

/** A model id without its provider path (`openai/gpt-4o`, `models/gemini-2.5-pro`) or snapshot suffix, lower-cased. */
export function modelBase(id: string): string {
  let base = id.trim().toLowerCase();
  const slash = base.lastIndexOf('/');
  if (slash >= 0) base = base.slice(slash + 1);
  // A `:tag` (OpenRouter's `:free`, Ollama's `:latest`) says how it is served, not which model.
  const colon = base.indexOf(':');
  if (colon > 0) base = base.slice(0, colon);
  for (let i = 0; i < 3; i++) {
    const next = base.replace(SUFFIX_RE, '');
    if (next === base || next === '') break;
    base = next;
  }
  return base;
}

/**
 * Whether the model an upstream says it served is the one asked for: equal ids, or the same model up to a
 * dated snapshot, a version suffix or a provider path. An empty or missing served name says nothing: same.
 */
export function sameModel(requested: string, served: string | undefined | null): boolean {
  if (!served || served === requested) return true;
  return modelBase(requested) === modelBase(served);
}
