import { ApiError } from '../api/client';
import type { Routes } from '../../../src/shared/api/contract';
import { Field, fieldError } from '../ui/kit';

/** A key's token limit as the keys routes take it (`tokenLimits` of POST/PATCH /api/keys). */
export type TokenLimit = NonNullable<Routes['PATCH /api/keys/{id}']['body']['tokenLimits']>[number];

/** One token limit row while it is edited: the scope split into its kind and name, the limit as typed. */
export interface LimitDraft {
  kind: 'global' | 'provider' | 'model';
  name: string;
  period: 'day' | 'month';
  limit: string;
}

export function toDraft(l: TokenLimit): LimitDraft {
  const colon = l.scope.indexOf(':');
  if (colon < 0) return { kind: 'global', name: '', period: l.period, limit: String(l.limit) };
  return { kind: l.scope.slice(0, colon) as LimitDraft['kind'], name: l.scope.slice(colon + 1), period: l.period, limit: String(l.limit) };
}

export function fromDraft(d: LimitDraft): TokenLimit {
  const scope = d.kind === 'global' ? 'global' : `${d.kind}:${d.name.trim()}`;
  return { scope, period: d.period, limit: Number(d.limit) };
}

/**
 * What the form can tell before asking the daemon, by the daemon's own field names (`tokenLimits.0.limit`),
 * so these and the daemon's 400s show in the same place.
 */
export function checkLimits(daily: string, drafts: LimitDraft[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (daily !== '' && !/^\d+$/.test(daily.trim())) out.dailyRequestLimit = 'A whole number of requests (0: unlimited), or empty for the default.';
  const seen = new Set<string>();
  drafts.forEach((d, i) => {
    if (!/^\d+$/.test(d.limit.trim())) out[`tokenLimits.${i}.limit`] = 'A whole number of tokens (0: no limit).';
    if (d.kind === 'provider' && !/^[A-Za-z0-9._:-]+$/.test(d.name.trim())) out[`tokenLimits.${i}.scope`] = 'The provider id, e.g. openai.';
    if (d.kind === 'model' && !/^[A-Za-z0-9._:-]+\/\S+$/.test(d.name.trim())) out[`tokenLimits.${i}.scope`] = 'The model as provider/model, e.g. openai/gpt-4o.';
    const id = `${fromDraft(d).scope} ${d.period}`;
    if (!out[`tokenLimits.${i}.scope`] && seen.has(id)) out[`tokenLimits.${i}.scope`] = `A second limit for ${fromDraft(d).scope} per ${d.period}.`;
    seen.add(id);
  });
  return out;
}

/**
 * The error to show under a field of the key forms: the form's own check first, then the daemon's 400 naming
 * that field (the list as a whole, `tokenLimits`, only when named exactly, not for one of its rows).
 */
export function keyFieldError(local: Record<string, string>, error: Error | undefined, field: string): string | undefined {
  if (local[field]) return local[field];
  if (field !== 'tokenLimits') return fieldError(error, field);
  return error instanceof ApiError && error.param?.replace(/^body\.?/, '') === field ? error.message : undefined;
}

/** Fields the key forms show errors under (anything else goes to the form's own error line). */
export const KEY_FIELDS = ['name', 'scopes', 'dailyRequestLimit', 'tokenLimits'];

/** A key's limits in a few words for the list. */
export function limitsText(daily: number | null | undefined, limits: TokenLimit[] | undefined): string {
  const parts = [daily == null ? 'requests: default' : daily === 0 ? 'requests: unlimited' : `${daily.toLocaleString('en-US')} requests/day`];
  for (const l of limits ?? []) if (l.limit > 0) parts.push(`${l.limit.toLocaleString('en-US')} tokens/${l.period}${l.scope === 'global' ? '' : ` (${l.scope})`}`);
  return parts.join(', ');
}

/**
 * The daily request limit and the token limits of a key, each field with its error beneath (`err` gives
 * the form's own check or the daemon's 400 for a field name).
 */
export function LimitsFields({
  daily,
  setDaily,
  drafts,
  setDrafts,
  err,
}: {
  daily: string;
  setDaily: (v: string) => void;
  drafts: LimitDraft[];
  setDrafts: (d: LimitDraft[]) => void;
  err: (field: string) => string | undefined;
}) {
  const edit = (i: number, patch: Partial<LimitDraft>) => setDrafts(drafts.map((d, j) => (j === i ? { ...d, ...patch } : d)));
  return (
    <fieldset className="limits">
      <legend>Limits</legend>
      <Field label="Daily request limit" error={err('dailyRequestLimit')} hint="empty: the default setting; 0: unlimited">
        <input inputMode="numeric" value={daily} onChange={(e) => setDaily(e.target.value)} />
      </Field>
      {drafts.map((d, i) => (
        <div className="row" key={i}>
          <Field label={`Token limit ${i + 1} counts`}>
            <select value={d.kind} onChange={(e) => edit(i, { kind: e.target.value as LimitDraft['kind'] })}>
              <option value="global">every request</option>
              <option value="provider">one provider</option>
              <option value="model">one model</option>
            </select>
          </Field>
          {d.kind === 'global' ? null : (
            <Field label={d.kind === 'provider' ? `Token limit ${i + 1} provider` : `Token limit ${i + 1} model`} error={err(`tokenLimits.${i}.scope`)}>
              <input value={d.name} placeholder={d.kind === 'provider' ? 'openai' : 'openai/gpt-4o'} onChange={(e) => edit(i, { name: e.target.value })} />
            </Field>
          )}
          <Field label={`Token limit ${i + 1} tokens`} error={err(`tokenLimits.${i}.limit`) ?? (d.kind === 'global' ? err(`tokenLimits.${i}.scope`) : undefined)}>
            <input inputMode="numeric" value={d.limit} onChange={(e) => edit(i, { limit: e.target.value })} />
          </Field>
          <Field label={`Token limit ${i + 1} per`}>
            <select value={d.period} onChange={(e) => edit(i, { period: e.target.value as LimitDraft['period'] })}>
              <option value="day">day (UTC)</option>
              <option value="month">month (UTC)</option>
            </select>
          </Field>
          <button type="button" aria-label={`Remove token limit ${i + 1}`} onClick={() => setDrafts(drafts.filter((_, j) => j !== i))}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => setDrafts([...drafts, { kind: 'global', name: '', period: 'day', limit: '' }])}>
        Add token limit
      </button>
      {err('tokenLimits') ? (
        <small className="field-error" role="alert">
          {err('tokenLimits')}
        </small>
      ) : null}
    </fieldset>
  );
}
